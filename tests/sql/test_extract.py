"""SQL extraction from answers and trajectories (spec §6.1 and §9 E1-E8).

The reference reading is checked against the reference's own extractor on
``tests/fixtures/sql_parity/extract_cases.jsonl`` (its answers, produced outside this repository
by ``make_extract_expected.py``, are in ``extract_expected.jsonl``); the lenient reading by the
table tests below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.sql.extract import (
    SOURCE_FENCED_GENERIC,
    SOURCE_FENCED_SQL,
    SOURCE_LAST_TOOL_CALL,
    SOURCE_NONE,
    Extraction,
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
def test_final_text_lenient(text: str, sql: str, source: str) -> None:
    found = extract_sql(text, mode="lenient")
    assert (found.sql, found.source) == (sql, source)


def test_prose_between_fences_is_never_sql_when_lenient() -> None:
    text = ("```sqlite\nSELECT 1\n```\nThis prose is not SQL.\n```sqlite\nSELECT 2\n```")
    assert [b.body.strip() for b in fenced_blocks(text)] == ["SELECT 1", "SELECT 2"]
    assert extract_sql(text, mode="lenient").sql == "SELECT 2"
    generic = "```python\nx = 1\n```\nprose\n```python\ny = 2\n```"
    assert extract_sql(generic, mode="lenient").source == SOURCE_NONE
    # The reference reads the closing fence as an opening one: the prose is its "SQL".
    assert extract_sql(text) == Extraction("This prose is not SQL.", SOURCE_FENCED_GENERIC)


def test_tilde_fences() -> None:
    assert extract_sql("~~~sql\nSELECT 5\n~~~", mode="lenient").sql == "SELECT 5"
    assert extract_sql("~~~sql\nSELECT 5\n~~~").source == SOURCE_NONE


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
def test_anthropic_rules_lenient(second: dict[str, Any] | None, expected: str) -> None:
    messages = _anthropic("t1", "SELECT 1", {"content": "Rows: 1"})
    messages += _anthropic("t2", "SELECT 2", second)
    for label in ("anthropic", "Anthropic", " ANTHROPIC "):
        assert extract_sql("", messages, label, mode="lenient").sql == expected


def test_anthropic_reference_reading() -> None:
    messages = _anthropic("t1", "SELECT 1", {"content": "Rows: 1"})
    # A call without a result counts as a success, as in the reference.
    unanswered = messages + _anthropic("t2", "SELECT 2", None)
    assert extract_sql("", unanswered, "anthropic").sql == "SELECT 2"
    assert extract_sql("", unanswered, "anthropic", mode="lenient").sql == "SELECT 1"
    # Only "anthropic" exactly is the Anthropic format; "Anthropic" is read as OpenAI.
    assert extract_sql("", messages, "Anthropic").source == SOURCE_NONE
    # An error result is never a success (a fix kept even in the reference reading).
    failed = messages + _anthropic("t2", "SELECT 2", {"content": "SQL error: no such table"})
    assert extract_sql("", failed, "anthropic").sql == "SELECT 1"


def test_calls_without_ids_pair_with_results_by_position() -> None:
    def turn(calls: list[str], results: list[str]) -> list[dict[str, Any]]:
        return [{"role": "assistant", "tool_calls": [
            {"function": {"name": "run_sql", "arguments": json.dumps({"sql": sql})}}
            for sql in calls]}, *({"role": "tool", "content": r} for r in results)]

    ok = "Rows: 1"
    # The last call failed: its error result, paired by position, makes it no success.
    for mode in ("reference", "lenient"):
        messages = turn(["SELECT 1"], [ok]) + turn(["SELECT bad"], ["SQL error: no such column"])
        assert extract_sql("", messages, mode=mode).sql == "SELECT 1"
        two = turn(["SELECT 1", "SELECT 2"], [ok, "Error: x"])
        assert extract_sql("", two, mode=mode).sql == "SELECT 1"
        swapped = turn(["SELECT 1", "SELECT 2"], ["Error: x", ok])
        assert extract_sql("", swapped, mode=mode).sql == "SELECT 2"
    # No result at all: the reference accepts such a call unchecked; lenient does not.
    assert extract_sql("", turn(["SELECT 3"], [])).sql == "SELECT 3"
    assert extract_sql("", turn(["SELECT 3"], []), mode="lenient").source == SOURCE_NONE

    def anthropic_turn(calls: list[str], results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"role": "assistant", "content": [
            {"type": "tool_use", "name": "run_sql", "input": {"sql": sql}} for sql in calls]},
            {"role": "user", "content": [{"type": "tool_result", **r} for r in results]}]

    messages = anthropic_turn(["SELECT 1"], [{"content": ok}])
    messages += anthropic_turn(["SELECT 2"], [{"content": ok, "is_error": True}])
    for mode in ("reference", "lenient"):
        assert extract_sql("", messages, "anthropic", mode=mode).sql == "SELECT 1"


CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "sql_parity"
EXTRACT_CASES = [json.loads(line) for line in (CORPUS / "extract_cases.jsonl").open()]
EXTRACT_EXPECTED = {row["name"]: row for row in map(json.loads,
                                                    (CORPUS / "extract_expected.jsonl").open())}
#: Cases where the reference reading deliberately differs from the reference's extractor, and
#: what it gives instead: a call whose result is an error is never the successful one (the
#: reference knows only "Error:"/"Rejected:" in OpenAI format, only is_error in Anthropic
#: format, and accepts calls without ids unchecked).
EXTRACT_DEVIATIONS = {
    "oa_sql_error": "SELECT 1", "oa_timeout": "SELECT 1", "oa_no_id_error": "SELECT 1",
    "oa_no_id_error_prefix": "SELECT 1", "oa_no_id_two_calls": "SELECT 1",
    "an_error_text": "SELECT 1", "an_error_text_prefix": "SELECT 1",
    "an_no_id_is_error": "SELECT 1",
}


def test_extract_corpus_is_complete() -> None:
    assert [c["name"] for c in EXTRACT_CASES] == list(EXTRACT_EXPECTED)
    assert set(EXTRACT_DEVIATIONS) <= set(EXTRACT_EXPECTED)


@pytest.mark.parametrize("case", EXTRACT_CASES, ids=lambda c: c["name"])
def test_reference_reading_equals_the_reference(case: dict[str, Any]) -> None:
    expected = EXTRACT_EXPECTED[case["name"]]
    found = extract_sql(case["final_text"].strip(), case.get("messages"),
                        case.get("message_format") or "openai")
    if case["name"] in EXTRACT_DEVIATIONS:
        assert found.sql == EXTRACT_DEVIATIONS[case["name"]] != expected["sql"]
        return
    assert (found.sql, found.source) == (expected["sql"], expected["source"])


def test_openai_reader_ignores_anthropic_blocks() -> None:
    messages = _anthropic("t1", "SELECT 1", {"content": "Rows: 1"})
    assert extract_sql("", messages, "openai").source == SOURCE_NONE
