"""The HDR agent against the loopback server behaving as real servers do (docs/servers.md):
messages every server accepts, the text tool-call protocol and ``auto``'s switch to it, the
"no tool call" loop bounded, context overflow as a final status, and ``--max-context-tokens``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from tests.hdr.test_agent_run import jsonl, run_agent
from tests.hdr.world import (
    BLIND,
    SCRIPTS,
    TASKS,
    Turn,
    build_world,
    is_agent_request,
    scripted,
)
from tests.openai_server import FakeOpenAI, ServerBehaviour

STRICT = ServerBehaviour(null_content_500=True, json_arguments=True, mistral_ids=True,
                         strict_fields=True)


def agent_bodies(server: FakeOpenAI) -> list[dict[str, Any]]:
    return [e.body for e in server.log if is_agent_request(e.body)]


def samples(out: Path) -> dict[str, dict[str, Any]]:
    return {s["instance_id"]: s for s in jsonl(out / "samples.jsonl")}


def config(out: Path) -> dict[str, Any]:
    return json.loads((out / "config.json").read_text())


def overall(result: CliResult) -> str:
    match = re.search(r"│ overall\s+│\s+\d+ │\s+([\d.]+) │", result.stdout)
    assert match, result.stdout
    return match.group(1)


def test_messages_every_server_accepts(tmp_path: Path) -> None:
    """Against a server that refuses null content (llama-cpp-python), replayed arguments that are
    not JSON objects (vLLM, Ollama), ids that are not 9 alphanumerics (Mistral) and unknown tool
    message fields (strict gateways), the whole run goes through without one refused request."""
    world = build_world(tmp_path)
    scripts: dict[str, list[Turn]] = dict(SCRIPTS)
    # a model that writes broken arguments: the call gets an error, the replay must not
    scripts["sql2s_001"] = [[("run_sql", "{not json")], [("run_sql", "[1, 2]")],
                            [("run_sql", "")], *SCRIPTS["sql2s_001"]]
    with FakeOpenAI(body_responder=scripted(scripts), behaviour=STRICT) as server:
        result = run_agent(world, server, tmp_path / "run")
    assert result.returncode == 0, result.stderr
    assert server.faults == []
    assert overall(result) == "75.00"
    for body in agent_bodies(server):
        for message in body["messages"]:
            if message["role"] == "assistant" and message.get("tool_calls"):
                assert message["content"] == ""
                assert all(re.fullmatch(r"[A-Za-z0-9]{9}", c["id"]) for c in message["tool_calls"])
                assert all(isinstance(json.loads(c["function"]["arguments"]), dict)
                           for c in message["tool_calls"])
            if message["role"] == "tool":
                assert set(message) == {"role", "tool_call_id", "content"}
        assert body["tool_choice"] == "auto"
    row = samples(tmp_path / "run")["sql2s_001"]
    logged = [c for c in row["tool_calls"] if c["name"] == "run_sql"][:3]
    assert [c["arguments"] for c in logged] == ["{not json", "[1, 2]", ""]
    assert [c["error_kind"] for c in logged[:2]] == ["bad_arguments", "bad_arguments"]
    assert all(c["server_id"].startswith("call_") for c in row["tool_calls"])
    assert row["tool_protocol"] == "native"
    # the trajectory pairs every call with its result by our ids
    trajectory = json.loads((tmp_path / "run" / row["trajectory_file"]).read_text())
    calls = [c["id"] for m in trajectory["messages"] for c in m.get("tool_calls") or []]
    assert calls == [m["tool_call_id"] for m in trajectory["messages"] if m["role"] == "tool"]
    assert config(tmp_path / "run")["tool_protocol"]["content"] == "empty"


def test_null_content_when_asked(tmp_path: Path) -> None:
    """``--tool-call-content null`` sends null (for endpoints that want it); against
    llama-cpp-python's behaviour that is the HTTP 500 of issue 12, recorded per attempt."""
    world = build_world(tmp_path, TASKS[:1])
    with FakeOpenAI(body_responder=scripted(SCRIPTS),
                    behaviour=ServerBehaviour(null_content_500=True)) as server:
        result = run_agent(world, server, tmp_path / "run", "--tool-call-content", "null",
                           "--max-retries", "0")
    assert result.returncode == 1
    row = samples(tmp_path / "run")["s2sql_001"]
    assert row["status"] == "model_error" and row["error"]["status"] == 500
    assert [s for s, _ in server.faults] == [500]
    replay = server.faults[0][1]["messages"][2]
    assert replay["role"] == "assistant" and replay["content"] is None


def test_auto_switches_to_text_when_tools_are_ignored(tmp_path: Path) -> None:
    """A plain chat template drops the tools: the model writes prose. ``auto`` (the default)
    notices within the first replies, warns once, and the run finishes in the text protocol with
    real tool calls and the same grades as natively."""
    world = build_world(tmp_path)
    server = FakeOpenAI(body_responder=scripted(SCRIPTS),
                        behaviour=ServerBehaviour(ignore_tools=True)).start()
    try:
        result = run_agent(world, server, tmp_path / "run")
        sent = len(server.log)
        # a re-run with every attempt done sends nothing and keeps what this run found out
        again = run_agent(world, server, tmp_path / "run")
        assert again.returncode == 0 and len(server.log) == sent
    finally:
        server.stop()
    kept = config(tmp_path / "run")["tool_protocol"]
    assert kept["used"] == "text" and kept["this_run"].startswith("no model requests")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("does not take the offered tools natively") == 1
    assert "the first 3 replies to requests offering tools had no tool call" in result.stderr
    assert "text (auto; switched after 3 replies)" in result.stdout
    assert overall(result) == "75.00"
    rows = samples(tmp_path / "run")
    assert {r["tool_protocol"] for r in rows.values()} <= {"native->text", "text"}
    # the rows that began natively: as many as the distinct tasks among the native requests
    # (one to three: which row's turn comes back first is the scheduler's; under load one row
    # can take two of the three probing replies)
    native_tasks = {b["messages"][1]["content"] for b in agent_bodies(server) if "tools" in b}
    switched = sum(r["tool_protocol"] == "native->text" for r in rows.values())
    assert 1 <= switched <= 3 and switched == len(native_tasks)
    assert all(r["tool_call_count"] >= 1 for r in rows.values())
    block = kept
    assert block["requested"] == "auto" and block["used"] == "text"
    assert block["native_tool_calls"] == 0 and block["text_tool_calls"] >= 8
    text_requests = [b for b in agent_bodies(server)
                     if "<tool_call>" in b["messages"][0]["content"]]
    assert text_requests and all("tools" not in b and "tool_choice" not in b
                                 for b in text_requests)
    assert all(b["stop"] == ["</tool_call>"] for b in text_requests)
    # tool results travel as user turns; the trajectory keeps the OpenAI form
    assert any(m["role"] == "user" and m["content"].startswith("<tool_response>")
               for b in text_requests for m in b["messages"])
    trajectory = json.loads((tmp_path / "run" / rows["sql2s_001"]["trajectory_file"]).read_text())
    assert any(m["role"] == "tool" for m in trajectory["messages"])
    assert trajectory["tool_protocol"] == rows["sql2s_001"]["tool_protocol"]


def test_text_protocol_on_request(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    with FakeOpenAI(body_responder=scripted(SCRIPTS),
                    behaviour=ServerBehaviour(ignore_tools=True)) as server:
        result = run_agent(world, server, tmp_path / "run", "--tool-protocol", "text")
    assert result.returncode == 0, result.stderr
    assert "does not take the offered tools" not in result.stderr
    assert overall(result) == "75.00"
    assert all("tools" not in b for b in agent_bodies(server))
    assert {r["tool_protocol"] for r in samples(tmp_path / "run").values()} == {"text"}


def test_native_only_warns_and_bounds_the_no_tool_loop(tmp_path: Path) -> None:
    """``--tool-protocol native`` against a template that drops the tools: each attempt ends
    after ``--max-text-turns`` replies without a call (not 55 turns into a context overflow),
    and the run warns that the endpoint never returned a tool call."""
    world = build_world(tmp_path)
    with FakeOpenAI(body_responder=scripted(SCRIPTS),
                    behaviour=ServerBehaviour(ignore_tools=True)) as server:
        result = run_agent(world, server, tmp_path / "run", "--tool-protocol", "native",
                           "--max-text-turns", "4")
    assert result.returncode == 0, result.stderr
    assert "returned no tool call in 16 replies (4 attempts, native tool protocol)" in \
        result.stderr
    assert "--tool-protocol text" in result.stderr
    rows = samples(tmp_path / "run")
    assert {r["status"] for r in rows.values()} == {"no_tool_call"}
    assert all(r["model_calls"] == 4 and r["text_replies"] == 4 for r in rows.values())
    assert len(agent_bodies(server)) == 16
    grades = jsonl(tmp_path / "run" / "grades.jsonl")
    assert {g["status"] for g in grades} == {"no_final_answer"}
    assert config(tmp_path / "run")["tool_protocol"]["notes"]
    # a trajectory shows what the model wrote
    trajectory = json.loads((tmp_path / "run" / rows["s2sql_001"]["trajectory_file"]).read_text())
    assert [m["content"] for m in trajectory["messages"] if m["role"] == "assistant"] == [BLIND] * 4


def test_auto_switches_when_the_endpoint_refuses_tools(tmp_path: Path) -> None:
    """vLLM without --enable-auto-tool-choice answers 400 to any request with tools: ``auto``
    takes that as the switch and sends the same turn again in text."""
    world = build_world(tmp_path, TASKS[:2])
    with FakeOpenAI(body_responder=scripted(SCRIPTS),
                    behaviour=ServerBehaviour(reject_tools=True)) as server:
        result = run_agent(world, server, tmp_path / "run", "--concurrency", "1")
        assert result.returncode == 0, result.stderr
        assert "refused the tools (HTTP 400" in result.stderr
        assert [s for s, _ in server.faults] == [400]
        assert overall(result) == "100.00"
        rows = samples(tmp_path / "run")
        assert rows["s2sql_001"]["tool_protocol"] == "native->text"
        assert rows["s2sql_002"]["tool_protocol"] == "text"
        native = run_agent(world, server, tmp_path / "native", "--tool-protocol", "native",
                           "--no-cache")
        assert native.returncode == 1
    row = samples(tmp_path / "native")["s2sql_001"]
    assert row["status"] == "model_error" and "enable-auto-tool-choice" in row["error"]["message"]


def looping(turn: int) -> Turn:
    return [("run_sql", {"sql": f"SELECT name, maker, price, last_update FROM products -- {turn}"})]


def test_context_overflow_is_final(tmp_path: Path) -> None:
    """A conversation that outgrows the context gets llama-cpp-python's 400: the attempt ends as
    context_overflow, once, is graded as no answer, and a re-run sends nothing again."""
    world = build_world(tmp_path, TASKS[2:3])
    behaviour = ServerBehaviour(context_limit=2500)
    with FakeOpenAI(body_responder=scripted({}, default=looping), behaviour=behaviour) as server:
        result = run_agent(world, server, tmp_path / "run")
        assert result.returncode == 0, result.stderr
        row = samples(tmp_path / "run")["sql2s_001"]
        assert row["status"] == "context_overflow"
        assert row["error"]["status"] == 400 and "maximum context length" in \
            row["error"]["message"]
        assert [s for s, _ in server.faults] == [400]  # not retried
        assert "re-run the same command to retry" not in result.stderr
        [grade] = jsonl(tmp_path / "run" / "grades.jsonl")
        assert grade["status"] == "no_final_answer" and grade["correct"] is False
        sent = len(server.log)
        again = run_agent(world, server, tmp_path / "run")
        assert again.returncode == 0 and len(server.log) == sent


def test_max_context_tokens_drops_the_oldest_results(tmp_path: Path) -> None:
    world = build_world(tmp_path, TASKS[2:3])
    scripts: dict[str, list[Turn]] = {"sql2s_001": [looping(t) for t in range(12)] +
                                      [[("final_answer", {"answer": "Springfield"})]]}
    behaviour = ServerBehaviour(context_limit=2500)
    with FakeOpenAI(body_responder=scripted(scripts), behaviour=behaviour) as server:
        result = run_agent(world, server, tmp_path / "run", "--max-context-tokens", "2500",
                           "--max-tokens", "200")
    assert result.returncode == 0, result.stderr
    assert server.faults == []
    row = samples(tmp_path / "run")["sql2s_001"]
    assert row["status"] == "final_answer" and row["turns"] == 13
    assert row["context_dropped"] and row["context_dropped"][0] == "c00010000"
    last = agent_bodies(server)[-1]["messages"]
    stubs = [m for m in last if m["role"] == "tool" and m["content"].startswith("[tool result "
                                                                              "dropped")]
    assert len(stubs) == len(row["context_dropped"])
    assert last[-1]["role"] == "tool" and "dropped" not in last[-1]["content"]
    # the trajectory keeps every result in full
    trajectory = json.loads((tmp_path / "run" / row["trajectory_file"]).read_text())
    assert not any("dropped to keep" in str(m.get("content")) for m in trajectory["messages"])


def test_silent_truncation_is_noticed(tmp_path: Path) -> None:
    """Ollama cuts a prompt to num_ctx without an error: prompt_tokens fall while the
    conversation grew. The agent says so once; the attempt goes on."""
    world = build_world(tmp_path, TASKS[2:3])
    scripts: dict[str, list[Turn]] = {"sql2s_001": [looping(t) for t in range(10)] +
                                      [[("final_answer", {"answer": "Springfield"})]]}
    behaviour = ServerBehaviour(context_limit=2200, truncate=True)
    with FakeOpenAI(body_responder=scripted(scripts), behaviour=behaviour) as server:
        result = run_agent(world, server, tmp_path / "run")
    assert result.returncode == 0, result.stderr
    assert server.faults == []
    assert result.stderr.count("may be cutting the prompt") == 1
    row = samples(tmp_path / "run")["sql2s_001"]
    assert row["prompt_shrank"] is True and row["status"] == "final_answer"


@pytest.mark.parametrize("flag,value,message", [
    ("--tool-protocol", "json", "--tool-protocol must be one of"),
    ("--tool-call-content", "none", "--tool-call-content must be one of"),
])
def test_bad_values(tmp_path: Path, flag: str, value: str, message: str) -> None:
    world = build_world(tmp_path, TASKS[:1])
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        result = run_agent(world, server, tmp_path / "run", flag, value)
    assert result.returncode == 2 and message in result.stderr
    assert server.log == []
