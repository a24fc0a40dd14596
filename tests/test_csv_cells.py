"""CSV cells longer than the csv module's default field limit (131,072 characters): a gold or
prediction file holding one stopped the command with "field larger than field limit" (exit 3).
The files are written by Python's csv module."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.conftest import run_cli, shared_file

LONG = 200_000


def test_a_long_cell_in_a_bamboogle_gold_csv(tmp_path: Path) -> None:
    records = json.loads(shared_file(
        "bamboogle/bamboogle_test_questions_and_answers.json").read_text())[:20]
    records[3]["question"] = "Context: " + "many words " * (LONG // 11) + records[3]["question"]
    gold = tmp_path / "gold.csv"
    with gold.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Question", "Answer"])
        writer.writerows([r["question"], r["answer"]] for r in records)
    assert max(len(line) for line in gold.read_text().splitlines()) > LONG
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": str(i), "answer": r["answer"]}) + "\n"
                                   for i, r in enumerate(records)))
    result = run_cli("score", "bamboogle", "--gold", gold, "-p", predictions, "--resamples", "0",
                     "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["metrics"]["em"] == 1.0


def test_a_long_cell_in_a_quartz_leaderboard_csv(tmp_path: Path) -> None:
    from hopscore import benchmarks

    gold = Path(benchmarks.__file__).parent / "quartz" / "samples" / "dev.jsonl"
    ids = [json.loads(line)["id"] for line in gold.read_text().splitlines() if line.strip()]
    predictions = tmp_path / "p.csv"
    with predictions.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerows([[qid, "A"] for qid in ids[:-1]])
        writer.writerow([ids[-1], "B " + "x" * LONG])
    result = run_cli("score", "quartz", "--gold", gold, "-p", predictions, "--resamples", "0",
                     "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "field larger than field limit" not in result.stderr

