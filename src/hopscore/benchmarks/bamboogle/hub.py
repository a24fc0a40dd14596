"""Bamboogle's Hugging Face layout: the copy keeps the official records (``test`` split).

Read from the dataset card of :data:`COPIES` (docs/getting-the-data.md).
"""

from __future__ import annotations

from hopscore.benchmarks.hub_layout import HubLayout, always, passthrough

#: Hub copies whose layout was read from their dataset cards
COPIES = ("chiayewken/bamboogle",)

LAYOUT = HubLayout(".json", "test", passthrough, always)
