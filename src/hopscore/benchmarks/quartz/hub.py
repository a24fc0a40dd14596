"""QuaRTz's Hugging Face layout: ``question`` is the stem and ``choices: {text: [...],
label: [...]}`` beside it, where the official record nests both in ``question``.

Read from the dataset card of :data:`COPIES` (docs/getting-the-data.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, LayoutError, Row, pairs

#: Hub copies whose layout was read from their dataset cards
COPIES = ("allenai/quartz",)


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    """allenai/quartz: ``question`` is the stem and ``choices: {text: [...], label: [...]}``."""
    question = row.get("question")
    if isinstance(question, Mapping):
        return dict(row)
    record = dict(row)
    choices = pairs(record.pop("choices", None), "label", "text", where, index, "choices")
    if not isinstance(choices, list):
        raise LayoutError(where, index, "choices", "expected {label: [...], text: [...]}")
    record["question"] = {
        "stem": question,
        "choices": [{"label": label, "text": text} for label, text in choices],
    }
    return record


def is_hub_row(row: Row) -> bool:
    return isinstance(row.get("question"), str) and "choices" in row


LAYOUT = HubLayout(".jsonl", "validation", to_official, is_hub_row)
