"""HybridQA error categories: where the gold answer is against where the prediction is.

The HybridQA authors point out that errors cascade across retrieval, hopping and reading. With
the traced gold file (``dev.traced.json``: ``answer-node``) or the scorer reference
(``dev_reference.json``: ``table``/``passage`` lists) each question's answer is located in a
*table* cell, a linked *passage*, or neither (*computed*: counted, compared, ...). With the
tables (``--tables``, a WikiTables-WithLinks folder holding ``tables_tok/`` and
``request_tok/``) a wrong prediction is located too: in a cell of the question's table, in a
passage linked from it (a wrong cell or a wrong hop: retrieval), or nowhere (reading or
generation).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from hopscore.benchmarks.error_categories import (
    NO_PREDICTION,
    Dimension,
    Inputs,
    Sample,
    contains,
    outcome,
    settled_or_span,
)
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json
from hopscore.text.normalize import normalize_answer

GOLD_LOCATIONS = ("table", "passage", "computed", "unlocated")
PREDICTION_PLACES = (
    "in a table cell", "in a linked passage", "nowhere in table or passages",
    "empty after normalization",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class HybridGold:
    location: str  # "table", "passage" or "computed"
    table_id: str | None


def read_gold(path: Path) -> dict[str, HybridGold]:
    """Answer locations (and table ids) from ``dev.traced.json``, ``dev.json`` or the reference."""
    data = load_json(path)
    if isinstance(data, dict) and isinstance(data.get("reference"), dict):
        table = set(data.get("table") or [])
        passage = set(data.get("passage") or [])
        return {
            qid: HybridGold(
                "table" if qid in table else "passage" if qid in passage else "computed", None
            )
            for qid in data["reference"]
        }
    if not isinstance(data, list):
        raise InputError(path, f"expected a HybridQA gold list or reference object, got "
                               f"{json_type(data)}")
    out = {}
    for index, item in enumerate(data):
        record = Fields(item, Location(str(path), index=index))
        nodes = record.list("answer-node", [])
        types = {node[3] for node in nodes if isinstance(node, list) and len(node) > 3}
        location = "table" if "table" in types else "passage" if types else "computed"
        if not record.has("answer-node"):
            location = "unknown"
        out[record.id("question_id")] = HybridGold(location, record.str("table_id", None))
    return out


@dataclass(frozen=True, slots=True)
class TableText:
    cells: tuple[str, ...]
    passages: tuple[str, ...]


@lru_cache(maxsize=256)
def load_table(folder: Path, table_id: str) -> TableText | None:
    """Normalized cell texts and linked passages of one table; None when it is not there."""
    table_path = folder / "tables_tok" / f"{table_id}.json"
    if not table_path.exists():
        return None
    table = load_json(table_path)
    if not isinstance(table, dict):
        raise InputError(table_path, f"expected a table object, got {json_type(table)}")
    cells = []
    for row in [table.get("header") or [], *(table.get("data") or [])]:
        for cell in row:
            text = cell[0] if isinstance(cell, list) and cell else cell
            if isinstance(text, str):
                cells.append(normalize_answer(text))
    passages: tuple[str, ...] = ()
    request_path = folder / "request_tok" / f"{table_id}.json"
    if request_path.exists():
        try:
            linked = json.loads(request_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(request_path, f"invalid JSON: {exc}") from None
        if isinstance(linked, dict):
            passages = tuple(normalize_answer(str(text)) for text in linked.values())
    return TableText(tuple(cells), passages)


def gold_location(golds: Mapping[str, HybridGold], sample: Sample) -> str | None:
    """From the gold file when given, else from the score's ``location`` group."""
    if golds:
        gold = golds.get(sample.id)
        return None if gold is None or gold.location == "unknown" else gold.location
    return sample.groups.get("location", "unlocated")


def location_and_outcome(golds: Mapping[str, HybridGold], sample: Sample) -> str | None:
    where = gold_location(golds, sample)
    if where is None:
        return None
    if sample.missing:
        return f"{where} answer: {NO_PREDICTION}"
    result = outcome(sample.metrics, "em", "f1")
    return None if result is None else f"{where} answer: {result}"


def prediction_place(golds: Mapping[str, HybridGold], tables: Path, sample: Sample) -> str | None:
    gold = golds.get(sample.id)
    if gold is None or gold.table_id is None:
        return None
    table = load_table(tables, gold.table_id)
    if table is None:
        return None
    settled, span = settled_or_span(sample)
    if settled is not None:
        return settled
    if not span:
        place = PREDICTION_PLACES[3]
    elif any(contains(cell, span) for cell in table.cells):
        place = PREDICTION_PLACES[0]
    elif any(contains(passage, span) for passage in table.passages):
        place = PREDICTION_PLACES[1]
    else:
        place = PREDICTION_PLACES[2]
    return f"{gold.location} answer, wrong prediction {place}"


def dimensions(inputs: Inputs) -> list[Dimension]:
    golds = read_gold(inputs.gold) if inputs.gold is not None else {}
    outcomes = ("right", "partial", "wrong", NO_PREDICTION)
    out = [Dimension(
        "answer location x outcome",
        "Where the gold answer is (a table cell, a linked passage, or computed) against the "
        "outcome (right = exact match, partial = F1 > 0).",
        partial(location_and_outcome, golds),
        tuple(f"{where} answer: {o}" for where in GOLD_LOCATIONS for o in outcomes),
    )]  # fmt: skip
    if inputs.tables is not None and any(g.table_id for g in golds.values()):
        out.append(Dimension(
            "where the wrong prediction occurs",
            "Wrong predictions located in the question's table: a cell or a linked passage "
            "(the model read the right table but picked the wrong cell or hop: a retrieval or "
            "hopping error) or nowhere (a reading or generation error). Questions whose table "
            "is not in --tables are not counted.",
            partial(prediction_place, golds, inputs.tables),
            ("correct", *(f"{w} answer, wrong prediction {p}" for w in GOLD_LOCATIONS
                          for p in PREDICTION_PLACES), NO_PREDICTION),
        ))  # fmt: skip
    return out
