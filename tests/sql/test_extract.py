"""SQL extraction from answers and trajectories (spec §6.1 and §9 E1-E8)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hopscore.sql.extract import (
    SOURCE_FENCED_GENERIC,
    SOURCE_FENCED_SQL,
    SOURCE_LAST_TOOL_CALL,
    SOURCE_NONE,
    extract_sql,
    fenced_blocks,
    is_error_text,
)


@pytest.mark.parametrize(("text", "sql", "source"), [
    ("```sql\nSELECT 1\n```", "SELECT 1", SOURCE_FENCED_SQL),
    ("Answer:\n```SQL  \n  SELECT 1;\n```\nbye", "SELECT 1;", SOURCE_FENCED_SQL),
    ("```Sql\nSELECT 1\n```", "SELECT 1", SOURCE_FENCED_SQL),
    ("```sqlite\nSELECT 1\n```", "SELECT 1", SOURCE_FENCED_SQL),
    ("```\nSELECT 2\n```", "SELECT 2", SOURCE_FENCED_GENERIC),
    ("```sql\nSELECT 1\n```\n```sql\nSELECT 2\n```", "SELECT 2", SOURCE_FENCED_SQL),
    ("```\nSELECT 9\n```\n```sql\nSELECT 1\n```", "SELECT 1", SOURCE_FENCED_SQL),
    ("inline ```sql\nSELECT 3```", "SELECT 3", SOURCE_FENCED_SQL),
    ("```sql\nSELECT 1\n```\n```sql\n\n```", "", SOURCE_NONE),
    ("```python\nprint(1)\n```", "", SOURCE_NONE),
    ("SELECT 1", "", SOURCE_NONE),
    ("```sql SELECT 1```", "", SOURCE_NONE),
    ("```sql\nSELECT 1", "", SOURCE_NONE),
])
def test_final_text(text: str, sql: str, source: str) -> None:
    found = extract_sql(text)
    assert (found.sql, found.source) == (sql, source)


def test_prose_between_fences_is_never_sql() -> None:
    text = ("```sqlite\nSELECT 1\n```\nThis prose is not SQL.\n```sqlite\nSELECT 2\n```")
    assert [b.body.strip() for b in fenced_blocks(text)] == ["SELECT 1", "SELECT 2"]
    assert extract_sql(text).sql == "SELECT 2"
    generic = "```python\nx = 1\n```\nprose\n```python\ny = 2\n```"
    assert extract_sql(generic).source == SOURCE_NONE


def test_tilde_fences() -> None:
    assert extract_sql("~~~sql\nSELECT 5\n~~~").sql == "SELECT 5"


def _openai_call(call_id: str | None, sql: str, result: str | None) -> list[dict[str, Any]]:
    call: dict[str, Any] = {"type": "function",
                            "function": {"name": "run_sql", "arguments": json.dumps({"sql": sql})}}
    if call_id:
        call["id"] = call_id
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    if result is not None:
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return messages


@pytest.mark.parametrize("error", [
    "Error: empty sql query.",
    "Rejected: only SELECT / WITH / PRAGMA / EXPLAIN queries are allowed.",
    "SQL error: no such column: x", "Query timed out after 120s.",
    "Database file not found: /x", "SQLite connect failed: boom", "  SQL error: leading space",
    "Query killed after 6s: the worker did not stop at its deadline.",
])
def test_openai_error_results_are_failures(error: str) -> None:
    messages = _openai_call("a", "SELECT 1", "Rows: 1") + _openai_call("b", "SELECT 2", error)
    found = extract_sql("no fence", messages)
    assert (found.sql, found.source) == ("SELECT 1", SOURCE_LAST_TOOL_CALL)
    assert is_error_text(error)


def test_openai_rules() -> None:
    # The last call wins, within a message the last call first.
    two_calls = [{"role": "assistant", "tool_calls": [
        {"id": "a", "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}},
        {"id": "b", "function": {"name": "run_sql", "arguments": {"sql": "SELECT 2"}}}]},
        {"role": "tool", "tool_call_id": "a", "content": "Rows: 1"},
        {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "Rows: 1"}]}]
    assert extract_sql("", two_calls).sql == "SELECT 2"
    # A call whose result is missing is a failure; a call without an id is accepted.
    unanswered = _openai_call("a", "SELECT 1", "ok") + _openai_call("b", "SELECT 2", None)
    assert extract_sql("", unanswered).sql == "SELECT 1"
    assert extract_sql("", _openai_call(None, "SELECT 3", None)).sql == "SELECT 3"
    # Other tools, broken arguments and empty SQL are skipped.
    other = [{"role": "assistant", "tool_calls": [
        {"id": "w", "function": {"name": "web_search", "arguments": '{"sql": "SELECT 9"}'}},
        {"id": "x", "function": {"name": "run_sql", "arguments": "{not json"}},
        {"id": "y", "function": {"name": "run_sql", "arguments": '{"sql": "  "}'}}]}]
    assert extract_sql("", other).source == SOURCE_NONE
    # A fenced block in the final text comes first.
    fenced = extract_sql("```sql\nSELECT 7\n```", _openai_call("a", "SELECT 1", "ok"))
    assert fenced.sql == "SELECT 7"


def _anthropic(use_id: str, sql: str, result: dict[str, Any] | None) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "assistant", "content": [
        {"type": "text", "text": "let me query"},
        {"type": "tool_use", "id": use_id, "name": "run_sql", "input": {"sql": sql}}]}]
    if result is not None:
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": use_id, **result}]})
    return messages


@pytest.mark.parametrize(("second", "expected"), [
    ({"content": "Rows: 1"}, "SELECT 2"),
    ({"content": "Rows: 1", "is_error": True}, "SELECT 1"),
    ({"content": "SQL error: no such table: t"}, "SELECT 1"),
    ({"content": [{"type": "text", "text": "Query timed out after 1s."}]}, "SELECT 1"),
    (None, "SELECT 1"),
])
def test_anthropic_rules(second: dict[str, Any] | None, expected: str) -> None:
    messages = _anthropic("t1", "SELECT 1", {"content": "Rows: 1"})
    messages += _anthropic("t2", "SELECT 2", second)
    for label in ("anthropic", "Anthropic", " ANTHROPIC "):
        assert extract_sql("", messages, label).sql == expected


def test_openai_reader_ignores_anthropic_blocks() -> None:
    messages = _anthropic("t1", "SELECT 1", {"content": "Rows: 1"})
    assert extract_sql("", messages, "openai").source == SOURCE_NONE
