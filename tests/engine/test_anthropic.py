"""``--model anthropic/NAME`` against a loopback server that speaks the Messages API (and
checks requests as the real one does): translation both ways, the same engine, cache and
resume, and the HybridDeepResearch agent's tool loop on the toy world."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("anthropic")

from hopscore.engine import ChatRequest
from hopscore.engine.anthropic import completion_of, messages_of, request_body
from tests.anthropic_server import FakeAnthropic, Message, as_openai, validate
from tests.conftest import run_cli
from tests.hdr.test_agent_run import jsonl
from tests.hdr.world import SCRIPTS, build_world, scripted
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, load, rows, run_args
from tests.run.test_run_cli import hotpot_reply

HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


def test_an_agent_conversation_translates_to_valid_turns() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research agent."},
        {"role": "user", "content": "## Final question\nWho?"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "run_sql",
                                                          "arguments": '{"sql": "SELECT 1"}'}},
            {"id": "c2", "type": "function", "function": {"name": "web_search",
                                                          "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
        {"role": "tool", "tool_call_id": "c2", "content": ""},
        {"role": "assistant", "content": None},  # an empty turn: dropped
        {"role": "user", "content": "You did not call a tool."},
        {"role": "assistant", "content": "Thinking.", "tool_calls": [
            {"id": "c3", "type": "function", "function": {"name": "final_answer",
                                                          "arguments": {"answer": "x"}}}]},
        {"role": "tool", "tool_call_id": "c3", "content": "x"},
    ]
    request = ChatRequest(model="claude-x", messages=messages, temperature=0.0, seed=3,
                          stop=["\n\n"], extra={"tool_choice": "required", "top_p": 0.9},
                          tools=[{"type": "function", "function": {
                              "name": "run_sql", "description": "SQL",
                              "parameters": {"type": "object", "properties": {}}}}])
    body = request_body(request)
    validate(body, HEADERS)  # what the real API would accept
    assert body["system"] == "You are a research agent."
    assert body["max_tokens"] == 4096 and "seed" not in body and body["top_p"] == 0.9
    assert body["stop_sequences"] == ["\n\n"] and body["tool_choice"] == {"type": "any"}
    assert body["tools"] == [{"name": "run_sql", "description": "SQL",
                              "input_schema": {"type": "object", "properties": {}}}]
    roles = [turn["role"] for turn in body["messages"]]
    assert roles == ["user", "assistant", "user", "assistant", "user"]
    tool_uses = body["messages"][1]["content"]
    assert [b["input"] for b in tool_uses] == [{"sql": "SELECT 1"}, {"arguments": "not json"}]
    results = body["messages"][2]["content"]
    assert [b.get("tool_use_id") for b in results] == ["c1", "c2", None]
    assert results[1]["content"] == "(empty)" and results[2]["text"].startswith("You did not")
    # and back: the scripts written for OpenAI-format conversations read it the same way
    assert as_openai(body)["messages"][1]["content"] == "## Final question\nWho?"
    assert messages_of([{"role": "assistant", "content": "hi"}])[1][0]["role"] == "user"


def test_replies_translate_to_chat_completions() -> None:
    body = completion_of({
        "id": "m", "model": "claude-x", "stop_reason": "tool_use",
        "content": [{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "Let me."},
                    {"type": "tool_use", "id": "t1", "name": "run_sql",
                     "input": {"sql": "SELECT 1"}}],
        "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90}})
    message = body["choices"][0]["message"]
    assert message["content"] == "Let me." and body["choices"][0]["finish_reason"] == "tool_calls"
    assert message["tool_calls"] == [{"id": "t1", "type": "function", "function": {
        "name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]
    assert body["usage"] == {"prompt_tokens": 100, "completion_tokens": 5,
                             "prompt_tokens_details": {"cached_tokens": 90}}
    truncated = completion_of({"content": [{"type": "text", "text": "The answer is"}],
                               "stop_reason": "max_tokens"})
    assert truncated["choices"][0]["finish_reason"] == "length"


def test_a_hotpotqa_run_on_claude_caches_resumes_and_retries(tmp_path: Path) -> None:
    faults = {"count": 0}

    def reply(body: dict[str, Any], attempt: int) -> Message:
        prompt = "\n".join(block["text"] for turn in body["messages"] for block in
                           (turn["content"] if isinstance(turn["content"], list) else
                            [{"type": "text", "text": turn["content"]}]) if "text" in block)
        if attempt == 0 and faults["count"] < 2:
            faults["count"] += 1
            return Message(status=529, headers={"retry-after": "0"})  # overloaded: retried
        return Message(hotpot_reply(asked(prompt)))

    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeAnthropic(reply) as server:
        args = [a if a != "openai/test-model" else "anthropic/claude-test" for a in
                run_args("hotpotqa", server.base_url, out, cache)]
        env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
        result = run_cli(*args, env=env)
        assert result.returncode == 0, result.stderr
        assert server.rejected == []
        sent = len(server.log)
        again = run_cli(*args, env=env)  # resumed and cached: nothing asked
        fresh = run_cli(*[tmp_path / "run2" if a == out else a for a in args], env=env)
        assert again.returncode == fresh.returncode == 0
        assert len(server.log) == sent
    metrics = load(out / "metrics.json")
    assert metrics["metrics"]["joint_em"] == pytest.approx(1.0) and metrics["run"]["errors"] == 0
    samples = rows(out / "samples.jsonl")
    assert sent == len(samples) + 2
    retried = [s for s in samples if len(s["attempts"]) > 1]
    assert len(retried) == 2 and all(s["attempts"][0]["status"] == 529 for s in retried)
    assert samples[0]["prompt_tokens"] == 13 and samples[0]["completion_tokens"] == 7
    assert load(out / "config.json")["model"]["endpoint"] == f"anthropic:{server.base_url}"


def test_a_wrong_key_stops_the_run(tmp_path: Path) -> None:
    with FakeAnthropic(lambda body, attempt: Message(status=401)) as server:
        args = [a if a != "openai/test-model" else "anthropic/claude-test" for a in
                run_args("hotpotqa", server.base_url, tmp_path / "run", tmp_path / "cache")]
        result = run_cli(*args)
        assert result.returncode == 2 and "stopped early" in result.stderr
        assert len(server.log) <= 8


def claude_agent(body: dict[str, Any], attempt: int) -> Message:
    """The scripted HDR model of tests/hdr/world.py, answering through the Messages API."""
    reply: Reply = scripted(SCRIPTS)(as_openai(body), attempt)
    uses = [(call["function"]["name"], json.loads(call["function"]["arguments"]))
            for call in reply.tool_calls or []]
    return Message(reply.content, tool_uses=uses)


def test_the_hdr_agent_runs_on_claude_with_native_tool_use(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    with FakeAnthropic(claude_agent) as claude, \
            FakeOpenAI(body_responder=scripted(SCRIPTS)) as judge:
        result = run_cli(
            "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--corpus", world.corpus, "--model", "anthropic/claude-agent",
            "--base-url", claude.base_url, "--judge-model", "scripted-judge",
            "--judge-base-url", judge.base_url, "--output-dir", tmp_path / "run",
            "--cache-dir", tmp_path / "cache", "--no-progress", "--tool-choice", "auto",
            env={"ANTHROPIC_API_KEY": "sk-ant-test"})
        assert result.returncode == 0, result.stderr
        assert claude.rejected == []
        assert all(body["tool_choice"] == {"type": "auto"} for body in claude.log)
    assert "│ overall  │     4 │    75.00 │" in result.stdout
    samples = {s["instance_id"]: s for s in jsonl(tmp_path / "run" / "samples.jsonl")}
    assert all(s["status"] == "final_answer" for s in samples.values())
    assert sum(s["tool_call_count"] for s in samples.values()) >= 10
    # trajectories stay in OpenAI format
    trajectory = json.loads((tmp_path / "run" / samples["s2sql_001"]["trajectory_file"])
                            .read_text())
    assert trajectory["message_format"] == "openai"
    assert any(m["role"] == "tool" for m in trajectory["messages"])
    assert any(m.get("tool_calls") for m in trajectory["messages"] if m["role"] == "assistant")
