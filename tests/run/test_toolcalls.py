"""The text tool-call protocol of the local model: prompt rendering and reply parsing."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hopscore.agent.tools import SCHEMAS, openai_tools
from hopscore.engine.toolcalls import (
    CLOSE,
    NAME_PREFIX,
    OPEN,
    arguments_prefix,
    parse_tool_calls,
    text_messages,
    tool_names,
    tools_prompt,
)

TOOLS = openai_tools(tuple(SCHEMAS))


def test_prompt_lists_every_tool_with_its_arguments() -> None:
    prompt = tools_prompt(TOOLS)
    assert OPEN in prompt and CLOSE in prompt
    assert '{"name": "web_search", "arguments": {"query": "..."}}' in prompt
    assert "- run_sql(sql: string, description: string?): Run one read-only" in prompt
    assert "- get_all_external_knowledge_names(): " in prompt


def test_conversation_in_text_form() -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Be good."},
        {"role": "user", "content": "Q?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function",
             "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]},
        {"role": "tool", "tool_call_id": "a", "content": "Rows: 1"},
    ]
    out = text_messages(messages, TOOLS)
    assert out[0]["content"].startswith("Be good.\n\nYou have tools.")
    assert out[2] == {"role": "assistant", "content": f'{OPEN}\n{{"name": "run_sql", '
                      f'"arguments": {{"sql": "SELECT 1"}}}}\n{CLOSE}'}
    assert out[3] == {"role": "user", "content": "<tool_response>\nRows: 1\n</tool_response>"}
    assert text_messages([{"role": "user", "content": "hi"}], TOOLS)[0]["role"] == "system"


def test_parse_replies() -> None:
    text, calls = parse_tool_calls(
        f'Let me look.\n{OPEN}\n{{"name": "run_sql", "arguments": {{"sql": "SELECT 1"}}}}\n'
        f"{CLOSE}")
    assert text == "Let me look."
    assert calls == [{"id": "call_0", "type": "function",
                      "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]
    # cut off by the token budget: no closing tag, unclosed JSON, mended
    _, cut = parse_tool_calls(f'{OPEN}\n{{"name": "final_answer", "arguments": {{"answer": "Spr')
    assert json.loads(cut[0]["function"]["arguments"]) == {"answer": "Spr"}
    # unreadable JSON with a name: passed on as written (the harness reports bad arguments)
    _, broken = parse_tool_calls(f'{OPEN}{{"name": "web_search", "arguments": {{query: x}}}}'
                                 f"{CLOSE}")
    assert broken[0]["function"]["name"] == "web_search"
    assert "query: x" in broken[0]["function"]["arguments"]
    assert parse_tool_calls("just text") == ("just text", [])
    assert parse_tool_calls(f"{OPEN} nothing here {CLOSE}")[1] == []
    two = parse_tool_calls(f'{OPEN}{{"name": "a"}}{CLOSE} and {OPEN}{{"name": "b", '
                           f'"parameters": {{"x": 1}}}}{CLOSE}')[1]
    assert [c["function"]["name"] for c in two] == ["a", "b"]
    assert [c["id"] for c in two] == ["call_0", "call_1"]
    assert json.loads(two[1]["function"]["arguments"]) == {"x": 1}


def test_forced_call_prefixes() -> None:
    assert tool_names(TOOLS)[0] == "web_search"
    assert arguments_prefix(TOOLS, "run_sql") == '", "arguments": {"sql": "'
    assert arguments_prefix(TOOLS, "get_all_knowledge_definitions") == '", "arguments": {'
    # a forced reply (prefix + what the model wrote) parses like any other
    prefix = OPEN + NAME_PREFIX + "run_sql" + arguments_prefix(TOOLS, "run_sql")
    _, calls = parse_tool_calls(prefix + 'SELECT name FROM t"}}\n' + CLOSE)
    assert calls[0]["function"] == {"name": "run_sql",
                                    "arguments": '{"sql": "SELECT name FROM t"}'}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=8), children, max_size=3), max_leaves=8)


@given(name=st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
       arguments=st.dictionaries(st.text(max_size=10), json_values, max_size=4),
       before=st.text(max_size=30).filter(lambda t: OPEN not in t and "<" not in t))
def test_round_trip(name: str, arguments: dict[str, Any], before: str) -> None:
    message = {"role": "assistant", "content": before, "tool_calls": [
        {"id": "x", "type": "function",
         "function": {"name": name, "arguments": json.dumps(arguments)}}]}
    rendered = text_messages([{"role": "system", "content": "s"}, message], TOOLS)[1]["content"]
    text, calls = parse_tool_calls(rendered)
    assert text == before.strip()
    assert calls[0]["function"]["name"] == name
    assert json.loads(calls[0]["function"]["arguments"]) == arguments


def test_shorthand_reads_fenced_blocks_and_bare_json() -> None:
    assert "```sql fenced block calls run_sql" in tools_prompt(TOOLS, shorthand=True)
    assert "fenced block" not in tools_prompt(TOOLS)
    assert "fenced block calls run_sql" in text_messages(
        [{"role": "user", "content": "q"}], TOOLS, shorthand=True)[0]["content"]
    rest, calls = parse_tool_calls("Let me check.\n```sql\nSELECT name FROM t\n```\nDone.", TOOLS)
    assert rest == "Let me check.\n\nDone."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == \
        [("run_sql", {"sql": "SELECT name FROM t"})]
    # labels owned by no single tool, or no tools given: plain text
    assert parse_tool_calls("```python\nprint(1)\n```", TOOLS)[1] == []
    assert parse_tool_calls("```sql\nSELECT 1\n```")[1] == []
    assert parse_tool_calls("```sql\n\n```", TOOLS)[1] == []
    _, calls = parse_tool_calls('{"name": "web_search", "arguments": {"query": "acme"}}', TOOLS)
    assert calls[0]["function"]["name"] == "web_search"
    assert parse_tool_calls('{"name": "rm", "arguments": {}}', TOOLS)[1] == []
    # tagged calls win over the shorthand
    tagged = (f'{OPEN}{{"name": "final_answer", "arguments": {{"answer": "x"}}}}{CLOSE} '
              "```sql\nS\n```")
    assert [c["function"]["name"] for c in parse_tool_calls(tagged, TOOLS)[1]] == ["final_answer"]
