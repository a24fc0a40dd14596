"""Reading MuSiQue's files: the official gold (JSON Lines, or a JSON list of the same
records) into one example per question, and the prediction lines (the official
``{id, predicted_answer, predicted_support_idxs, predicted_answerable}`` JSON Lines, or the
universal ``{id, answer, support, answerable}``) into one prediction per id.

The official scorer aligns the two files line by line and aborts on any difference of length
or order; hopscore joins them by id (a question without a prediction scores 0), and keeps the
file order of the two lines of one id, which the sufficiency metrics compare.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hopscore.benchmarks.musique.example import (
    GoldLine,
    Line,
    MusiqueExample,
    MusiquePrediction,
    make_example,
    read_gold_line,
)
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl_numbered, load_json, sniff_json_kind


def gold_records(path: Path) -> Iterator[Fields]:
    """The located records of a JSON Lines file or of a JSON list."""
    if sniff_json_kind(path) == "jsonl":
        for line, value in iter_jsonl_numbered(path):
            yield Fields.at_line(value, str(path), line)
        return
    data = load_json(path)
    if isinstance(data, dict):
        yield Fields.at_line(data, str(path), 1)
        return
    if not isinstance(data, list):
        raise InputError(path, f"expected MuSiQue records (JSON Lines or a JSON list), got "
                         f"a JSON {json_type(data)}")
    for index, item in enumerate(data):
        yield Fields.at_index(item, str(path), index)


def _refuse_other_layouts(record: Fields) -> None:
    if record.has("idx") and not record.has("id") and not record.has("paragraphs"):
        raise record.error("id", "missing: this is R1-Searcher's {idx, question, answer} "
                           "subset of MuSiQue, without paragraphs or aliases, scored by "
                           "cover-EM rather than the MuSiQue scorer; score it as open-domain QA "
                           "(the FlashRAG-format benchmark), not as musique")


def load_gold(path: Path) -> list[MusiqueExample]:
    """One example per question, in the order of their first lines."""
    lines: dict[str, list[tuple[GoldLine, Location]]] = {}
    full_at: Location | None = None
    for record in gold_records(path):
        _refuse_other_layouts(record)
        line = read_gold_line(record)
        lines.setdefault(line.id, []).append((line, record.where))
        if not line.answerable and full_at is None:
            full_at = record.where
    if not lines:
        raise InputError(path, "no questions found")
    examples = []
    for question_id, found in lines.items():
        if full_at is None:
            if len(found) > 1:
                raise InputError(found[1][1], (
                    f"id {question_id!r} repeats {_place(found[0][1])} (in MuSiQue-Ans every id "
                    "is once; MuSiQue-Full has twins with answerable true and false)"), field="id")
            examples.append(make_example(found[0][0]))
            continue
        flags = sorted(line.answerable for line, _ in found)
        if flags != [False, True]:
            where = found[-1][1]
            raise InputError(where, (
                f"id {question_id!r} has {len(found)} line(s) with answerable "
                f"{[line.answerable for line, _ in found]}; a MuSiQue-Full file (it has "
                f"unanswerable records, the first at {_place(full_at)}) must hold every id twice, "
                "once answerable and once not"), field="answerable")
        examples.append(make_example(found[0][0], found[1][0]))
    return examples


def _place(where: Location) -> str:
    return f"line {where.line}" if where.line is not None else f"record [{where.index}]"


def _answer(record: Fields, name: str) -> str | None:
    if not record.has(name):
        return None
    value = record.raw(name)
    if type(value) is not str:  # the official scorer calls .lower() on it and crashes
        raise record.error(name, f"expected a string answer, got {json_type(value)}")
    return value


def _support(record: Fields, name: str) -> tuple[int, ...] | None:
    """``set(map(int, ...))`` as the official scorer reads it: integers and strings of
    digits; anything ``int()`` would reject, or would truncate, is an error here."""
    if not record.has(name):
        return None
    value = record.raw(name)
    if type(value) is not list:
        raise record.error(name, f"expected a list of paragraph indices, got {json_type(value)}")
    out = []
    for item in value:
        if type(item) is int:
            out.append(item)
            continue
        number: int | None = None
        if type(item) is str:
            try:
                number = int(item)
            except ValueError:
                number = None
        elif type(item) is float and item.is_integer():
            number = int(item)
        if number is None:
            raise record.error(name, f"a paragraph index must be an integer, got "
                               f"{json_type(item)} {item!r}")
        out.append(number)
    return tuple(out)


def _answerable(record: Fields, name: str) -> bool | None:
    if not record.has(name):
        return None
    value: Any = record.raw(name)
    if type(value) is bool:
        return value
    if type(value) is int and value in (0, 1):  # the official list equality: 1 == True
        return bool(value)
    raise record.error(name, f"expected true or false, got {json_type(value)} {value!r}")


def read_line(record: Fields) -> Line:
    """One prediction line, official or universal (by its field names); a line with neither an
    answer nor a support (the official scorer's KeyError) is an error."""
    if record.has("predicted_answer") or record.has("predicted_support_idxs"):
        return Line(_answer(record, "predicted_answer"),
                    _support(record, "predicted_support_idxs"),
                    _answerable(record, "predicted_answerable"))
    if not record.has("answer") and not record.has("support"):
        raise record.error("predicted_answer", "missing (a prediction line needs "
                           "predicted_answer, or the universal answer)")
    return Line(_answer(record, "answer"), _support(record, "support"),
                _answerable(record, "answerable"))


def _prediction_records(path: Path) -> Iterator[tuple[Fields, str]]:
    """The located records of a JSON Lines file (or of a JSON list, or one JSON object), each
    with how an error names its place ("line 3", "record [2]")."""
    if sniff_json_kind(path) == "jsonl":
        for number, value in iter_jsonl_numbered(path):
            yield Fields.at_line(value, str(path), number), f"line {number}"
        return
    data = load_json(path)
    if isinstance(data, dict):
        yield Fields.at_line(data, str(path), 1), "line 1"
        return
    if not isinstance(data, list):
        raise InputError(path, "expected JSON Lines of {id, predicted_answer, "
                         "predicted_support_idxs, predicted_answerable} (or the universal "
                         f"{{id, answer, support, answerable}}), got a JSON {json_type(data)}")
    for index, item in enumerate(data):
        yield Fields.at_index(item, str(path), index), f"record [{index}]"


def load_predictions(path: Path) -> tuple[dict[str, MusiquePrediction], bool]:
    """Predictions by id, and whether every line is in the official format."""
    found: dict[str, list[Line]] = {}
    first_place: dict[str, str] = {}
    second_at: dict[str, str] = {}
    official = True
    for record, place in _prediction_records(path):
        question_id = record.id("id")
        line = read_line(record)
        official = official and record.has("predicted_answer")
        lines = found.setdefault(question_id, [])
        if len(lines) == 2:
            raise InputError(record.where, f"a third line for id {question_id!r} (first at "
                             f"{first_place[question_id]}): an id has one line, or two in "
                             "MuSiQue-Full", field="id")
        if lines:
            second_at[question_id] = f"{record.where} (first at {first_place[question_id]})"
        first_place.setdefault(question_id, place)
        lines.append(line)
    by_id = {question_id: MusiquePrediction(id=question_id, answer=lines[0].answer,
                                            lines=tuple(lines),
                                            second_at=second_at.get(question_id))
             for question_id, lines in found.items()}
    return by_id, official
