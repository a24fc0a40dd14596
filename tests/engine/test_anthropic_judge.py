"""``judge --model anthropic/NAME`` (and an HDR run's ``--judge-model anthropic/NAME``): the
judge on Claude through the native Messages API, against the loopback server of
tests/anthropic_server.py, which rejects what the real API rejects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.anthropic_server import FakeAnthropic, Message, as_openai
from tests.conftest import run_cli
from tests.hdr.test_agent_run import jsonl
from tests.hdr.world import SCRIPTS, build_world, scripted
from tests.hdr.world import judge_reply as hdr_judge_reply
from tests.openai_server import FakeOpenAI, judge_reply

pytest.importorskip("anthropic")

ROWS = [{"id": i, "question": f"Question {i}?", "response": f"answer {i}",
         "correct_answer": f"answer {i}" if i % 2 == 0 else "something else"} for i in range(6)]


def prompt_of(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    return content if isinstance(content, str) else content[0]["text"]


def claude_judge(body: dict[str, Any], attempt: int) -> Message:
    prompt = prompt_of(body)
    if "Question 3?" in prompt and attempt == 0:
        return Message(status=529, headers={"retry-after": "0"})  # overloaded: retried
    index = next(i for i in range(len(ROWS)) if f"Question {i}?" in prompt)
    reply = judge_reply(index % 2 == 0, answer=f"answer {index}")
    return Message(reply.content, stop_reason="end_turn")


def write_rows(path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def test_the_judge_runs_on_claude_caches_and_resumes(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl")
    out = tmp_path / "judged.jsonl"
    env = {"ANTHROPIC_API_KEY": "sk-ant-judge", "JUDGE_API_KEY": "",
           "HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    with FakeAnthropic(claude_judge) as server:
        args = ["judge", "-i", rows, "-o", out, "--model", "anthropic/claude-judge",
                "--base-url", server.base_url, "--no-progress", "--backoff", "0.01"]
        result = run_cli(*args, env=env)
        assert result.returncode == 0, result.stderr
        assert server.rejected == []
        assert len(server.log) == len(ROWS) + 1  # one 529, retried
        assert {body["model"] for body in server.log} == {"claude-judge"}
        assert all(body["temperature"] == 0 and isinstance(body["max_tokens"], int)
                   for body in server.log)
        assert set(server.keys) == {"sk-ant-judge"}
        again = run_cli(*args, env=env)  # resumed: nothing asked
        fresh = run_cli(*[tmp_path / "other.jsonl" if a == out else a for a in args], env=env)
        assert again.returncode == fresh.returncode == 0, (again.stderr, fresh.stderr)
        assert len(server.log) == len(ROWS) + 1  # the fresh output was answered by the cache
    judged = jsonl(out)
    assert [row["correct"] for row in judged] == [i % 2 == 0 for i in range(len(ROWS))]
    assert all(row["parse_ok"] for row in judged)
    meta = judged[3]["judge"]
    assert meta["model"] == "anthropic/claude-judge"
    assert meta["endpoint"] == f"anthropic:{server.base_url}"
    assert [a["status"] for a in meta["attempts"]] == [529, 200]


def test_the_judge_key_is_its_own_variable_first(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl")
    with FakeAnthropic(claude_judge) as server:
        result = run_cli("judge", "-i", rows, "-o", tmp_path / "out.jsonl", "--model",
                         "anthropic/claude-judge", "--base-url", server.base_url,
                         "--no-progress", "--no-cache", "--backoff", "0.01",
                         env={"ANTHROPIC_API_KEY": "sk-ant-general",
                              "JUDGE_API_KEY": "sk-ant-for-the-judge"})
        assert result.returncode == 0, result.stderr
        assert set(server.keys) == {"sk-ant-for-the-judge"}


def test_a_wrong_key_stops_the_judge(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "rows.jsonl")
    with FakeAnthropic(lambda body, attempt: Message(status=401)) as server:
        result = run_cli("judge", "-i", rows, "-o", tmp_path / "out.jsonl", "--model",
                         "anthropic/claude-judge", "--base-url", server.base_url,
                         "--no-progress", "--no-cache")
        assert result.returncode == 2 and "stopped early" in result.stderr
        assert len(server.log) <= 8


def test_openai_names_keep_their_meaning(tmp_path: Path) -> None:
    # openai/NAME sends NAME (as hopscore run does); any other name is sent as it is
    rows = write_rows(tmp_path / "rows.jsonl")
    with FakeOpenAI(lambda p, a: judge_reply(True)) as server:
        for model in ("openai/gpt-4.1-mini", "Qwen/Qwen3-8B", "gpt-4.1-mini"):
            result = run_cli("judge", "-i", rows, "-o", tmp_path / f"{len(server.log)}.jsonl",
                             "--model", model, "--base-url", server.base_url, "--no-progress",
                             "--no-cache")
            assert result.returncode == 0, result.stderr
        models = [entry.body["model"] for entry in server.log]
    assert models == ["gpt-4.1-mini"] * 6 + ["Qwen/Qwen3-8B"] * 6 + ["gpt-4.1-mini"] * 6


@pytest.mark.slow
def test_an_agent_run_grades_with_a_claude_judge(tmp_path: Path) -> None:
    world = build_world(tmp_path)

    def judge(body: dict[str, Any], attempt: int) -> Message:
        return Message(hdr_judge_reply(as_openai(body)).content)

    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as agent, FakeAnthropic(judge) as claude:
        result = run_cli(
            "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--corpus", world.corpus, "--model", "openai/scripted-agent",
            "--base-url", agent.base_url, "--judge-model", "anthropic/claude-judge",
            "--judge-base-url", claude.base_url, "--output-dir", tmp_path / "run",
            "--cache-dir", tmp_path / "cache", "--no-progress",
            env={"ANTHROPIC_API_KEY": "sk-ant-test"})
        assert result.returncode == 0, result.stderr
        assert claude.log and claude.rejected == []
        assert {body["model"] for body in claude.log} == {"claude-judge"}
        assert not any("tools" not in entry.body for entry in agent.log)  # no judge call there
    assert "│ overall  │     4 │    75.00 │" in result.stdout
