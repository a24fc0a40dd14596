"""``--json`` on score, run, compare and suite: stdout is one JSON document (what the command
writes to disk), whatever the terminal width; messages stay on stderr."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI
from tests.stub_models import docs_model

#: the benchmarks' packages: each built-in sample in <package>/samples/
PACKAGES = Path(__file__).resolve().parents[1] / "src" / "hopscore" / "benchmarks"
HOTPOT_SAMPLE = PACKAGES / "hotpotqa" / "samples"
BAMBOOGLE_SAMPLE = PACKAGES / "bamboogle" / "samples"
GOLD = HOTPOT_SAMPLE / "gold.json"


def stdout_json(*args: object, status: int = 0) -> tuple[Any, str]:
    result = run_cli(*args, "--json", env={"COLUMNS": "40"})  # narrow: nothing may wrap
    assert result.returncode == status, result.stderr
    return json.loads(result.stdout), result.stderr


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_score_json_is_metrics_json(tmp_path: Path) -> None:
    data, stderr = stdout_json("score", "hotpotqa", "-g", GOLD, "-p",
                               HOTPOT_SAMPLE / "predictions.json", "-o", tmp_path)
    assert data == read(tmp_path / "metrics.json")
    assert data["metrics"]["em"] == 0.6 and "ci" in data
    assert "wrote" in stderr


def test_score_json_keeps_warnings_on_stderr(tmp_path: Path) -> None:
    predictions = tmp_path / "one.jsonl"
    predictions.write_text('{"id": "0", "answer": "Jonas Arden"}\n', encoding="utf-8")
    data, stderr = stdout_json("score", "bamboogle", "-g", BAMBOOGLE_SAMPLE / "gold.csv",
                               "-p", predictions, "--resamples", "0")
    assert data["missing_ids"] and "warning:" in stderr


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with FakeOpenAI(body_responder=docs_model(PACKAGES)) as server:
        yield server.base_url


def test_score_judge_json(model_url: str, tmp_path: Path) -> None:
    data, _ = stdout_json("score", "hotpotqa", "-g", GOLD, "-p",
                          HOTPOT_SAMPLE / "predictions.json", "--judge",
                          "--judge-model", "judge", "--judge-base-url", model_url,
                          "-o", tmp_path)
    assert data == read(tmp_path / "metrics.json")
    assert data["judge"]["model"] == "judge" and "judge_accuracy" in data["metrics"]


def test_run_json_is_metrics_json(model_url: str, tmp_path: Path) -> None:
    data, stderr = stdout_json("run", "hotpotqa", "--gold", GOLD, "--model",
                               "openai/gpt-4o-mini", "--base-url", model_url, "--no-cache",
                               "--no-progress", "-o", tmp_path / "run")
    assert data == read(tmp_path / "run" / "metrics.json")
    assert data["run"]["samples"] == 5 and "wrote" in stderr


def test_compare_json_is_the_output_file(tmp_path: Path) -> None:
    for name, predictions in (("a", HOTPOT_SAMPLE / "predictions.json"), ("b", None)):
        if predictions is None:
            predictions = tmp_path / "perfect.jsonl"
            predictions.write_text("".join(
                json.dumps({"id": r["_id"], "answer": r["answer"]}) + "\n"
                for r in read(GOLD)), encoding="utf-8")
        assert run_cli("score", "hotpotqa", "-g", GOLD, "-p", predictions,
                       "-o", tmp_path / name).returncode == 0
    data, _ = stdout_json("compare", tmp_path / "a", tmp_path / "b", "-o", tmp_path / "c.json")
    assert data == read(tmp_path / "c.json")
    assert data["comparisons"][0]["metrics"]["em"]["delta"] == pytest.approx(0.4)


def test_suite_json_is_suite_json(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    result = run_cli("suite", "mcr", "--data-dir", tmp_path / "data", "--model", "openai/x",
                     "--base-url", "http://127.0.0.1:9/v1", "-o", tmp_path / "out", "--json",
                     env={"COLUMNS": "40"})
    assert result.returncode == 2, result.stderr  # nothing to run: an error, after the result
    data = json.loads(result.stdout)
    assert data == read(tmp_path / "out" / "suite.json")
    assert {row["status"] for row in data["datasets"]} == {"missing"}
