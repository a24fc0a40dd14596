"""HotpotQA scored in bounded memory: the streamed gold list and the indexed predictions must
give what the whole-file readers give, results and errors alike, whatever the window size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hopscore.benchmarks.hotpotqa import HotpotQA
from hopscore.benchmarks.hotpotqa.example import HotpotPrediction
from hopscore.benchmarks.hotpotqa.official_index import OfficialIndex, read_predictions_quickly
from hopscore.errors import InputError
from hopscore.files import jsonstream
from hopscore.files.io import load_json
from hopscore.files.jsonstream import is_json_list, iter_json_list
from hopscore.scores.scoring import note_no_overlap, score_examples, score_files
from tests.benchmarks.helpers import write_json
from tests.conftest import FIXTURES

BENCH = HotpotQA()
FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the window fixture is the same every time
GOLD = FIXTURES / "hotpotqa" / "dev_small.json"


@pytest.fixture(autouse=True)
def small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows of 256 bytes: every file here is read in many of them."""
    monkeypatch.setattr(jsonstream, "WINDOW", 256)


def elements(path: Path, window: int | None = None) -> list[Any]:
    out: list[Any] = []
    for batch in iter_json_list(path, window=window):
        if batch.raw is not None:
            out.extend(msgspec.json.decode(raw) for raw in batch.raw)
        else:
            out.extend(batch.values or ())
    return out


def records(n: int, **changes: Any) -> list[dict[str, Any]]:
    """``n`` gold records (the fixture's, under fresh ids), ``changes`` applied to each."""
    base: list[dict[str, Any]] = json.loads(GOLD.read_text(encoding="utf-8"))
    return [{**base[i % len(base)], "_id": f"id-{i}", **changes} for i in range(n)]


def write_lines(path: Path, value: Any) -> Path:
    """JSON written over many lines, so that errors have lines to name."""
    path.write_text(json.dumps(value, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


# --- the list reader --------------------------------------------------------------------------

text = st.text(alphabet=st.sampled_from([*'ab}{][,:" \\\n\té€', "\U0001f600"]),
               max_size=12)
leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), text)
value = st.recursive(leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)), max_leaves=8)
element = st.one_of(st.dictionaries(text, value, max_size=4), value)


@settings(max_examples=150, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(element, max_size=25), st.sampled_from([None, 1, 2]), st.booleans(),
       st.integers(1, 300))
def test_the_stream_reads_what_json_loads_reads(tmp_path: Path, items: list[Any],
                                                indent: int | None, ascii_only: bool,
                                                window: int) -> None:
    path = tmp_path / "l.json"
    path.write_text(json.dumps(items, indent=indent, ensure_ascii=ascii_only), encoding="utf-8")
    assert is_json_list(path)
    assert elements(path, window) == items


def test_blank_and_bom_around_the_list(tmp_path: Path) -> None:
    path = tmp_path / "l.json"
    path.write_bytes(b"\xef\xbb\xbf \n [ {\"a\": 1} , {\"b\": [2]}\n]\n\n")
    assert elements(path, 4) == [{"a": 1}, {"b": [2]}]
    path.write_bytes(b"  []  ")
    assert elements(path, 1) == []


BROKEN = {
    "missing comma": lambda t: t.replace('},\n {\n  "_id": "id-30"', '}\n {\n  "_id": "id-30"'),
    "bad value in a record": lambda t: t.replace('"_id": "id-30"', '"_id": id-30'),
    "unterminated string": lambda t: t[: t.index('"id-30"') + 4],
    "truncated after a record": lambda t: t[: t.index('{\n  "_id": "id-31"') - 1],
    "trailing comma": lambda t: t.rstrip().rstrip("]").rstrip() + ",\n]",
    "extra data": lambda t: t + "\n{}",
    "nan is read": lambda t: t.replace('"level": "hard"', '"level": NaN', 1),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_file_is_reported_as_the_whole_file_reader_reports_it(
        tmp_path: Path, name: str) -> None:
    path = tmp_path / "g.json"
    write_lines(path, records(60))
    path.write_text(BROKEN[name](path.read_text(encoding="utf-8")), encoding="utf-8")
    try:
        expected: Any = load_json(path)
    except InputError as exc:
        with pytest.raises(InputError) as streamed:
            elements(path)
        assert str(streamed.value) == str(exc)
        assert ":" in str(exc).split("g.json", 1)[1]  # a line number
    else:  # NaN: the standard library reads it, and so does the stream (after msgspec did not)
        assert name == "nan is read"
        assert elements(path) == expected


@pytest.mark.parametrize("records_n", [1, 3, 12])
def test_a_trailing_comma_is_reported_as_the_whole_file_reader_reports_it_at_any_window(
        tmp_path: Path, records_n: int) -> None:
    """Python 3.13 names the comma ("Illegal trailing comma before end of array"), earlier
    versions the "]"; whichever window the comma starts (after the last element's cut or
    inside the rest), the stream says what the standard library says."""
    path = tmp_path / "g.json"
    write_lines(path, records(records_n))
    path.write_text(BROKEN["trailing comma"](path.read_text(encoding="utf-8")),
                    encoding="utf-8")
    with pytest.raises(InputError) as whole:
        load_json(path)
    size = path.stat().st_size
    for window in sorted({*range(16, 600, 7), *range(size - 40, size + 8)}):
        if window < 16:
            continue
        with pytest.raises(InputError) as streamed:
            elements(path, window=window)
        assert str(streamed.value) == str(whole.value), window


def test_invalid_utf8_in_the_middle_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    write_lines(path, records(40))
    data = path.read_bytes()
    at = data.index(b'"id-25"')
    path.write_bytes(data[:at] + b'"\xff' + data[at + 2:])
    with pytest.raises(InputError) as exc:
        list(BENCH.iter_gold(path))
    line = data[:at].count(b"\n") + 1
    assert str(exc.value) == f"{path}:{line}: not valid UTF-8"


# --- the gold stream ------------------------------------------------------------------------


def test_a_bad_record_in_the_middle_is_named_as_load_gold_names_it(tmp_path: Path) -> None:
    gold = records(80)
    for change in ({"answer": 5}, {"supporting_facts": [["A", "1"]]}, {"_id": True},
                   {"_id": " "}, {"type": []}):
        gold[47] = {**gold[47], **change}
        path = write_json(tmp_path / "g.json", gold)
        with pytest.raises(InputError) as checked:
            BENCH.load_gold(path)
        with pytest.raises(InputError) as streamed:
            list(BENCH.iter_gold(path))
        assert str(streamed.value) == str(checked.value)
        assert "record [47]" in str(streamed.value)
        gold = records(80)


def test_duplicate_ids_far_apart(tmp_path: Path) -> None:
    gold = records(90)
    gold[71]["_id"] = "id-12"
    path = write_json(tmp_path / "g.json", gold)
    with pytest.raises(InputError, match=r"duplicate gold id 'id-12' in records \[12\] and \[71\]"):
        list(BENCH.iter_gold(path))
    gold[71]["_id"] = 12  # an integer id is its decimal string
    gold[12]["_id"] = "12"
    path = write_json(tmp_path / "g.json", gold)
    with pytest.raises(InputError, match=r"duplicate gold id '12' in records \[12\] and \[71\]"):
        list(BENCH.iter_gold(path))


def test_a_bad_record_late_in_the_file_leaves_no_output(tmp_path: Path) -> None:
    gold = records(120)
    gold[117]["answer"] = None
    path = write_json(tmp_path / "g.json", gold)
    predictions = write_json(tmp_path / "p.json", {"answer": {"id-0": "x"}, "sp": {}})
    out = tmp_path / "out"
    with pytest.raises(InputError, match=r"record \[117\]: field 'answer'"):
        score_files(BENCH, path, predictions, out)
    assert list(out.iterdir()) == []  # scores.jsonl was written to a temporary file, removed


# --- the predictions index and the whole result ---------------------------------------------


def reference(gold: Path, predictions: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The report and rows of the whole-file readers (no streaming anywhere)."""
    rows: list[dict[str, Any]] = []
    report = score_examples(BENCH, BENCH.load_gold(gold), BENCH.load_predictions(predictions),
                            lambda s: rows.append(s.to_json()))
    note_no_overlap(report, predictions)
    return report.to_json(), rows


def streamed(gold: Path, predictions: Path, out: Path) -> tuple[dict[str, Any], list[Any]]:
    report = score_files(BENCH, gold, predictions, out)
    lines = (out / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads((out / "metrics.json").read_text(encoding="utf-8")) == report.to_json()
    return report.to_json(), [json.loads(line) for line in lines]


titles = st.sampled_from(["A", "B: the sequel", "Ünï", "x\"y", "a}, {b"])
facts = st.lists(st.tuples(titles, st.integers(0, 3)).map(list), max_size=3)
answer_text = st.sampled_from(["yes", "no", "Paris", "3:45", "the Paris", "", "é:é", "a\\b"])


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(st.tuples(answer_text, facts, st.sampled_from(["bridge", "comparison", None])),
                min_size=1, max_size=30),
       st.data())
def test_streamed_scoring_equals_the_whole_file_scoring(tmp_path: Path, gold_parts: Any,
                                                        data: st.DataObject) -> None:
    gold = [{"_id": f"q{i}", "question": "?", "answer": answer, "supporting_facts": sp,
             "context": [["A", ["s"]]], "type": kind, "level": "hard"}
            for i, (answer, sp, kind) in enumerate(gold_parts)]
    ids = [record["_id"] for record in gold] + ["extra:1", "extra-2"]
    answered = data.draw(st.lists(st.sampled_from(ids), unique=True))
    with_sp = data.draw(st.lists(st.sampled_from(ids), unique=True))
    content = {"answer": {i: data.draw(answer_text) for i in answered},
               "sp": {i: data.draw(facts) for i in with_sp}}
    if data.draw(st.booleans()):
        del content["sp"]
    ascii_only = data.draw(st.booleans())
    gold_path = tmp_path / "g.json"
    gold_path.write_text(json.dumps(gold, ensure_ascii=ascii_only), encoding="utf-8")
    predictions = tmp_path / "p.json"
    predictions.write_text(json.dumps(content, ensure_ascii=ascii_only), encoding="utf-8")
    assert streamed(gold_path, predictions, tmp_path / "out") == reference(gold_path, predictions)


def test_the_index_takes_each_id_once_and_lists_the_rest_in_file_order(tmp_path: Path) -> None:
    path = write_json(tmp_path / "p.json", {
        "answer": {"a": "x", "b": "y", "c": "z"},
        "sp": {"d": [["T", 1]], "b": [], "e": [["U", 0], ["U", 0]]},
    })  # fmt: skip
    predictions = read_predictions_quickly(path, HotpotPrediction)
    assert predictions is not None and predictions.by_id == {}
    index = predictions.stream
    assert isinstance(index, OfficialIndex) and len(index) == 5
    taken = index.take("b")
    assert taken is not None and (taken.answer, taken.sp) == ("y", ())
    assert index.take("b") is None
    e = index.take("e")
    assert e is not None and e.answer is None and e.sp == (("U", 0), ("U", 0))
    assert index.unmatched() == ["a", "c", "d"]
    assert predictions.warnings == [
        f'{path}: 2 of 5 predictions have no "sp" (first: a, c); their supporting-fact and '
        "joint metrics score 0"]


@pytest.mark.parametrize("content", [
    '{"answer": {"q": "a", "q": "b"}, "sp": {}}',
    '{"answer": {"q": "a:b", "r": "c"}, "sp": {"q": [], "q": [["T", 1]]}}',
    '{"answer": {"q": "a"}, "answer": {"r": "b"}}',
    '{"answer": {"q\\u003a": "a", "q\\u003a": "b"}}',
])
def test_a_key_repeated_in_the_predictions_is_still_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content, encoding="utf-8")
    assert read_predictions_quickly(path, HotpotPrediction) is None
    with pytest.raises(InputError, match="duplicate key"):
        BENCH.predictions_for_scoring(path)


@pytest.mark.parametrize("content", [
    '{"answer": {"q": 1}}',
    '{"answer": {"q": "a"}, "sp": {"q": [["T", "1"]]}}',
    '{"answer": {"q": "a"}, "sp": {"q": [["T", 1.0]]}}',
    '{"answer": {"q": "a"}, "sp": []}',
    '{"answer": {"q": "a"}, "sp": {"q": [["T", true]]}}',
    '{"sp": {}}',
    '[]',
])
def test_unusual_predictions_get_the_checked_readers_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(content, encoding="utf-8")
    assert read_predictions_quickly(path, HotpotPrediction) is None
    with pytest.raises(InputError) as checked:
        BENCH.load_predictions(path)
    with pytest.raises(InputError) as quick:
        BENCH.predictions_for_scoring(path)
    assert str(quick.value) == str(checked.value)


def test_universal_jsonl_and_a_one_record_file_take_the_checked_reader(tmp_path: Path) -> None:
    for name, content in [("p.jsonl", '{"id": "q", "answer": "a"}\n{"id": "r", "answer": "b"}\n'),
                          ("one.json", '{"id": "q", "answer": "a", "sp": []}')]:
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        assert read_predictions_quickly(path, HotpotPrediction) is None
        assert BENCH.predictions_for_scoring(path).by_id == BENCH.load_predictions(path).by_id


def test_escaped_colons_are_indexed_with_the_checked_readers_result(tmp_path: Path) -> None:
    gold = write_json(tmp_path / "g.json", records(30))
    content = '{"answer": {"id-1": "a\\u003ab", "id-2": "yes"}, "sp": {"id-1": [["A", 0]]}}'
    predictions = tmp_path / "p.json"
    predictions.write_text(content, encoding="utf-8")
    assert read_predictions_quickly(predictions, HotpotPrediction) is not None
    assert streamed(gold, predictions, tmp_path / "out") == reference(gold, predictions)
