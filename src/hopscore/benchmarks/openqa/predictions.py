"""Reading open-QA predictions: universal JSON Lines ``{"id", "answer"[, "reply"]}``,
R1-Searcher's ``eval_results`` rows (``pred_ans``, ``gpt4o_output``; no id: the 1-based line
position is the id, as the gold reader numbers the same file), and FlashRAG's
``intermediate_data.json`` (a JSON list of ``{"id", "output": {"pred"}}``).

An answer holding ``<answer>`` is scored on its last span (R1-Searcher's extraction) and its
whole text is kept as the reply Search-R1's ``qa_em`` reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Predictions
from hopscore.benchmarks.openqa.records import OpenQAPrediction
from hopscore.benchmarks.openqa.rules import r1searcher_answer
from hopscore.errors import InputError
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl_numbered, load_json, sniff_json_kind


def read_predictions(path: Path) -> Predictions[OpenQAPrediction]:
    if sniff_json_kind(path) != "jsonl":
        data = load_json(path)
        if isinstance(data, list):
            return _flashrag(path, data)
        if not isinstance(data, dict):
            raise InputError(path, "expected JSON Lines predictions or FlashRAG's "
                             f"intermediate_data.json (a list), got a JSON {json_type(data)}")
        rows: list[tuple[int, Any]] = [(1, data)]
    else:
        rows = list(iter_jsonl_numbered(path))
    by_id: dict[str, OpenQAPrediction] = {}
    layout = "universal"
    first_line: dict[str, int] = {}
    for position, (line, value) in enumerate(rows, start=1):
        record = Fields.at_line(value, str(path), line)
        if record.has("pred_ans"):
            layout = "r1-searcher"
            prediction = _r1_row(record, position, str(path))
        else:
            prediction = tagged(record.id("id"), record.str("answer"),
                                record.str("reply", None, nullable=True))
        if prediction.id in by_id:
            raise InputError(record.where, f"duplicate id {prediction.id!r} (first seen at "
                             f"{path}:{first_line[prediction.id]})", field="id")
        first_line[prediction.id] = line
        by_id[prediction.id] = prediction
    return Predictions(by_id, str(path), layout)


def tagged(example_id: str, answer: str, reply: str | None = None) -> OpenQAPrediction:
    """A prediction from an answer text that may hold ``<answer>`` tags (or a reply that
    does)."""
    whole = reply if reply is not None else answer
    if "<answer>" in whole:
        return OpenQAPrediction(id=example_id, answer=r1searcher_answer(whole), reply=whole)
    return OpenQAPrediction(id=example_id, answer=answer)


def _r1_row(record: Fields, position: int, source: str) -> OpenQAPrediction:
    verdict = record.raw("gpt4o_output", None)
    if verdict is not None and not isinstance(verdict, str):
        raise record.error("gpt4o_output", f"expected \"True\" or \"False\", got "
                           f"{json_type(verdict)}")
    example_id = record.id("id") if record.has("id") else str(position)
    return OpenQAPrediction(
        id=example_id, answer=record.str("pred_ans"),
        verdict=None if verdict is None else verdict == "True",
        question=None if record.has("id") else record.str("question"), source=source)


def _flashrag(path: Path, data: list[Any]) -> Predictions[OpenQAPrediction]:
    by_id: dict[str, OpenQAPrediction] = {}
    for index, item in enumerate(data):
        record = Fields.at_index(item, str(path), index)
        output = Fields(record.dict("output"), record.where)
        example_id = record.id("id")
        if example_id in by_id:
            raise record.error("id", f"duplicate id {example_id!r}")
        by_id[example_id] = tagged(example_id, output.str("pred"))
    return Predictions(by_id, str(path), "flashrag")
