"""HybridQA's Hugging Face layout: ``answer_text`` and ``answer_node`` for ``answer-text`` and
``answer-node``; a copy that inlines the whole table has it dropped (not gold, and large).

Read from the dataset card of :data:`COPIES` (docs/getting-the-data.md).
"""

from __future__ import annotations

from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, Row, renamed

#: Hub copies whose layout was read from their dataset cards
COPIES = ("wenhu/hybrid_qa",)


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = renamed(row, {"answer_text": "answer-text", "answer_node": "answer-node"})
    record.pop("table", None)  # wenhu/hybrid_qa inlines the whole table: not gold, and large
    return record


def is_hub_row(row: Row) -> bool:
    return "answer_text" in row


LAYOUT = HubLayout(".json", "validation", to_official, is_hub_row)
