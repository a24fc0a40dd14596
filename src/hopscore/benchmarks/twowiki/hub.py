"""2WikiMultihopQA's Hugging Face layout: HotpotQA's (:mod:`hopscore.benchmarks.hotpotqa.hub`),
plus ``evidences`` / ``evidences_id`` as structs of ``subject``, ``relation``, ``object`` lists
(or ``fact``, ``relation``, ``entity``).

Read from the dataset cards of :data:`COPIES` (docs/getting-the-data.md lists them with their
licences and differences).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.benchmarks.hotpotqa import hub as hotpot_hub
from hopscore.benchmarks.hub_layout import HubLayout, LayoutError, Row

#: Hub copies whose layout was read from their dataset cards
COPIES = ("xanhho/2WikiMultihopQA", "ohjoonhee/2WikiMultihopQA")

#: the names the Hub copies give the three places of an evidence triple
_TRIPLE_NAMES = (("subject", "relation", "object"), ("fact", "relation", "entity"))


def _triples(value: Any, where: str, index: int, field: str) -> Any:
    if isinstance(value, Mapping):
        for names in _TRIPLE_NAMES:
            if all(name in value for name in names):
                columns = [value[name] for name in names]
                if not all(isinstance(c, list) and len(c) == len(columns[0]) for c in columns):
                    raise LayoutError(where, index, field, f"{names} must be lists of one length")
                return [list(triple) for triple in zip(*columns, strict=True)]
        raise LayoutError(where, index, field, f"expected {_TRIPLE_NAMES[0]} lists, "
                          f"got keys {sorted(value)}")
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        for names in _TRIPLE_NAMES:
            if all(name in value[0] for name in names):
                return [[item.get(name) for name in names] for item in value]
    return value


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = hotpot_hub.to_official(row, where, index)
    for field in ("evidences", "evidences_id"):
        if field in record:
            record[field] = _triples(record[field], where, index, field)
    return record


def is_hub_row(row: Row) -> bool:
    return hotpot_hub.is_hub_row(row) or isinstance(row.get("evidences"), Mapping)


LAYOUT = HubLayout(".json", "validation", to_official, is_hub_row)
