"""FEVEROUS's Hugging Face layout: ``evidence`` as a struct of lists (``content``,
``context``); a label stored as a class index must come with its names (``datasets`` keeps them
when it reads the copy: ``hf:NAME``, parquet, ``save_to_disk``).

Read from the dataset card of :data:`COPIES` (docs/getting-the-data.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, LayoutError, Row

#: Hub copies whose layout was read from their dataset cards
COPIES = ("fever/feverous",)


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    """fever/feverous: ``evidence`` as a struct of lists (``content``, ``context``)."""
    record = dict(row)
    evidence = record.get("evidence")
    if isinstance(evidence, Mapping):
        content = evidence.get("content")
        if not isinstance(content, list):
            raise LayoutError(where, index, "evidence", "expected a 'content' list")
        context = evidence.get("context")
        sets = []
        for position, elements in enumerate(content):
            entry: dict[str, Any] = {"content": elements}
            if isinstance(context, list) and position < len(context):
                entry["context"] = context[position]
            sets.append(entry)
        record["evidence"] = sets
    if isinstance(record.get("label"), int) and not isinstance(record.get("label"), bool):
        raise LayoutError(
            where, index, "label",
            f"a class index ({record['label']}) without its names: read the copy through "
            "datasets (hf:NAME, parquet or save_to_disk keep the label names) or write the "
            "label names into the file",
        )
    return record


def is_hub_row(row: Row) -> bool:
    return isinstance(row.get("evidence"), Mapping) or isinstance(row.get("label"), int)


LAYOUT = HubLayout(".jsonl", "validation", to_official, is_hub_row)
