"""The public per-example metrics on gold written as text: StrategyQA answers read from a CSV
file, QuaRTz choices given as their texts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hopscore import metrics
from tests.conftest import shared_file
from tests.parity.common import SAMPLES


def test_strategyqa_gold_read_from_a_csv_file(tmp_path: Path) -> None:
    """csv writes the gold booleans as "True"/"False"; scored against them every answer was
    wrong (accuracy 0, no warning)."""
    gold = json.loads(shared_file("strategyqa/eladsegal/dev.json").read_text())
    path = tmp_path / "gold.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["qid", "answer"])
        writer.writeheader()
        writer.writerows({"qid": r["qid"], "answer": r["answer"]} for r in gold)
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["answer"] for row in rows} == {"True", "False"}
    replies = ["yes" if r["answer"] == (i % 4 != 0) else "no" for i, r in enumerate(gold)]
    from_bools = [metrics.strategyqa_answer(reply, r["answer"])["accuracy"]
                  for reply, r in zip(replies, gold, strict=True)]
    from_csv = [metrics.strategyqa_answer(reply, row["answer"])["accuracy"]
                for reply, row in zip(replies, rows, strict=True)]
    assert from_csv == from_bools and 0 < sum(from_csv) < len(from_csv)
    assert metrics.strategyqa_answer("yes", "yes") == {"accuracy": 1.0}
    assert metrics.strategyqa_answer("No", " FALSE ") == {"accuracy": 1.0}
    assert metrics.strategyqa_answer(True, "0") == {"accuracy": 0.0}
    for bad in ("maybe", "", None, 2, 0.5):
        with pytest.raises(ValueError, match="strategyqa_answer: the gold must be a boolean"):
            metrics.strategyqa_answer("yes", bad)  # type: ignore[arg-type]


def test_quartz_choices_as_texts() -> None:
    """quartz_answer("A", ["increase", "decrease"], "A") raised a bare ValueError (a text
    unpacked as a label and text)."""
    assert metrics.quartz_answer("A", ["increase", "decrease"], "A") == {"accuracy": 1.0}
    assert metrics.quartz_answer("decrease", ["increase", "decrease"], "B") == {"accuracy": 1.0}
    assert metrics.quartz_answer("(B)", ["increase", "decrease"], "A") == {"accuracy": 0.0}
    records = [json.loads(line) for line in (SAMPLES / "quartz" / "dev.jsonl").read_text()
               .splitlines() if line.strip()]
    for record in records:
        choices = record["question"]["choices"]
        texts = [c["text"] for c in choices]
        pairs = [(c["label"], c["text"]) for c in choices]
        for answer in ("A", "B", texts[0], texts[1]):
            assert metrics.quartz_answer(answer, texts, record["answerKey"]) == \
                metrics.quartz_answer(answer, pairs, record["answerKey"])
    with pytest.raises(ValueError, match="answer key 'C' is not one of the choice labels"):
        metrics.quartz_answer("A", ["increase", "decrease"], "C")
    with pytest.raises(TypeError, match="quartz_answer: choices must be"):
        metrics.quartz_answer("A", "AB", "A")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="quartz_answer: choices must be"):
        metrics.quartz_answer("A", [("A", "x", "y")], "A")  # type: ignore[list-item]
