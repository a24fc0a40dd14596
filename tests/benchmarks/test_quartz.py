"""QuaRTz: answer-to-choice resolution, label CSV predictions, gold validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.benchmarks.quartz import QuaRTz, QuartzPrediction, resolve_choice
from hopscore.errors import InputError
from tests.benchmarks.helpers import score, write_jsonl
from tests.conftest import FIXTURES

BENCH = QuaRTz()
GOLD = FIXTURES / "quartz" / "dev_small.jsonl"
CHOICES = (("A", "more resistance"), ("B", "less resistance"))


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("A", "A"),
        (" B\n", "B"),
        ("A. more resistance", "A"),
        ("B) less", "B"),
        ("(B) less", "B"),
        ("A: more resistance", "A"),
        ("A.", "A"),
        ("More resistance.", "A"),
        ("the less resistance", "B"),
        # no single choice: 0, as MCR would also score most of these
        ("", None),
        ("a", None),
        ("Because of heat", None),
        ("resistance", None),
        ("C", None),
        ("more or less resistance", None),
    ],
)
def test_resolve_choice(answer: str, label: str | None) -> None:
    assert resolve_choice(answer, CHOICES) == label


def test_empty_answer_scores_zero_but_is_not_missing(tmp_path: Path) -> None:
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
    records = [{"id": r["id"], "answer": ""} for r in gold]
    report = score("quartz", GOLD, write_jsonl(tmp_path / "p.jsonl", records))
    assert report.metrics == {"accuracy": 0.0} and report.missing_ids == []


def test_label_field_and_choice_text(tmp_path: Path) -> None:
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
    records: list[dict[str, Any]] = []
    for i, r in enumerate(gold):
        key = r["answerKey"]
        text = next(c["text"] for c in r["question"]["choices"] if c["label"] == key)
        records.append({"id": r["id"], "label": key} if i % 2 else {"id": r["id"], "answer": text})
    report = score("quartz", GOLD, write_jsonl(tmp_path / "p.jsonl", records[:-1]))
    assert report.metrics["accuracy"] == 11 / 12 and report.missing_ids == [gold[-1]["id"]]


def test_leaderboard_csv(tmp_path: Path) -> None:
    path = tmp_path / "predictions.csv"
    gold = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
    path.write_text("id,answer\n" + "".join(f"{r['id']},{r['answerKey']}\n" for r in gold))
    assert score("quartz", GOLD, path).metrics == {"accuracy": 1.0}
    path.write_text("qz-01,A\nqz-02,B\n")
    report = score("quartz", GOLD, path)
    assert report.metrics == {"accuracy": 1 / 12} and len(report.missing_ids) == 10


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("qz-01,A\nqz-01,B\n", "p.csv:2: duplicate id 'qz-01' (first seen at line 1)"),
        ("qz-01,A,B\n", "p.csv:1: expected question_id,answer_label; got 3 cells"),
        ("\n\n", "no predictions found"),
    ],
)
def test_bad_leaderboard_csv(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        score("quartz", GOLD, path)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answerKey": "C"}, "field 'answerKey': 'C' is not a choice label"),
        ({"question": {"stem": "s", "choices": [{"label": "A"}]}}, "field 'question.choices[0]'"),
        ({"question": "s"}, "field 'question': expected an object"),
        ({"answerKey": None}, "field 'answerKey': expected a string, got null"),
    ],
)
def test_bad_gold(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    records = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
    records[1].update(change)
    with pytest.raises(InputError) as info:
        BENCH.load_gold(write_jsonl(tmp_path / "g.jsonl", records))
    assert message in str(info.value) and "g.jsonl:2" in str(info.value)


def test_bad_universal_predictions(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"p\.jsonl:1: field 'answer': expected a string, got null"
    ):
        score("quartz", GOLD, write_jsonl(tmp_path / "p.jsonl", [{"id": "qz-01", "answer": None}]))
    path = tmp_path / "p.json"
    path.write_text('[{"id": "qz-01", "answer": "A"}]')
    with pytest.raises(InputError, match="expected JSON Lines"):
        score("quartz", GOLD, path)


@given(st.text(max_size=20))
def test_resolution_is_a_label_or_none(answer: str) -> None:
    label = resolve_choice(answer, CHOICES)
    assert label in (None, "A", "B")
    gold = BENCH.load_gold(GOLD)[1]
    assert BENCH.score(gold, QuartzPrediction(id=gold.id, answer=answer))["accuracy"] in (0.0, 1.0)
