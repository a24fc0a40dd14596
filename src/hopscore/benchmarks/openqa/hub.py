"""The open-QA Hugging Face layout: FlashRAG's ``RUC-NLPIR/FlashRAG_datasets`` keeps the
official ``{id, question, golden_answers, metadata}`` rows, one config per dataset
(``hf:RUC-NLPIR/FlashRAG_datasets:nq@test``; HotpotQA, 2Wiki and MuSiQue have ``dev`` only).

A row read from the Hub has no dataset field: the config named in ``where`` becomes its
``dataset`` (the written gold file is a temporary one whose path says nothing).
"""

from __future__ import annotations

from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, Row

#: Hub copies whose layout was read from their dataset cards
COPIES = ("RUC-NLPIR/FlashRAG_datasets",)


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    from hopscore.benchmarks.openqa.records import dataset_from_path

    record = dict(row)
    if "dataset" not in record and "data_source" not in record:
        named = dataset_from_path(where)
        if named is not None:
            record["dataset"] = named
    return record


def is_hub_row(row: Row) -> bool:
    """A local JSON Lines file is read as it is (the Hub rows are the official ones)."""
    return False


LAYOUT = HubLayout(".jsonl", "test", to_official, is_hub_row)
