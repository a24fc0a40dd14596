"""FRAMES's Hugging Face layout: google/frames-benchmark holds the official TSV columns
(``Unnamed: 0`` in the revisions that kept the index column, ``Prompt``, ``Answer``,
``wikipedia_link_*``, ``reasoning_types``, ``wiki_links``; ``test`` split), which the gold
reader takes as they are; rows without an index are numbered by position (``id``). Pin the
revision (``hf:google/frames-benchmark@REV``): the column sets differ between revisions.

A JSON or JSON Lines file is always read as FRAMES's own layout (never converted).
"""

from __future__ import annotations

from hopscore.benchmarks.hub_layout import HubLayout, Row, passthrough

#: Hub copies whose layout was read from their dataset cards
COPIES = ("google/frames-benchmark",)


def never(row: Row) -> bool:
    """JSON exports of the Hub copy are already the layout the gold reader takes."""
    return False


LAYOUT = HubLayout(".jsonl", "test", passthrough, never)
