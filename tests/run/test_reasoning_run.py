"""Reasoning models end to end: ``--reasoning-effort`` / ``--thinking-budget`` in the request
bodies of each provider, the thinking kept in the samples, the answer after it scored, thinking
that never closed counted apart and not scored, and the judge never shown the thinking."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from tests.anthropic_server import FakeAnthropic, Message
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply
from tests.run.helpers import asked, gold_replies, load, rows, run_args

SECRET = "SECRET-THOUGHT"
QUESTIONS = list(gold_replies("bamboogle"))[:4]  # what --limit 4 asks


def completion(content: str, reasoning: str | None, finish: str = "stop") -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return Reply(json_body={"id": "c", "object": "chat.completion", "model": "test-model",
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": finish}],
                            "usage": {"prompt_tokens": 5, "completion_tokens": 9}})


def thinker(prompt: str, attempt: int) -> Reply:
    """Four kinds of reasoning reply, each with the gold answer somewhere in it."""
    question = asked(prompt)
    gold = gold_replies("bamboogle")[question]
    if question not in QUESTIONS:
        return Reply(f"Answer: {gold}")
    kind = QUESTIONS.index(question)
    if kind == 0:  # separate reasoning, answer in the content
        return completion(f"Answer: {gold}", f"{SECRET} it is {gold}")
    if kind == 1:  # inline thinking closed; a wrong answer line inside it
        return Reply(f"<think>{SECRET}\nAnswer: wrong guess</think>\nAnswer: {gold}")
    if kind == 2:  # cut inside <think>: the right answer in the thinking is not an answer
        return Reply(f"<think>{SECRET} so Answer: {gold}", finish_reason="length")
    return completion("", f"{SECRET} Answer: {gold}", "length")  # reasoning only, cut


def test_effort_in_the_body_thinking_kept_unclosed_counted_not_scored(tmp_path: Path) -> None:
    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeOpenAI(thinker) as server:
        args = run_args("bamboogle", server.base_url, out, cache, "--limit", "4",
                        "--reasoning-effort", "high")
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert {r.body["reasoning_effort"] for r in server.log} == {"high"}
        assert len(server.log) == 4  # reasoning with empty content: a reply, not retried
        # the same run with another effort is other settings: refused, nothing sent
        sent = len(server.log)
        other = run_cli(*[a if a != "high" else "low" for a in args])
        assert other.returncode == 2 and "reasoning" in other.stderr, other.stderr
        assert len(server.log) == sent
    assert "thinking never closed" in result.stdout
    metrics = load(out / "metrics.json")
    assert metrics["run"]["unclosed_thinking"] == 2
    assert metrics["run"]["answered"] == 2
    assert load(out / "config.json")["settings"]["reasoning"] == {"effort": "high"}
    samples = {row["question"]: row for row in rows(out / "samples.jsonl")}
    first, inline, cut, only = (samples[q] for q in QUESTIONS)
    gold = gold_replies("bamboogle")
    # the raw reply and its reasoning are kept; the answer after the thinking is scored
    assert SECRET in first["reasoning"] and first["thinking"] == "closed"
    assert SECRET in inline["raw_output"] and inline["answer"] == gold[QUESTIONS[1]]
    assert inline["scores"]["em"] == 1.0
    assert SECRET in cut["raw_output"] and SECRET in only["reasoning"]
    assert cut["thinking"] == only["thinking"] == "unclosed"
    assert cut["answer"] is None and only["answer"] is None
    predicted = (out / benchmarks.get("bamboogle").predictions_file).read_text()
    assert SECRET not in predicted and gold[QUESTIONS[2]] not in predicted
    per_example = {json.loads(line)["id"]: json.loads(line)
                   for line in (out / "scores.jsonl").read_text().splitlines()}
    assert per_example[cut["id"]]["metrics"]["em"] == 0.0 and per_example[cut["id"]]["missing"]

    # score --judge on the run's predictions: the judge's prompts hold no thinking
    with FakeOpenAI(lambda prompt, attempt: judge_reply(True)) as judge:
        scored = run_cli("score", "bamboogle", "-g", metrics_gold(out), "-p",
                         out / benchmarks.get("bamboogle").predictions_file, "--judge",
                         "--judge-model", "judge-m", "--judge-base-url", judge.base_url,
                         "--judge-reasoning-effort", "low", "-o", tmp_path / "scored",
                         env={"HOPSCORE_CACHE_DIR": str(cache)})
        assert scored.returncode in (0, 1), scored.stderr
        assert judge.log and all(SECRET not in r.prompt for r in judge.log)
        assert {r.body["reasoning_effort"] for r in judge.log} == {"low"}


def metrics_gold(out: Path) -> str:
    return str(load(out / "config.json")["settings"]["gold"])


def test_a_run_without_the_flags_keeps_its_settings(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(thinker) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, out, tmp_path / "c",
                                   "--limit", "2"))
        assert result.returncode == 0, result.stderr
        assert all("reasoning_effort" not in r.body for r in server.log)
    assert "reasoning" not in load(out / "config.json")["settings"]


def test_chat_template_style_sends_enable_thinking(tmp_path: Path) -> None:
    with FakeOpenAI(thinker) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "run",
                                   tmp_path / "c", "--limit", "2", "--reasoning-style",
                                   "chat-template", "--reasoning-effort", "none"))
        assert result.returncode == 0, result.stderr
        assert {json.dumps(r.body["chat_template_kwargs"]) for r in server.log} == {
            '{"enable_thinking": false}'}
        assert all("reasoning_effort" not in r.body for r in server.log)


def test_the_judge_prompt_never_holds_the_thinking(tmp_path: Path) -> None:
    inputs = tmp_path / "rows.jsonl"
    lines = [{"question": "Q1?", "response": f"<think>{SECRET}</think>Paris",
              "correct_answer": "Paris"},
             {"question": "Q2?", "response": f"<think>{SECRET} Paris", "correct_answer": "Paris"}]
    inputs.write_text("".join(json.dumps(line) + "\n" for line in lines))
    verdict = judge_reply(True, "Paris").content or ""
    with FakeOpenAI(lambda prompt, attempt: completion(verdict, "judge thinks")) as judge:
        result = run_cli("judge", "-i", inputs, "-o", tmp_path / "out.jsonl", "--model", "j",
                         "--base-url", judge.base_url, "--no-progress", "--no-cache",
                         "--reasoning-style", "chat-template", "--thinking-budget", "256")
        assert result.returncode in (0, 1), result.stderr
        assert len(judge.log) == 1  # the unclosed one has no answer: graded without asking
        assert SECRET not in judge.log[0].prompt and "Paris" in judge.log[0].prompt
        assert judge.log[0].body["chat_template_kwargs"] == {"enable_thinking": True,
                                                             "thinking_budget": 256}
    judged = rows(tmp_path / "out.jsonl")
    assert [row["correct"] for row in judged] == [True, False]
    assert judged[0]["raw_judge_reasoning"] == "judge thinks"  # the judge's own, kept


def claude(body: dict[str, Any], attempt: int) -> Message:
    question = asked(body["messages"][-1]["content"][0]["text"])
    return Message(f"Answer: {gold_replies('bamboogle')[question]}", thinking=SECRET)


def test_anthropic_extended_thinking(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    out = tmp_path / "run"
    env = {"ANTHROPIC_API_KEY": "sk-ant-test"}
    with FakeAnthropic(claude) as server:
        base = ["run", "bamboogle", "--gold", "tests/fixtures/bamboogle/gold_small.csv",
                "--model", "anthropic/claude-test", "--base-url", server.base_url,
                "--cache-dir", tmp_path / "c", "--no-progress", "--resamples", "50",
                "--limit", "2", "-o", out]
        refused = run_cli(*base, "--thinking-budget", "4096", "--max-tokens", "1024", env=env)
        assert refused.returncode == 2 and "must exceed the thinking budget" in refused.stderr
        assert server.log == []
        result = run_cli(*base, "--thinking-budget", "2048", "--max-tokens", "4096", env=env)
        assert result.returncode == 0, result.stderr
        assert server.rejected == []
        assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 2048}
                   and "temperature" not in b for b in server.log)
    samples = rows(out / "samples.jsonl")
    assert all(r["reasoning"] == SECRET and r["thinking"] == "closed" for r in samples)
    assert load(out / "metrics.json")["metrics"]["em"] == 1.0
