"""``hopscore score --judge``: judge_accuracy beside the benchmark's metrics, and disagreements."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.judge.score_judge import expected_answer, match_metric
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply

SAMPLES = (Path(__file__).resolve().parents[2] / "src" / "hopscore" / "benchmarks" / "hotpotqa"
           / "samples")

#: judge verdicts by a phrase of each sample question (EM: hp-1 1, hp-2 1, hp-3 1, hp-4 0, hp-5 0)
VERDICTS = {"clockmaker": True, "Arden Tower and the Miren": False, "instrument": True,
            "Which is taller": False, "How many people": True}


def verdict(prompt: str, attempt: int) -> Reply:
    for phrase, correct in VERDICTS.items():
        if phrase in prompt:
            return judge_reply(correct)
    raise AssertionError(prompt)


def predictions_without(tmp_path: Path, example_id: str) -> Path:
    data = json.loads((SAMPLES / "predictions.json").read_text(encoding="utf-8"))
    for part in data.values():
        part.pop(example_id, None)
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def score_args(server: FakeOpenAI, predictions: Path, out: Path | None) -> list[Any]:
    args: list[Any] = ["score", "hotpotqa", "-g", SAMPLES / "gold.json", "-p", predictions,
                       "--judge", "--judge-model", "judge-m", "--judge-base-url", server.base_url]
    return [*args, "-o", out] if out else args


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost"}


def test_judge_accuracy_groups_disagreements_and_files(tmp_path: Path, env: dict[str, str]) -> None:
    out = tmp_path / "out"
    with FakeOpenAI(verdict) as server:
        result = run_cli(*score_args(server, SAMPLES / "predictions.json", out), env=env)
        assert result.returncode == 0, result.stderr
        assert len(server.log) == 5
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["metrics"]["judge_accuracy"] == pytest.approx(0.6)
        assert metrics["metrics"]["em"] == pytest.approx(0.6)
        assert metrics["groups"]["bridge"]["metrics"]["judge_accuracy"] == 1.0  # hp-1, 3, 5
        assert metrics["groups"]["comparison"]["metrics"]["judge_accuracy"] == 0.0
        assert metrics["judge"]["compared_with"] == "em" and metrics["judge"]["disagreements"] == 2
        # EM 1,1,1,0,0 vs judge 1,0,1,0,1: 3 of 5 agree, expected 0.6 * 0.6 + 0.4 * 0.4 = 0.52
        agreement = metrics["judge"]["agreement"]["overall"]
        assert agreement["n"] == 5 and agreement["agreement"] == pytest.approx(0.6)
        assert agreement["kappa"] == pytest.approx(0.08 / 0.48)
        assert len(metrics["judge"]["predictions_sha256"]) == 64
        assert "judge vs em" in result.stdout and "kappa" in result.stdout
        assert metrics["judge"]["model"] == "judge-m"
        scores = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
        assert [s["metrics"]["judge_accuracy"] for s in scores] == [1.0, 0.0, 1.0, 0.0, 1.0]
        disagreements = [json.loads(line) for line in
                         (out / "judge_disagreements.jsonl").read_text().splitlines()]
        assert [(d["id"], d["metric_value"], d["judge_correct"]) for d in disagreements] == [
            ("sample-hp-2", 1.0, False), ("sample-hp-5", 0.0, True)]
        judged = [json.loads(line) for line in (out / "judge.jsonl").read_text().splitlines()]
        assert [r["id"] for r in judged] == [f"sample-hp-{i}" for i in range(1, 6)]
        assert judged[0]["correct_answer"] == "Lake Miren" and judged[0]["response"] == "Lake Miren"
        assert "judge_accuracy" in result.stdout and "2 disagreements" in result.stdout
        assert "the judge and em disagree on 2 of 5 examples" in result.stderr

        again = run_cli(*score_args(server, SAMPLES / "predictions.json", out), env=env)
        assert again.returncode == 0 and len(server.log) == 5  # resumed from judge.jsonl


def test_missing_prediction_is_wrong_without_a_call_and_no_output_dir(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with FakeOpenAI(verdict) as server:
        result = run_cli(*score_args(server, predictions_without(tmp_path, "sample-hp-5"), None),
                         env={**env, "HOPSCORE_CACHE_DIR": str(tmp_path / "c2")})
        assert result.returncode == 0, result.stderr
        assert len(server.log) == 4 and server.count("How many people") == 0
        row = next(line for line in result.stdout.splitlines() if "judge_accuracy" in line)
        assert "40.00" in row  # hp-1 and hp-3 only


def test_judge_errors_give_status_1_and_a_rerun_retries_only_them(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "out"

    def flaky(prompt: str, attempt: int) -> Reply:
        return Reply(status=500) if "instrument" in prompt else verdict(prompt, attempt)

    with FakeOpenAI(flaky) as server:
        args = [*score_args(server, SAMPLES / "predictions.json", out), "--judge-max-retries", "1"]
        failed = run_cli(*args, env={**env, "HOPSCORE_CACHE_DIR": str(tmp_path / "c3")})
        assert failed.returncode == 1
        assert "the judge failed on 1 example (no verdict" in failed.stderr
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["metrics"]["judge_accuracy"] == pytest.approx(0.4)
        assert metrics["judge"]["errors"] == 1
        server.responder = verdict
        sent = len(server.log)
        fixed = run_cli(*args, env={**env, "HOPSCORE_CACHE_DIR": str(tmp_path / "c3")})
        assert fixed.returncode == 0, fixed.stderr
        assert len(server.log) - sent == 1 and "instrument" in server.log[-1].prompt
        assert json.loads((out / "metrics.json").read_text())["metrics"]["judge_accuracy"] == 0.6


def test_judge_model_is_required(tmp_path: Path, env: dict[str, str]) -> None:
    result = run_cli("score", "hotpotqa", "-g", SAMPLES / "gold.json", "-p",
                     SAMPLES / "predictions.json", "--judge", env={**env, "JUDGE_MODEL": ""})
    assert result.returncode == 2 and "JUDGE_MODEL" in result.stderr


def test_helpers() -> None:
    assert match_metric(["f1", "em"]) == "em"
    assert match_metric(["label_accuracy", "feverous_score"]) == "label_accuracy"
    assert match_metric(["fp_score"]) == "fp_score"
    assert expected_answer(("Paris",)) == "Paris"
    assert expected_answer(("USA", "United States", " ")) == "any of: USA | United States"
    assert expected_answer(()) == ""
