"""FRAMES gold files in every layout (:func:`read_gold`): the official TSV of
google/frames-benchmark (with or without its unnamed index column: the revisions differ), CSV
exports of it, a JSON list (the SimpleDeepSearcher copy, Hugging Face JSON exports) and JSON
Lines (the ModelScope copy with ``wiki_items``). Each record is read by
:func:`hopscore.benchmarks.frames.example.example_of`; errors name the file, line (or record)
and field."""

from __future__ import annotations

from pathlib import Path

from hopscore.benchmarks.base import check_unique_ids
from hopscore.benchmarks.frames.example import FramesExample, example_of
from hopscore.errors import InputError
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_delimited, iter_jsonl_numbered, load_json, read_text


def read_gold(path: Path) -> list[FramesExample]:
    """Every example of a FRAMES gold file, in file order; ids must be unique."""
    start = read_text(path).lstrip("\ufeff \t\r\n")[:1]
    if start == "[":
        examples = _json_list(path)
    elif start == "{":
        examples = [example_of(Fields.at_line(value, str(path), line), index)
                    for index, (line, value) in enumerate(iter_jsonl_numbered(path))]
    else:
        examples = _delimited(path)
    if not examples:
        raise InputError(path, "no questions found")
    return check_unique_ids(examples, path)


def _json_list(path: Path) -> list[FramesExample]:
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError(path, f"expected a JSON list of questions, got {json_type(data)}")
    return [example_of(Fields.at_index(item, str(path), index), index)
            for index, item in enumerate(data)]


def _delimited(path: Path) -> list[FramesExample]:
    text = read_text(path).lstrip("\ufeff")
    if not text.strip():
        raise InputError(path, "file is empty")
    first_line = text.split("\n", 1)[0]
    delimiter = "\t" if path.suffix.lower() in (".tsv", ".tab") or (
        path.suffix.lower() != ".csv" and "\t" in first_line) else ","
    header = [cell.strip() for cell in first_line.split(delimiter)]
    if not any(name in header for name in ("Prompt", "Question", "question", "prompt")):
        raise InputError(path, "expected a JSON list, JSON Lines, or a TSV/CSV whose header "
                         f"has a Prompt column; got the header {first_line[:120]!r}",
                         field="Prompt")
    return [example_of(Fields(row, where), index)
            for index, (where, row) in enumerate(iter_delimited(path, delimiter))]
