"""HotpotQA's Hugging Face layout: ``id`` for ``_id``, ``supporting_facts: {title: [...],
sent_id: [...]}`` and ``context: {title: [...], sentences: [[...]]}`` as structs of lists.

Read from the dataset card of :data:`COPIES` (docs/getting-the-data.md lists it with its
licence and differences); 2WikiMultihopQA's layout builds on this one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, LayoutError, Row, first_key, pairs, renamed

#: Hub copies whose layout was read from their dataset cards
COPIES = ("hotpotqa/hotpot_qa",)


def context_pairs(value: Any, where: str, index: int) -> Any:
    """``context``: ``{title: [...], sentences|content: [[...]]}`` -> ``[[title, [...]], ...]``."""
    if isinstance(value, Mapping):
        key = first_key(value, ("sentences", "content"))
        if key is None:
            raise LayoutError(where, index, "context", "expected 'title' and 'sentences' lists")
        return pairs(value, "title", key, where, index, "context")
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        key = first_key(value[0], ("sentences", "content"))
        return pairs(value, "title", key or "sentences", where, index, "context")
    return value


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = renamed(row, {"id": "_id"})
    if "supporting_facts" in record:
        record["supporting_facts"] = pairs(
            record["supporting_facts"], "title", "sent_id", where, index, "supporting_facts"
        )
    if "context" in record:
        record["context"] = context_pairs(record["context"], where, index)
    return record


def is_hub_row(row: Row) -> bool:
    return (
        ("_id" not in row and "id" in row)
        or isinstance(row.get("supporting_facts"), Mapping)
        or isinstance(row.get("context"), Mapping)
    )


LAYOUT = HubLayout(".json", "validation", to_official, is_hub_row)
