"""Fermi's Hugging Face layout: a copy keeps the official records (``test`` split by default);
no copy's dataset card has been read yet (docs/getting-the-data.md)."""

from __future__ import annotations

from hopscore.benchmarks.hub_layout import HubLayout, always, passthrough

#: Hub copies whose layout was read from their dataset cards
COPIES: tuple[str, ...] = ()

LAYOUT = HubLayout(".json", "test", passthrough, always)
