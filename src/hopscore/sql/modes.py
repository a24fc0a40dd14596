"""The names of the comparison modes (kept apart so that reading them imports nothing heavy)."""

MODES = ("reference", "strict", "rows", "spider", "bird")
