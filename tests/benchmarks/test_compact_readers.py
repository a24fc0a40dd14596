"""The compact readers of large files give what the checked readers give, or step aside.

:func:`index_universal` (universal JSON Lines predictions as a hash/offset index) and
:func:`read_reference_quickly` (HybridQA's reference with locations folded into the answers)
must yield the same predictions and examples as ``load_universal`` and the standard-library
reading, and return None for anything unusual, so that the checked readers name the problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks.base import load_universal, quick_answer
from hopscore.benchmarks.hybridqa import HybridQA
from hopscore.benchmarks.hybridqa.reference import read_reference_quickly
from hopscore.benchmarks.universal_index import index_universal
from hopscore.errors import InputError
from tests.benchmarks.helpers import score, write_json
from tests.conftest import FIXTURES

REFERENCE = FIXTURES / "hybridqa" / "dev_reference_small.json"


def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _lines(path: Path, rows: list[Any], raw: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + raw, encoding="utf-8")
    return path


def _parse(record: Any, example_id: str) -> Any:
    return quick_answer({"answer": record.str("answer")}, example_id)


def test_index_takes_what_the_loader_reads(tmp_path: Path) -> None:
    rows = [{"id": f"q{i}", "answer": f"a:{i} é"} for i in range(500)]
    path = _lines(tmp_path / "p.jsonl", rows[:250], "\n  \n" + "".join(
        json.dumps(r) + "\r\n" for r in rows[250:]))
    indexed = index_universal(path, quick_answer)
    assert indexed is not None and indexed.stream is not None and indexed.by_id == {}
    loaded = load_universal(path, _parse, quick=quick_answer)
    stream = indexed.stream
    assert len(stream) == len(loaded) == 500
    for example_id in ["q7", "q499", "q0", "nope", "q7"]:  # the second q7: taken already
        expected = loaded.pop(example_id, None)
        assert stream.take(example_id) == expected
    assert stream.unmatched() == list(loaded)  # the file's order


@pytest.mark.parametrize("raw", [
    '{"id": "q1", "answer": "again"}\n',  # a repeated id: load_universal names its lines
    '{"id": "q2", "answer": 3}\n',  # not the quick reader's record
    '["q3"]\n', '{"id": " q4", "answer": "x"}\n', '{"id": "q5", "answer": NaN}\n',
    '{"id": "q6", "answer": "x"\n',
])
def test_index_steps_aside_for_anything_unusual(tmp_path: Path, raw: str) -> None:
    path = _lines(tmp_path / "p.jsonl", [{"id": "q1", "answer": "a"}], raw)
    assert index_universal(path, quick_answer) is None


def test_index_of_an_empty_file_is_left_to_the_loader(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    assert index_universal(path, quick_answer) is None


def test_quick_reference_gives_the_checked_examples(tmp_path: Path) -> None:
    data = reference()
    first = next(iter(data["reference"]))
    data["reference"][first] = "a: colon, and \"quotes\""
    path = tmp_path / "ref.json"
    path.write_text("\ufeff" + json.dumps(data, indent=1), encoding="utf-8")
    quick = read_reference_quickly(path)
    assert quick is not None and len(quick) == len(data["reference"])
    bench = HybridQA()
    examples = list(bench.iter_gold(path))
    tables = set(data["table"])
    assert [(e.id, e.answer, e.location) for e in examples] == [
        (qid, answer, "table" if qid in tables else "passage" if qid in data["passage"] else None)
        for qid, answer in data["reference"].items()]


@pytest.mark.parametrize("edit", ["repeat", "escaped", "listed twice", "unknown id", "number"])
def test_quick_reference_steps_aside_and_the_checked_reading_names_it(
        tmp_path: Path, edit: str) -> None:
    data = reference()
    ids = list(data["reference"])
    text = json.dumps(data)
    if edit == "repeat":  # msgspec would keep the last; the colon count notices
        text = text.replace(f'"{ids[1]}":', f'"{ids[0]}":', 1)
    elif edit == "escaped":
        data["reference"][ids[0]] = "x\u003ay"
        text = json.dumps(data).replace("x:y", "x\\u003ay")
    elif edit == "listed twice":
        data["passage"] = data["passage"] + data["table"][:1]
        text = json.dumps(data)
    elif edit == "unknown id":
        data["table"] = [*data["table"], "not-an-id"]
        text = json.dumps(data)
    else:
        data["reference"][ids[0]] = 3
        text = json.dumps(data)
    path = tmp_path / "ref.json"
    path.write_text(text, encoding="utf-8")
    assert read_reference_quickly(path) is None
    if edit == "escaped":  # valid: read by the standard library, the same answer
        assert next(iter(HybridQA().iter_gold(path))).answer == "x:y"
        return
    with pytest.raises(InputError):
        list(HybridQA().iter_gold(path))


def test_scores_through_the_compact_readers_match_the_loaded_ones(tmp_path: Path) -> None:
    data = reference()
    rows = [{"id": qid, "answer": answer if i % 3 else "wrong"}
            for i, (qid, answer) in enumerate(data["reference"].items()) if i % 5]
    rows.append({"id": "extra", "answer": "x"})
    universal = _lines(tmp_path / "p.jsonl", rows)
    official = write_json(tmp_path / "p.json",
                          [{"question_id": r["id"], "pred": r["answer"]} for r in rows])
    compact = score("hybridqa", REFERENCE, universal)
    loaded = score("hybridqa", REFERENCE, official)
    assert compact.metrics == loaded.metrics and compact.extra_ids == loaded.extra_ids
    assert compact.missing_ids == loaded.missing_ids
    assert {k: g.metrics for k, g in compact.groups.items()} == {
        k: g.metrics for k, g in loaded.groups.items()}
