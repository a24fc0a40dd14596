"""``hopscore run --batch``: a single-turn run's requests through a provider's batch API."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.batch_server import BatchServer, Plan
from tests.conftest import run_cli

ITEM = re.compile(r"item number (\d+)\?")


def answer(prompt: str) -> str:
    found = ITEM.findall(prompt)
    assert found, prompt
    return f"Answer: {found[-1]}"


def gold(path: Path, n: int) -> Path:
    path.write_text("Question,Answer,Answer_corrected\n" + "".join(
        f"What is item number {i}?,{i},\n" for i in range(n)), encoding="utf-8")
    return path


def run_args(server: BatchServer, tmp_path: Path, n: int, *extra: str) -> list[str | Path]:
    return ["run", "bamboogle", "--gold", gold(tmp_path / "g.csv", n), "--model", "openai/m",
            "--base-url", server.base_url, "-o", tmp_path / "run", "--no-progress",
            "--resamples", "0", "--batch", "--batch-poll", "0.02", *extra]


def test_a_run_goes_in_one_batch_and_scores_every_sample(tmp_path: Path) -> None:
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    with BatchServer(answer, Plan(fail_marker="item number 5?")) as server:
        result = run_cli(*run_args(server, tmp_path, 60), env=env)
        assert result.returncode == 0, result.stderr
        assert server.submissions == 1
        assert server.chat_requests == 1  # the request the batch failed, sent the normal way
        rows = [json.loads(line) for line in
                (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
        assert sorted(int(r["id"]) for r in rows) == list(range(60))
        assert all(r["answer"] == r["id"] for r in rows)
        metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
        assert metrics["metrics"]["em"] == 1.0
        again = run_cli(*run_args(server, tmp_path, 60), env=env)
        assert again.returncode == 0, again.stderr
        assert server.submissions == 1 and server.chat_requests == 1


def test_a_strategy_that_asks_again_is_refused(tmp_path: Path) -> None:
    with BatchServer(answer) as server:
        result = run_cli(*run_args(server, tmp_path, 3, "--strategy", "self-ask"),
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2
    assert "--batch is for single-turn runs on an endpoint: --strategy self-ask" in result.stderr
    assert server.submissions == 0 and server.chat_requests == 0
