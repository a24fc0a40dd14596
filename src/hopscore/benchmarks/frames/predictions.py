"""FRAMES predictions: JSON Lines ``{"id", "answer"}`` (``index`` may stand for ``id`` and
``response`` for ``answer``, as in ``{index, Prompt, response}`` rows; a null answer is no
answer), or one JSON object ``{id: answer}``. Errors name the file, line and field."""

from __future__ import annotations

from pathlib import Path

from hopscore.benchmarks.base import Prediction, Predictions
from hopscore.benchmarks.formats import UNIVERSAL, universal_or_json
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl_numbered

ID_FIELDS = ("id", "index")
ANSWER_FIELDS = ("answer", "response")


def read_predictions(path: Path) -> Predictions[Prediction]:
    data = universal_or_json(path)
    if data is UNIVERSAL:
        return Predictions(_lines(path), str(path), "universal")
    if not isinstance(data, dict):
        raise InputError(path, "expected JSON Lines {id, answer} or a JSON object {id: answer}, "
                         f"got a JSON {json_type(data)}")
    by_id: dict[str, Prediction] = {}
    for key, answer in data.items():
        if answer is not None and not isinstance(answer, str):
            raise InputError(Location(str(path), key=key),
                             f"expected a string answer, got {json_type(answer)}")
        by_id[key] = Prediction(id=key, answer=answer)
    return Predictions(by_id, str(path), "id-map")


def _lines(path: Path) -> dict[str, Prediction]:
    out: dict[str, Prediction] = {}
    first: dict[str, int] = {}
    for line, value in iter_jsonl_numbered(path):
        record = Fields.at_line(value, str(path), line)
        id_field = next((f for f in ID_FIELDS if record.has(f)), ID_FIELDS[0])
        example_id = record.id(id_field)
        if example_id in out:
            raise record.error(id_field, f"duplicate id {example_id!r} (first seen at "
                               f"{path}:{first[example_id]})")
        answer_field = next((f for f in ANSWER_FIELDS if record.has(f)), ANSWER_FIELDS[0])
        out[example_id] = Prediction(id=example_id,
                                     answer=record.str(answer_field, nullable=True))
        first[example_id] = line
    return out
