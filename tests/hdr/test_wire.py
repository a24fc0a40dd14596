"""Units of the agent's wire form, tool protocol and context budget."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.agent.context import ContextBudget, ContextWatch
from hopscore.agent.protocol import ToolProtocol
from hopscore.agent.wire import (
    UNPARSED,
    assistant_message,
    call_id,
    content_style_for,
    is_context_overflow,
    normalize_calls,
    rejects_tools,
    tool_message,
    wire_arguments,
)
from hopscore.engine import CallFailure, ChatResponse, Usage

TOOLS = [{"type": "function", "function": {"name": "run_sql", "description": "SQL",
                                           "parameters": {"type": "object", "properties": {
                                               "sql": {"type": "string"}},
                                               "required": ["sql"]}}}]


@given(st.integers(0, 9999), st.integers(0, 9999))
def test_call_ids_are_nine_alphanumerics(turn: int, index: int) -> None:
    assert re.fullmatch(r"[A-Za-z0-9]{9}", call_id(turn, index))


def test_call_ids_are_unique_in_an_attempt() -> None:
    ids = {call_id(t, i) for t in range(1, 301) for i in range(20)}
    assert len(ids) == 300 * 20


@pytest.mark.parametrize("raw,expected", [
    ('{"sql": "SELECT 1"}', {"sql": "SELECT 1"}),
    ({"sql": "x"}, {"sql": "x"}),
    ("", {}), (None, {}), ("null", {}), ("  ", {}),
    ("{not json", {UNPARSED: "{not json"}),
    ("[1, 2]", {UNPARSED: "[1, 2]"}),
    ('"text"', {UNPARSED: '"text"'}),
    ("42", {UNPARSED: "42"}),
])
def test_wire_arguments_are_json_objects(raw: object, expected: dict[str, object]) -> None:
    assert json.loads(wire_arguments(raw)) == expected


def test_normalize_calls_keeps_what_the_model_wrote() -> None:
    calls = normalize_calls([
        {"id": "call__0_run_sql_cmpl-1234", "type": "function",
         "function": {"name": "run_sql", "arguments": {"sql": "SELECT 1"}}},
        {"function": {"name": "final_answer", "arguments": None}},
        "garbage",
    ], turn=7)
    assert [c["id"] for c in calls] == ["c00070000", "c00070001", "c00070002"]
    assert calls[0]["server_id"] == "call__0_run_sql_cmpl-1234"
    assert "server_id" not in calls[1]
    assert calls[0]["function"]["arguments"] == '{"sql": "SELECT 1"}'
    assert calls[1]["function"]["arguments"] == "" and calls[2]["function"]["name"] == ""


def test_assistant_messages() -> None:
    calls = normalize_calls([{"function": {"name": "run_sql", "arguments": "{bad"}}], 1)
    empty = assistant_message(None, calls, "empty")
    assert empty["content"] == "" and empty["tool_calls"][0]["id"] == "c00010000"
    assert json.loads(empty["tool_calls"][0]["function"]["arguments"]) == {UNPARSED: "{bad"}
    assert "server_id" not in empty["tool_calls"][0]
    assert assistant_message(None, calls, "null")["content"] is None
    assert assistant_message("thinking", calls, "null")["content"] == "thinking"
    assert assistant_message(None, [], "null") == {"role": "assistant", "content": ""}
    assert tool_message("c00010000", "") == {"role": "tool", "tool_call_id": "c00010000",
                                             "content": "(the tool returned no text)"}


def test_content_style_for_endpoints() -> None:
    assert content_style_for("http://127.0.0.1:8080/v1") == "empty"
    assert content_style_for("https://api.openai.com/v1") == "empty"
    assert content_style_for("https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1") == \
        "null"
    assert content_style_for("https://bedrock-runtime.us-east-1.amazonaws.com", "empty") == "empty"
    assert content_style_for("http://x/v1", "null") == "null"


@pytest.mark.parametrize("status,message", [
    (400, "This model's maximum context length is 4096 tokens. However, you requested 5026 "
          "tokens (5010 in the messages, 16 in the completion)."),  # llama-cpp-python, vLLM
    (400, "the request exceeds the available context size, try increasing it"),  # llama.cpp
    (400, "prompt is too long: 215000 tokens > 200000 maximum"),  # Anthropic
    (400, "input length exceeds the context length"),  # Ollama
    (400, "the prompt has 9000 tokens; SmolLM2 reads at most 8192"),  # local/smollm2
    (413, "Request too large: context_length_exceeded"),
])
def test_context_overflow_messages(status: int, message: str) -> None:
    assert is_context_overflow(CallFailure("client_error", message, status))


@pytest.mark.parametrize("failure", [
    None, CallFailure("server_error", "maximum context length", 500),
    CallFailure("client_error", "invalid tool call arguments", 400),
    CallFailure("timeout", "no response within 5 s", None),
])
def test_not_context_overflow(failure: CallFailure | None) -> None:
    assert not is_context_overflow(failure)


def test_rejects_tools() -> None:
    vllm = CallFailure("client_error", '"auto" tool choice requires --enable-auto-tool-choice '
                       "and --tool-call-parser to be set", 400)
    assert rejects_tools(vllm)
    assert rejects_tools(CallFailure("client_error", "this model does not support tools", 400))
    assert not rejects_tools(CallFailure("fatal", "model does not support tools", 404))
    assert not rejects_tools(CallFailure("server_error", "tool_choice", 500))
    assert not rejects_tools(CallFailure("client_error", "maximum context length", 400))


def reply(content: str | None, calls: list[dict[str, object]] | None = None) -> ChatResponse:
    return ChatResponse(content, calls, "stop", Usage(), None, {})


def test_protocol_auto_switches_after_tool_less_replies() -> None:
    notes: list[str] = []
    protocol = ToolProtocol("auto", endpoint="http://e/v1", warn=notes.append)
    for turn in range(1, 3):
        assert protocol.read(reply("prose"), "native", turn) == ("prose", [])
        assert protocol.mode == "native"
    protocol.read(reply("more prose"), "native", 3)
    assert protocol.mode == "text" and len(notes) == 1 and "http://e/v1" in notes[0]
    wire = protocol.request([{"role": "system", "content": "s"}], TOOLS, "auto")
    assert wire.tools is None and wire.extra == {} and wire.stop == ["</tool_call>"]
    assert "run_sql(sql: string)" in wire.messages[0]["content"]
    text, calls = protocol.read(
        reply('ok <tool_call>{"name": "run_sql", "arguments": {"sql": "SELECT 1"}}'), "text", 4)
    assert text == "ok" and calls[0]["function"]["name"] == "run_sql"
    assert protocol.to_json()["switch"]["after_replies"] == 3


def test_protocol_auto_settles_on_native() -> None:
    protocol = ToolProtocol("auto")
    protocol.read(reply(None, [{"id": "x", "function": {"name": "run_sql", "arguments": "{}"}}]),
                  "native", 1)
    for turn in range(2, 10):
        protocol.read(reply("prose"), "native", turn)
    assert protocol.mode == "native" and protocol.switch is None
    assert not protocol.refused(CallFailure("client_error", "tool_choice", 400), "native")


def test_protocol_auto_takes_text_calls_and_refusals() -> None:
    protocol = ToolProtocol("auto")
    text, calls = protocol.read(
        reply('<tool_call>{"name": "run_sql", "arguments": {"sql": "x"}}</tool_call>'), "native", 1)
    assert protocol.mode == "text" and calls and text == ""
    refusing = ToolProtocol("auto")
    assert refusing.refused(CallFailure("client_error", '"auto" tool choice requires '
                                        "--enable-auto-tool-choice", 400), "native")
    assert refusing.mode == "text"
    native = ToolProtocol("native")
    assert not native.refused(CallFailure("client_error", "tool_choice", 400), "native")
    for turn in range(1, 9):
        native.read(reply("prose"), "native", turn)
    assert native.mode == "native"
    with pytest.raises(ValueError):
        ToolProtocol("json")


def conversation(results: int, size: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [{"role": "system", "content": "s" * 400},
                                         {"role": "user", "content": "q"}]
    for turn in range(1, results + 1):
        cid = call_id(turn, 0)
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "run_sql", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": "r" * size})
    return messages


def native(messages: list[dict[str, object]]) -> tuple[list[dict[str, object]], None]:
    return messages, None


def test_budget_drops_oldest_results_first_and_keeps_the_latest() -> None:
    budget = ContextBudget(1400, reserve=200, ratio=4.0)
    messages = conversation(6, 600)
    sent = budget.fit(messages, native)
    assert list(budget.dropped) == [call_id(t, 0) for t in range(1, len(budget.dropped) + 1)]
    assert sent[-1]["content"] == "r" * 600
    assert 0 < len(budget.dropped) < 5
    assert budget.estimate(len(json.dumps(sent))) + 200 <= 1400
    assert messages[3]["content"] == "r" * 600  # the conversation itself is left alone
    # dropped stays dropped, even when it would fit again
    again = ContextBudget(100_000, dropped=dict(budget.dropped))
    assert again.fit(messages, native)[3]["content"].startswith("[tool result dropped")


def test_budget_without_limit_and_calibration() -> None:
    unlimited = ContextBudget(None)  # nothing to fit: the conversation is not even measured
    messages = conversation(3, 100)
    assert unlimited.fit(messages, native) == messages and unlimited.last_chars == 0
    budget = ContextBudget(10**9)
    assert budget.fit(messages, native) == messages and budget.last_chars > 0
    budget.observe(budget.last_chars // 5)
    assert 4.9 < budget.ratio < 5.1
    budget.observe(0)
    assert 4.9 < budget.ratio < 5.1


def test_watch_spots_a_shrinking_prompt_once() -> None:
    watch = ContextWatch()
    assert not watch.observe(1000, False) and not watch.observe(1500, False)
    assert watch.observe(800, False)
    assert not watch.observe(700, False)
    other = ContextWatch()
    other.observe(1500, False)
    assert not other.observe(800, True)  # we dropped results ourselves
