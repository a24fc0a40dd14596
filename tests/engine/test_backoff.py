"""``--backoff`` means the same on every command that calls a model: the first retry waits
between half of it and all of it. Checked on the waits a loopback server sees between a
failed attempt and its retry (the default, 1 s, waits at least 0.5 s)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from tests.hdr.test_agent_run import run_agent
from tests.hdr.world import SCRIPTS, build_world, scripted
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, gold_replies, run_args
from tests.run.test_suite import data_dir, mcr_answers

#: what a retry may take beyond its wait (the client sending it again, a loaded machine)
SLACK_S = 0.4


def first_retry_gaps(server: FakeOpenAI) -> list[float]:
    """Seconds between the first and second attempt of every prompt sent more than once."""
    times: dict[str, list[float]] = defaultdict(list)
    for entry in server.log:
        times[entry.prompt].append(entry.time)
    return [t[1] - t[0] for t in times.values() if len(t) > 1]


def failing_once(answer: Any) -> Any:
    def respond(prompt: str, attempt: int) -> Reply:
        return Reply(status=503, body=b"") if attempt == 0 else answer(prompt)
    return respond


def test_run_waits_what_backoff_says(tmp_path: Path) -> None:
    answers = gold_replies("hotpotqa")
    respond = failing_once(lambda p: Reply(f"Answer: {answers[asked(p)]}"))
    for backoff, low, high in (("0.02", 0.0, 0.02 + SLACK_S), ("2.4", 1.2, 2.4 + SLACK_S)):
        with FakeOpenAI(respond) as server:
            out = tmp_path / f"run-{backoff}"
            result = run_cli(*run_args("hotpotqa", server.base_url, out, tmp_path / backoff,
                                       "--limit", "2" if backoff == "0.02" else "1",
                                       "--backoff", backoff))
            assert result.returncode == 0, result.stderr
            gaps = first_retry_gaps(server)
        assert gaps and all(low <= gap <= high for gap in gaps), (backoff, gaps)
        config = json.loads((out / "config.json").read_text())
        assert config["settings"]["backoff"] == float(backoff)
        assert config["requests"]["retried_by_kind"] == {"server_error": len(gaps)}


def test_the_agent_run_waits_what_backoff_says(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    inner = scripted(SCRIPTS)

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        if "tools" in body and attempt == 0:  # every agent request fails once
            return Reply(status=503, body=b"")
        return inner(body, attempt)

    with FakeOpenAI(body_responder=respond) as server:
        result = run_agent(world, server, tmp_path / "run", "--backoff", "0.02")
        assert result.returncode == 0, result.stderr
        gaps = first_retry_gaps(server)
    assert gaps and all(gap <= 0.02 + SLACK_S for gap in gaps), gaps
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["settings"]["backoff"] == 0.02


def test_the_suite_waits_what_backoff_says(tmp_path: Path) -> None:
    data = data_dir(tmp_path / "data")
    answers = mcr_answers(data, tmp_path / "scratch")
    with FakeOpenAI(failing_once(lambda p: Reply(answers[asked(p)]))) as server:
        result = run_cli("suite", "mcr", "--data-dir", data, "--model", "openai/test-model",
                         "--base-url", server.base_url, "-o", tmp_path / "suite",
                         "--cache-dir", tmp_path / "cache", "--no-progress", "--limit", "1",
                         "--datasets", "strategyqa,hotpotqa", "--backoff", "0.02",
                         "--max-retries", "2", "--fixed-concurrency")
        assert result.returncode == 0, result.stderr
        gaps = first_retry_gaps(server)
    assert len(gaps) == 2 and all(gap <= 0.02 + SLACK_S for gap in gaps), gaps
    for name in ("strategyqa", "hotpotqa"):
        config = json.loads((tmp_path / "suite" / name / "config.json").read_text())
        assert config["settings"]["backoff"] == 0.02
        assert config["settings"]["max_retries"] == 2 and config["settings"]["adaptive"] is False
