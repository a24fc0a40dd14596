"""Bamboogle: MCR's evaluator semantics and the three gold layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.benchmarks.bamboogle import Bamboogle, mcr_scores
from hopscore.errors import InputError
from hopscore.text.normalize import normalize_answer
from tests.benchmarks.helpers import score, write_json, write_jsonl
from tests.conftest import FIXTURES, shared_file

BENCH = Bamboogle()
FOLDER = FIXTURES / "bamboogle"


def test_set_f1_underscores_repeated_tokens() -> None:
    assert mcr_scores("Bora Bora", normalize_answer("Bora Bora")) == (1.0, 0.5)
    assert mcr_scores("", "") == (1.0, 1.0)
    assert mcr_scores("the", normalize_answer("George VI\n")) == (0.0, 0.0)
    assert mcr_scores("george vi", normalize_answer("George VI\n")) == (1.0, 1.0)


def test_json_csv_and_tsv_layouts_agree() -> None:
    from_json = BENCH.load_gold(FOLDER / "gold_small.json")
    from_csv = BENCH.load_gold(FOLDER / "gold_small.csv")
    from_tsv = BENCH.load_gold(FOLDER / "gold_small_prerelease.tsv")
    assert [e.id for e in from_json] == [str(i) for i in range(16)] == [e.id for e in from_tsv]
    assert [e.answer_normalized for e in from_json] == [e.answer_normalized for e in from_tsv]
    # Answer_corrected wins when it is non-empty (rows 6 and 9), as in MCR's reader
    changed = [e.id for e, c in zip(from_json, from_csv, strict=True) if e.answer != c.answer]
    assert changed == ["6", "9"]
    assert from_csv[6].answer == "2" and from_csv[9].answer == "Henrik V"


def test_shared_copy_loads_with_positional_ids() -> None:
    gold = BENCH.load_gold(shared_file("bamboogle/bamboogle_test_questions_and_answers.json"))
    assert len(gold) == 125 and gold[0].id == "0" and gold[-1].id == "124"
    assert any(e.answer.endswith("\n") for e in gold)  # kept as written; normalization strips it


def test_id_map_predictions_and_missing_ids(tmp_path: Path) -> None:
    gold = json.loads((FOLDER / "gold_small.json").read_text(encoding="utf-8"))
    preds = {str(i): r["answer"] for i, r in enumerate(gold)}
    del preds["3"]
    preds["99"] = "extra"
    report = score("bamboogle", FOLDER / "gold_small.json", write_json(tmp_path / "p.json", preds))
    assert report.missing_ids == ["3"] and report.extra_ids == ["99"]
    assert report.metrics["em"] == 15 / 16


def test_blank_lines_take_no_position(tmp_path: Path) -> None:
    path = tmp_path / "g.csv"
    path.write_text("Question,Answer\nq1,a1\n\n  \nq2,a2\n", encoding="utf-8")
    assert [(e.id, e.answer) for e in BENCH.load_gold(path)] == [("0", "a1"), ("1", "a2")]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("g.csv", "Q,A\nq,a\n", "expected a header with Question and Answer columns"),
        ("g.csv", "Question,Answer\nq,a,b\n", "g.csv:2: 3 cells but the header has 2"),
        ("g.tsv", "a\tb\tc\td\te\nq\tx\n", "g.tsv:2: no answer"),
        ("g.json", '{"question": "q"}', "expected a JSON list"),
        ("g.json", '[{"question": "q"}]', "record [0]: field 'answer': missing"),
        ("g.json", '[{"question": "q", "answer": 3}]', "field 'answer': expected a string"),
        ("g.json", "[]", "no questions found"),
    ],
)
def test_bad_gold(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        BENCH.load_gold(path)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"id": "0", "answer": None}], "p.jsonl:1: field 'answer': expected a string, got null"),
        ([{"id": "0", "answer": ["x"]}], "field 'answer': expected a string, got list"),
        (
            [{"id": "0", "answer": "a"}, {"id": "0", "answer": "b"}],
            "p.jsonl:2: field 'id': duplicate",
        ),
        ([{"id": "0"}, {"id": "1"}], "p.jsonl:1: field 'answer': missing"),
    ],
)
def test_bad_predictions(tmp_path: Path, records: list[Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        score("bamboogle", FOLDER / "gold_small.json", write_jsonl(tmp_path / "p.jsonl", records))
    assert message in str(info.value)


def test_id_map_with_non_string_answer(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="record '0': expected a string answer, got number"):
        score("bamboogle", FOLDER / "gold_small.json", write_json(tmp_path / "p.json", {"0": 1}))


words = st.sampled_from(["Bora", "bora", "the", "Paris", "x", "y.", "1,000"])
texts = st.lists(words, max_size=4).map(" ".join)


@given(texts, texts)
def test_scores_in_range_and_em_implies_f1_without_repeats(pred: str, gold: str) -> None:
    em, f1 = mcr_scores(pred, normalize_answer(gold))
    assert 0.0 <= f1 <= 1.0
    tokens = normalize_answer(gold).split()
    if em == 1.0 and len(set(tokens)) == len(tokens):
        assert f1 == 1.0
