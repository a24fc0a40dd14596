"""StrategyQA's Hugging Face layout: ``id`` for ``qid``, and an answer stored as the text
``"true"`` / ``"false"`` read as the boolean.

Read from the dataset cards of :data:`COPIES` (docs/getting-the-data.md).
"""

from __future__ import annotations

from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, Row, always, renamed

#: Hub copies whose layout was read from their dataset cards
COPIES = ("havens2/strategyQA_train", "wics/strategy-qa")


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = renamed(row, {"id": "qid"})
    answer = record.get("answer")
    if isinstance(answer, str) and answer.strip().lower() in ("true", "false"):
        record["answer"] = answer.strip().lower() == "true"  # copies that store it as text
    return record


LAYOUT = HubLayout(".json", "train", to_official, always)
