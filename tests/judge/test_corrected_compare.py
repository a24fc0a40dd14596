"""``compare --judge-calibration``: two runs judged by one calibrated judge, corrected with the
shared calibration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.inference.judge_error import Confusion, corrected_difference
from tests.conftest import run_cli

JUDGE = {"model": "judge-m", "endpoint": "http://127.0.0.1:9/v1", "prompt_sha256": "ab" * 32,
         "status": "judged"}


def judged_file(path: Path, verdicts: list[bool], model: str = "judge-m") -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for i, correct in enumerate(verdicts):
            handle.write(json.dumps({
                "id": f"q{i}", "question": f"question {i}", "response": f"answer {i}",
                "correct_answer": "gold", "correct": correct, "parse_ok": True,
                "raw_judge_output": "correct: yes" if correct else "correct: no",
                "error": None, "judge": {**JUDGE, "model": model}}) + "\n")
    return path


def calibration_file(path: Path, model: str = "judge-m") -> Path:
    path.write_text(json.dumps({
        "format": "hopscore-judge-calibration", "version": 1,
        "judge": {k: JUDGE[k] for k in ("endpoint", "prompt_sha256")} | {"model": model},
        "level": 0.95,
        "counts": {"true_pos": 90, "false_neg": 10, "false_pos": 20, "true_neg": 80}}),
        encoding="utf-8")
    return path


def test_the_difference_divides_by_the_shared_youden_index(tmp_path: Path) -> None:
    # A right on rows 0-99, B on rows 20-139: B-only 40, A-only 20, of 200
    a = judged_file(tmp_path / "a.jsonl", [i < 100 for i in range(200)])
    b = judged_file(tmp_path / "b.jsonl", [20 <= i < 140 for i in range(200)])
    cal = calibration_file(tmp_path / "cal.json")
    result = run_cli("compare", a, b, "--judge-calibration", cal, "--json")
    assert result.returncode == 0, result.stderr
    pair = json.loads(result.stdout)["judge_correction"][0]
    assert pair["n"] == 200
    assert pair["a_accuracy"]["raw"] == 0.5 and pair["b_accuracy"]["raw"] == 0.6
    difference = pair["difference"]
    assert difference["raw_difference"] == pytest.approx(0.1)
    assert difference["corrected_difference"] == pytest.approx(0.1 / 0.7)
    expected = corrected_difference(20, 40, 200, Confusion(90, 10, 20, 80))
    assert difference["corrected_ci"]["low"] == pytest.approx(expected.low)
    table = run_cli("compare", a, b, "--judge-calibration", cal)
    assert table.returncode == 0, table.stderr
    assert "corrected for its errors" in table.stdout and "+0.143 [" in table.stdout
    ours = table.stdout[table.stdout.index("judge accuracy corrected"):]
    assert all(len(line) <= 80 for line in ours.splitlines())


def test_runs_of_another_judge_are_refused(tmp_path: Path) -> None:
    a = judged_file(tmp_path / "a.jsonl", [True, False] * 10)
    b = judged_file(tmp_path / "b.jsonl", [False, True] * 10, model="other")
    result = run_cli("compare", a, b, "--judge-calibration", calibration_file(tmp_path / "c.json"))
    assert result.returncode == 2
    assert "calibrates another judge" in result.stderr and "'other'" in result.stderr
