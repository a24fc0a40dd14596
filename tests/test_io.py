"""Readers and writers of hopscore.files.io: the fast paths give the standard library's results."""

from __future__ import annotations

import gc
import json
import math
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.benchmarks.base import Prediction, load_universal
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields
from hopscore.files.io import bulk_load, frozen_heap, iter_jsonl, json_line, sniff_json_kind
from tests.conftest import run_cli


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_jsonl_lines_the_fast_parser_rejects_are_read_by_the_standard_library(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path / "p.jsonl",
        b'\xef\xbb\xbf{"a": 1}\n\n   \n{"nan": NaN}\n{"big": 123456789012345678901234567890}\n'
        b'{"s": "\\ud800"}\r\n',
    )
    rows = list(iter_jsonl(path))
    assert [where.line for where, _ in rows] == [1, 4, 5, 6]
    assert rows[0][1] == {"a": 1}
    assert math.isnan(rows[1][1]["nan"])
    assert rows[2][1] == {"big": 123456789012345678901234567890}
    assert rows[3][1] == {"s": "\ud800"}


def test_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    bad_json = write(tmp_path / "a.jsonl", b'{"a": 1}\n{"a": }\n')
    with pytest.raises(InputError, match=r"a\.jsonl:2: invalid JSON: Expecting value \(column 7\)"):
        list(iter_jsonl(bad_json))
    bad_utf8 = write(tmp_path / "b.jsonl", b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(InputError, match=r"b\.jsonl:2: not valid UTF-8"):
        list(iter_jsonl(bad_utf8))
    with pytest.raises(InputError, match="file not found"):
        list(iter_jsonl(tmp_path / "missing.jsonl"))


def test_json_line_is_compact_utf8_json_and_falls_back_for_other_types() -> None:
    value = {"id": "é–1", "metrics": {"em": 1.0, "f1": 2 / 3}, "gold": ["x"], "missing": False}
    line = json_line(value)
    assert line.endswith("\n") and "\n" not in line[:-1]
    assert "é–1" in line and ", " not in line
    assert json.loads(line) == value
    assert json.loads(json_line({"x": np.float64(0.25)})) == {"x": 0.25}


def test_sniff_reads_only_the_start_of_the_file(tmp_path: Path) -> None:
    jsonl = write(tmp_path / "p.jsonl", b'\n{"id": "1"}\n{"id": "2"}\n' + b"\xff" * 10)
    assert sniff_json_kind(jsonl) == "jsonl"
    assert sniff_json_kind(write(tmp_path / "o.json", b'{"id": "1"}\n\n')) == "json"
    assert sniff_json_kind(write(tmp_path / "l.json", b'[{"id": "1"},\n{"id": "2"}]')) == "json"
    assert sniff_json_kind(write(tmp_path / "m.json", b'{\n"answer": {}\n}')) == "json"
    with pytest.raises(InputError, match="file is empty"):
        sniff_json_kind(write(tmp_path / "e.json", b" \n\n"))
    with pytest.raises(InputError, match=r"u\.json:1: not valid UTF-8"):
        sniff_json_kind(write(tmp_path / "u.json", b"\xff{}\n"))


def test_sniff_long_lines_and_blank_starts(tmp_path: Path) -> None:
    """A one-line document of any size is JSON without being decoded (an invalid byte deep in
    it is the loader's to report); a long first line of JSON Lines is read whole; blank lines
    before the first record count in the located error."""
    big = json.dumps({"reference": {f"q{i}": "é" * 20 for i in range(20_000)}}).encode()
    assert len(big) > 4 * (1 << 16)
    assert sniff_json_kind(write(tmp_path / "one.json", big + b"\xff")) == "json"
    assert sniff_json_kind(write(tmp_path / "one_nl.json", big + b"\n\n  \n")) == "json"
    assert sniff_json_kind(write(tmp_path / "rows.jsonl", big + b"\n" + big + b"\n")) == "jsonl"
    assert sniff_json_kind(write(tmp_path / "gap.jsonl", b"\n" * 70_000 + b'{"id": 1}\n{}')) \
        == "jsonl"
    assert sniff_json_kind(write(tmp_path / "list.json", b" " * 70_000 + b"[1]")) == "json"
    with pytest.raises(InputError, match=r"b\.json:3: not valid UTF-8"):
        sniff_json_kind(write(tmp_path / "b.json", b"\n\n\xff[]"))


def test_bulk_load_pauses_collection_and_nests() -> None:
    assert gc.isenabled()
    with bulk_load():
        assert not gc.isenabled()
        with bulk_load():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with bulk_load():
            pass
        assert not gc.isenabled()  # it was off before, so it stays off
    finally:
        gc.enable()
    with pytest.raises(KeyError), bulk_load():
        raise KeyError("x")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # what was built is back in the collector's care
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with bulk_load():
            pass
        assert gc.get_freeze_count() == frozen  # someone else's freeze is left alone
    finally:
        gc.unfreeze()


def test_fields_at_line_locates_errors_lazily() -> None:
    record = Fields.at_line({"id": 3, "answer": None}, "p.jsonl", 7)
    assert record.id() == "3"
    with pytest.raises(InputError, match=r"p\.jsonl:7: field 'answer': expected a string"):
        record.str("answer")
    assert record.where == Location("p.jsonl", line=7)
    with pytest.raises(InputError, match=r"p\.jsonl:2: expected a JSON object, got list"):
        Fields.at_line([], "p.jsonl", 2)


def test_universal_duplicate_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "p.jsonl", b'{"id": "a"}\n[1]\n{"id": "b"}\n{"id": "a"}\n')

    def parse(record: Fields, example_id: str) -> Prediction:
        return Prediction(id=example_id)

    with pytest.raises(InputError, match=r"p\.jsonl:2: expected a JSON object"):
        load_universal(path, parse)
    path = write(tmp_path / "q.jsonl", b'{"id": "a"}\n{"id": "b"}\n\n{"id": "a"}\n')
    with pytest.raises(
        InputError, match=r"q\.jsonl:4: field 'id': duplicate id 'a' \(first seen at .*q\.jsonl:1\)"
    ):
        load_universal(path, parse)


def test_quick_universal_reading_equals_the_checked_one(tmp_path: Path) -> None:
    from hopscore.benchmarks.base import quick_answer
    from hopscore.benchmarks.hybridqa import _universal_record

    lines = [
        b'{"id": "a", "answer": "x"}',
        b'{"id": 7, "answer": "int id"}',
        b'{"id": " b", "answer": "leading space"}',
        b'{"id": "c", "answer": "", "extra": [1]}',
    ]
    path = write(tmp_path / "p.jsonl", b"\n".join(lines) + b"\n")
    quick = load_universal(path, _universal_record, quick=quick_answer)
    assert quick == load_universal(path, _universal_record)
    assert list(quick) == ["a", "7", " b", "c"]
    for bad, message in [
        (b'{"id": "z", "answer": null}', r"p\.jsonl:2: field 'answer': expected a string"),
        (b'{"id": "a", "answer": "y"}', r"p\.jsonl:2: field 'id': duplicate id 'a' .*:1\)"),
        (b'{"id": "", "answer": "y"}', r"p\.jsonl:2: field 'id': id is empty"),
    ]:
        path = write(tmp_path / "p.jsonl", lines[0] + b"\n" + bad + b"\n")
        with pytest.raises(InputError, match=message):
            load_universal(path, _universal_record, quick=quick_answer)


@given(st.recursive(st.text() | st.integers() | st.none(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                    max_leaves=8))
def test_json_writers_round_trip_any_string_even_lone_surrogates(value):
    """Valid JSON can hold a lone surrogate ("\\ud800"); the writers escape it instead of
    failing to encode UTF-8, and the text reads back to the same value."""
    from hopscore.files.io import json_text

    for text in (json_line(value), json_text(value, indent=2)):
        assert json.loads(text.encode("utf-8").decode("utf-8")) == value


def test_score_output_with_a_lone_surrogate_answer(tmp_path):
    """A prediction file holding ``"\\ud800 x"`` (valid JSON) is scored, as officially, and
    scores.jsonl keeps the answer exactly (it used to crash with exit 3 while writing)."""
    gold = tmp_path / "gold.json"
    gold.write_text('[{"question": "q", "answer": "x"}]')
    predictions = tmp_path / "pred.json"
    predictions.write_text('{"0": "\\ud800 x"}')
    result = run_cli("score", "bamboogle", "--gold", gold, "--predictions", predictions,
                     "--output-dir", tmp_path / "out", "--resamples", "10")
    assert result.returncode == 0, result.stderr
    row = json.loads((tmp_path / "out" / "scores.jsonl").read_text(encoding="utf-8"))
    assert row["prediction"] == "\ud800 x"
    assert row["metrics"]["f1"] == pytest.approx(2 / 3) and row["metrics"]["em"] == 0.0
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["metrics"]["f1"] == pytest.approx(2 / 3)


def test_frozen_heap_keeps_what_exists_out_of_collections_until_it_ends() -> None:
    start = gc.get_freeze_count()  # 0, or CPython 3.12's own few hundred before any use
    before = Node()
    before.other = before  # a cycle made before: not collected while frozen
    with frozen_heap():
        assert gc.get_freeze_count() > start
        with frozen_heap():  # nested: the outer one gives back
            pass
        assert gc.get_freeze_count() > start
        made = Node()
        made.other = made  # a cycle made during it is collected as usual
        probe = weakref.ref(made)
        del made
        gc.collect()
        assert probe() is None
        held = weakref.ref(before)
        del before
        gc.collect()
        assert held() is not None
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert held() is None
    gc.freeze()  # another's freeze is never undone
    try:
        with frozen_heap():
            pass
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


class Node:
    other: Any


def test_objects_frozen_before_hopscore_loads_do_not_turn_the_frozen_heap_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CPython 3.12 keeps a few hundred objects in the permanent generation (back after each
    full collection); read as another's freeze, they turned bulk_load and frozen_heap off
    there (3.11 and 3.13: none)."""
    from hopscore.files import io

    gc.freeze()  # what the interpreter froze before hopscore.files.io was loaded
    monkeypatch.setattr(io, "_at_start", gc.get_freeze_count())
    try:
        assert gc.get_freeze_count() > 0
        before = gc.get_threshold()
        with frozen_heap():
            assert gc.get_threshold()[0] == max(before[0], io.YOUNG_THRESHOLD)  # it acts
        assert gc.get_threshold() == before
        assert gc.get_freeze_count() == 0  # all given back, the interpreter's too
        gc.collect()  # (3.12 puts its own back here)
        with frozen_heap():  # and it acts again
            assert gc.get_threshold()[0] == max(before[0], io.YOUNG_THRESHOLD)
        with bulk_load():  # what it built goes to the oldest generation
            pass
        assert gc.get_freeze_count() == 0
        monkeypatch.setattr(io, "_at_start", 5)
        gc.freeze()  # another's freeze (more than the interpreter's few) is left alone
        with frozen_heap():
            assert gc.get_threshold() == before
        with bulk_load():
            pass
        assert gc.get_freeze_count() > 5
    finally:
        gc.unfreeze()


def test_a_batch_runs_with_the_heap_frozen_and_gives_it_back(tmp_path: Path) -> None:
    from hopscore.engine import ResultLog, RowResult, run_batch, run_key_of, run_sync

    seen: list[int] = []

    async def work(item: int, key: str) -> RowResult:
        seen.append(gc.get_freeze_count())
        return RowResult({"run_key": key, "n": item})

    log = ResultLog(tmp_path / "rows.jsonl", run_key_of)
    run_sync(run_batch([1, 2, 3], ["a", "b", "c"], work, log, workers=2))
    assert seen and all(count > 0 for count in seen)
    assert gc.get_freeze_count() == 0


def test_frozen_heap_collects_the_young_less_often_and_restores_the_thresholds() -> None:
    from hopscore.files.io import YOUNG_THRESHOLD

    before = gc.get_threshold()
    with frozen_heap():
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), *before[1:])
    assert gc.get_threshold() == before


@pytest.mark.parametrize("text, message", [
    ('{"answer": {"a": "x", "a": "y"}}', "duplicate key 'a'"),
    ('{"a": "x\\"", "a": "y"}', "duplicate key 'a'"),
    ('{"k": "\\\\", "k": 1}', "duplicate key 'k'"),
    ("", "file is empty"),
    ("[1,]", "invalid JSON"),
])
def test_load_json_errors(tmp_path: Path, text: str, message: str) -> None:
    from hopscore.files.io import load_json

    with pytest.raises(InputError, match=message):
        load_json(write(tmp_path / "bad.json", text.encode()))

