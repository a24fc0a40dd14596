"""hopscore run hybrid-deep-research end to end against a scripted tool-calling model on
loopback: the three families reach final_answer, are graded (scripted judge on the same server,
execution match for S2SQL), and their trajectories replay through hopscore sql-match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.agent.trajectory import read_trajectory, to_anthropic
from tests.conftest import CliResult, run_cli
from tests.hdr.world import SCRIPTS, Turn, World, build_world, scripted, write_jsonl
from tests.openai_server import FakeOpenAI, Reply


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def run_agent(world: World, server: FakeOpenAI, out: Path, *extra: str | Path) -> CliResult:
    return run_cli(
        "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
        "--corpus", world.corpus, "--model", "openai/scripted-agent",
        "--base-url", server.base_url, "--judge-model", "scripted-judge",
        "--judge-base-url", server.base_url, "--output-dir", out,
        "--cache-dir", world.root / "cache", "--no-progress", "--concurrency", "3", *extra)


def agent_requests(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [entry.body for entry in server.log if "tools" in entry.body]


def judge_requests(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [entry.body for entry in server.log if "tools" not in entry.body]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[tuple[World, Path, CliResult, FakeOpenAI]]:
    world = build_world(tmp_path_factory.mktemp("hdr"))
    before = world.fingerprint()
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        result = run_agent(world, server, world.root / "run")
        assert world.fingerprint() == before
        yield world, world.root / "run", result, server


def test_run_grades_every_family(finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    _world, out, result, server = finished
    assert result.returncode == 0, result.stderr
    table = result.stdout
    for row in ("S2SQL", "SQL2S", "Parallel", "overall"):
        assert row in table
    assert "│ overall  │     4 │    75.00 │" in table
    grades = {g["instance_id"]: g for g in jsonl(out / "grades.jsonl")}
    assert {k: g["correct"] for k, g in grades.items()} == {
        "s2sql_001": True, "s2sql_002": True, "sql2s_001": True, "parallel_001": False}
    assert grades["s2sql_001"]["agent_sql_source"] == "final_text_fenced_sql"
    assert grades["s2sql_002"]["agent_sql_source"] == "last_tool_call"
    assert grades["sql2s_001"]["reason"] == "judge: correct"
    assert grades["parallel_001"]["reason"] == "judge: incorrect"
    # the judge saw only the two text answers, with the gold answers
    prompts = [body["messages"][0]["content"] for body in judge_requests(server)]
    assert len(prompts) == 2
    assert any("Springfield" in p and "Which product sold the most" in p for p in prompts)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["benchmark"] == "hybrid-deep-research"
    assert metrics["metrics"]["accuracy"] == 0.75
    assert {name: g["metrics"]["accuracy"] for name, g in metrics["groups"].items()} == {
        "Parallel": 0.0, "S2SQL": 1.0, "SQL2S": 1.0}
    assert all(g["key"] == "family" for g in metrics["groups"].values())
    assert metrics["hdr"]["by_family"]["S2SQL"] == {"n": 2, "avg_at_k": 1.0, "pass_at_k": 1.0}
    scores = jsonl(out / "scores.jsonl")
    assert [s["groups"]["family"] for s in scores] == ["S2SQL", "S2SQL", "SQL2S", "Parallel"]
    config = json.loads((out / "config.json").read_text())
    assert config["status"] == "complete" and config["tasks"]["count"] == 4
    assert config["search"]["backend"] == "bm25" and config["knowledge"]["shop"]


def test_prompts_and_tools_sent(finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    _, _, _, server = finished
    first = next(b for b in agent_requests(server)
                 if "Use the web first." in b["messages"][1]["content"])
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][1]["content"] == (
        "## Final question\nSame maker as the 1999 founding (bare answer). Write the SQL query "
        "that lists its product names alphabetically.\n\n## Hint\nUse the web first.\n\n"
        "## Database\nshop")
    without_hint = next(b for b in agent_requests(server)
                        if "Which product sold" in b["messages"][1]["content"])
    assert "## Hint" not in without_hint["messages"][1]["content"]
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == ["web_search", "web_fetch", "run_sql", "get_all_external_knowledge_names",
                     "get_knowledge_definition", "get_all_knowledge_definitions", "final_answer"]
    assert first["temperature"] == 0.0


def test_samples_log_every_tool_call(finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    _, out, _, _ = finished
    samples = {s["instance_id"]: s for s in jsonl(out / "samples.jsonl")}
    assert list(samples) == ["s2sql_001", "s2sql_002", "sql2s_001", "parallel_001"]
    parallel = samples["parallel_001"]
    assert parallel["status"] == "final_answer" and parallel["turns"] == 2
    assert [c["name"] for c in parallel["tool_calls"]] == ["run_sql", "web_search",
                                                           "final_answer"]
    for sample in samples.values():
        for tool_call in sample["tool_calls"]:
            assert tool_call["latency_s"] >= 0 and tool_call["result_chars"] > 0
            assert isinstance(tool_call["arguments"], str)
    assert samples["s2sql_002"]["tool_errors"] == 1  # the failing query
    trajectory = json.loads((out / samples["sql2s_001"]["trajectory_file"]).read_text())
    assert trajectory["message_format"] == "openai"
    calls = [c["id"] for m in trajectory["messages"] for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in trajectory["messages"] if m["role"] == "tool"]
    assert calls == results and len(calls) == 4
    predictions = jsonl(out / "predictions.jsonl")
    assert predictions[2] == {"instance_id": "sql2s_001", "final_answer": "Springfield"}


def test_trajectories_replay_through_sql_match(
        finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    world, out, _, _ = finished
    replay = world.root / "replay.jsonl"
    result = run_cli("sql-match", "--input", out / "s2sql_input.jsonl", "--output", replay,
                     "--db-root", world.db_root)
    assert result.returncode == 0, result.stderr
    keys = ("instance_id", "match", "agent_sql", "agent_sql_source", "reason")
    expected = [{k: v[k] for k in keys} for v in jsonl(out / "sql_match.jsonl")]
    assert [{k: v[k] for k in keys} for v in jsonl(replay)] == expected
    assert expected[1]["agent_sql_source"] == "last_tool_call"
    assert expected[1]["agent_sql"] == (
        "SELECT name FROM products WHERE maker = 'Globex' ORDER BY name")
    # the same trajectory in Anthropic form reads back to the same SQL
    messages, fmt = read_trajectory(out / "trajectories" / "s2sql_002__0.json")
    anthropic = to_anthropic(messages)
    assert fmt == "openai" and anthropic["system"].startswith("You are a research agent")
    assert any(b.get("is_error") for m in anthropic["messages"] for b in m["content"]
               if b["type"] == "tool_result")
    source = write_jsonl(world.root / "anthropic.jsonl", [{
        "instance_id": "s2sql_002", "db": "shop", "response": "see my last query",
        "gold_sql": "SELECT name FROM products WHERE maker = 'Globex' ORDER BY name",
        "messages": anthropic["messages"], "message_format": "anthropic"}])
    verdicts = world.root / "anthropic_verdicts.jsonl"
    assert run_cli("sql-match", "--input", source, "--output", verdicts, "--db-root",
                   world.db_root).returncode == 0
    verdict = jsonl(verdicts)[0]
    assert verdict["match"] is True and verdict["agent_sql_source"] == "last_tool_call"


def test_the_usage_ledger_equals_what_the_server_reported(
        finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    """The attempts' ledger: the model's tokens are what the server reported for the agent's
    requests (those offering tools), each tool's requests its calls."""
    _, out, _, server = finished
    samples = jsonl(out / "samples.jsonl")
    agent = [u for u, body in zip(server.reported, server.reported_bodies, strict=True)
             if "tools" in body]
    summed = {"model": {"prompt_tokens": 0, "completion_tokens": 0}}
    tools: dict[str, int] = {}
    for sample in samples:
        for role, tally in sample["usage"].items():
            if role == "model":
                for name in summed["model"]:
                    summed["model"][name] += tally[name]
            else:
                tools[role] = tools.get(role, 0) + tally["requests"]
    assert summed["model"] == {
        "prompt_tokens": sum(u["prompt_tokens"] for u in agent),
        "completion_tokens": sum(u["completion_tokens"] for u in agent)}
    assert sum(s["usage"]["model"]["requests"] for s in samples) == len(agent_requests(server))
    called: dict[str, int] = {}
    for sample in samples:
        for call in sample["tool_calls"]:
            if call["name"] != "final_answer":
                called[f"tool:{call['name']}"] = called.get(f"tool:{call['name']}", 0) + 1
    assert tools == called and tools


def test_rerun_resumes_without_requests(
        finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    world, out, _first, server = finished
    sent = len(server.log)
    again = run_agent(world, server, out)
    assert again.returncode == 0, again.stderr
    assert len(server.log) == sent  # every attempt done, every judge row done
    assert "0 / 4" in again.stdout  # attempts this run / already done
    assert "│ overall  │     4 │    75.00 │" in again.stdout


def test_score_compare_and_report_read_the_run(
        finished: tuple[World, Path, CliResult, FakeOpenAI]) -> None:
    world, out, _, _ = finished
    rescored = world.root / "rescored"
    result = run_cli("score", "hybrid-deep-research", "--gold", world.tasks, "--predictions",
                     out / "grades.jsonl", "--output-dir", rescored)
    assert result.returncode == 0, result.stderr
    again = json.loads((rescored / "metrics.json").read_text())
    original = json.loads((out / "metrics.json").read_text())
    assert again["metrics"] == original["metrics"] and again["groups"].keys() == \
        original["groups"].keys()
    compared = run_cli("compare", out, rescored)
    assert compared.returncode == 0, compared.stderr
    assert "accuracy" in compared.stdout and "Parallel" in compared.stdout
    report = world.root / "report.html"
    made = run_cli("report", out, "--output", report)
    assert made.returncode == 0, made.stderr
    assert "parallel_001" in report.read_text()
    validated = run_cli("validate-predictions", out / "predictions.jsonl", "--tasks", world.tasks)
    assert validated.returncode == 1  # the bare S2SQL answer is flagged, nothing else
    assert "error: " in validated.stdout and ":2: S2SQL answer has no fenced" in validated.stdout
    assert "FAILED: 1 error," in validated.stdout


def test_repeats_give_avg_and_pass_at_k(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    scripts: dict[str, list[Turn]] = dict(SCRIPTS)

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        # Parallel: the second identical final request is answered right
        if "tools" in body and "premium product" in body["messages"][1]["content"] and \
                sum(m["role"] == "assistant" for m in body["messages"]) == 1:
            answer = "Widget Pro" if attempt == 1 else "Gizmo Max"
            return Reply(None, tool_calls=[{"id": "c", "type": "function", "function": {
                "name": "final_answer", "arguments": json.dumps({"answer": answer})}}])
        return scripted(scripts)(body, attempt)

    with FakeOpenAI(body_responder=respond) as server:
        result = run_agent(world, server, tmp_path / "run", "--repeats", "2")
    assert result.returncode == 0, result.stderr
    assert "Avg@2" in result.stdout and "Pass@2" in result.stdout
    assert "│ Parallel │     1 │  50.00 │ 100.00 │" in result.stdout
    assert "│ overall  │     4 │  87.50 │ 100.00 │" in result.stdout
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["metrics"] == {"accuracy": 0.875, "pass_at_k": 1.0, "pass@1": 0.875,
                                  "pass@2": 1.0}
    assert (tmp_path / "run" / "predictions.attempt-1.jsonl").exists()
    assert len(jsonl(tmp_path / "run" / "grades.jsonl")) == 8


def test_usage_errors(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    base = ("run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--model", "openai/x", "--base-url", "http://127.0.0.1:9/v1", "-o", tmp_path / "o")
    no_search = run_cli(*base, "--judge-model", "j")
    assert no_search.returncode == 2 and "--corpus" in no_search.stderr
    no_judge = run_cli(*base, "--corpus", world.corpus, env={"JUDGE_MODEL": ""})
    assert no_judge.returncode == 2 and "--judge-model" in no_judge.stderr
    wrong = run_cli(*base, "--corpus", world.corpus, "--judge-model", "j", "--shots", "2")
    assert wrong.returncode == 2 and "--shots" in wrong.stderr
    other = run_cli("run", "hotpotqa", "--gold", world.tasks, "--model", "openai/x",
                    "--max-turns", "5")
    assert other.returncode == 2 and "--max-turns" in other.stderr
    (world.db_root / "shop" / "shop_template.sqlite").rename(world.db_root / "moved.sqlite")
    missing_db = run_cli(*base, "--corpus", world.corpus, "--judge-model", "j")
    assert missing_db.returncode == 2 and "database files not found" in missing_db.stderr
    stripped = write_jsonl(tmp_path / "public.jsonl", [
        {"id": "sql2s_1", "hybrid_type": "sql_to_search", "final_question": "q", "db": "shop"}])
    no_gold = run_cli("run", "hdr", "--tasks", stripped, "--db-root", world.db_root,
                      "--model", "openai/x", "--corpus", world.corpus, "--judge-model", "j")
    assert no_gold.returncode == 2 and "--no-grade" in no_gold.stderr
