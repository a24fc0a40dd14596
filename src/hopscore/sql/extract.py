"""Find the SQL an agent submitted: in its final answer, else in its trajectory.

The order is the reference's (first hit wins):

1. the last fenced block labelled ``sql`` in the final text (``final_text_fenced_sql``);
2. the last unlabelled fenced block (``final_text_fenced_generic``);
3. the ``sql`` argument of the last successful ``run_sql`` call of the trajectory, newest
   assistant message first and, within one message, last call first (``last_tool_call``);
4. nothing (``none``).

Where this differs from the reference (each a fix listed in the spec, §9 E2, E3, E5, E6, E8):

* the ``sql`` label is matched in any letter case, and ``sqlite``/``postgresql``-style labels
  count as SQL too (the reference reads only ``sql``/``SQL``);
* fences are paired in order, so a closing fence is never read as an opening one and prose
  between two fenced blocks is never taken for SQL;
* a ``run_sql`` result that reports an error is not a success: the executor's own error texts
  (``SQL error:``, ``Query timed out``, ...) count, not only ``Error:`` and ``Rejected:``, in
  both trajectory formats; an Anthropic ``is_error`` result or a call whose result is missing
  counts as failed in both formats;
* ``message_format`` is matched in any letter case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hopscore.sql.sandbox import ERROR_PREFIXES

SOURCE_FENCED_SQL = "final_text_fenced_sql"
SOURCE_FENCED_GENERIC = "final_text_fenced_generic"
SOURCE_LAST_TOOL_CALL = "last_tool_call"
SOURCE_NONE = "none"
#: Fence labels read as SQL (compared in lower case).
SQL_LABELS = frozenset({"sql", "sqlite", "sqlite3", "postgresql", "postgres", "psql", "mysql"})
TOOL_NAME = "run_sql"

_MARKER = re.compile(r"`{3,}|~{3,}")
_INFO = re.compile(r"[ \t]*([A-Za-z0-9_.+#-]*)\s*?\n")


@dataclass(frozen=True, slots=True)
class Extraction:
    """The SQL found (empty when none) and where it came from."""

    sql: str
    source: str


@dataclass(frozen=True, slots=True)
class FencedBlock:
    label: str  # the info word, as written ("" when unlabelled)
    body: str


def fenced_blocks(text: str) -> list[FencedBlock]:
    """The fenced blocks of ``text`` in order, with fences paired left to right.

    An opening fence is three or more backticks (or tildes) followed by an optional label and a
    line break; the block runs to the next fence of the same character that is at least as
    long, wherever it stands. Unclosed blocks are ignored; a fence pair on one line (no line
    break after the opening fence) is skipped as a whole.
    """
    blocks: list[FencedBlock] = []
    markers = list(_MARKER.finditer(text))
    index = 0
    while index < len(markers):
        opening = markers[index]
        fence = opening.group()
        closing_at = None
        for later in range(index + 1, len(markers)):
            candidate = markers[later].group()
            if candidate[0] == fence[0] and len(candidate) >= len(fence):
                closing_at = later
                break
        if closing_at is None:
            break
        info = _INFO.match(text, opening.end())
        if info is not None and info.end() <= markers[closing_at].start():
            blocks.append(FencedBlock(info.group(1), text[info.end():markers[closing_at].start()]))
        index = closing_at + 1
    return blocks


def last_fenced_sql(text: str) -> Extraction | None:
    """Steps 1 and 2: the last SQL-labelled block, else the last unlabelled one.

    As in the reference, only the last block of each kind is looked at: when it is empty,
    that kind gives nothing.
    """
    blocks = fenced_blocks(text)
    sql_blocks = [block for block in blocks if block.label.lower() in SQL_LABELS]
    generic = [block for block in blocks if not block.label]
    for kind, source in ((sql_blocks, SOURCE_FENCED_SQL), (generic, SOURCE_FENCED_GENERIC)):
        if kind and kind[-1].body.strip():
            return Extraction(kind[-1].body.strip(), source)
    return None


def is_error_text(text: str) -> bool:
    """Whether a ``run_sql`` observation reports a failure rather than a result."""
    return text.lstrip().startswith(ERROR_PREFIXES)


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(
            str(part.get("text") or part.get("content") or "")
            for part in content
            if isinstance(part, dict)
        )
    return "" if content is None else str(content)


def _sql_argument(arguments: Any) -> str:
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return ""
    if not isinstance(arguments, dict):
        return ""
    value = arguments.get("sql")
    return "" if value is None else str(value).strip()


def _last_openai(messages: list[Any]) -> str | None:
    results = {
        str(m.get("tool_call_id")): m
        for m in messages
        if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id")
    }
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            continue
        for call in reversed(calls):
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            if not isinstance(function, dict):
                function = {}
            if (function.get("name") or call.get("name")) != TOOL_NAME:
                continue
            sql = _sql_argument(function.get("arguments"))
            if not sql:
                continue
            call_id = str(call.get("id") or "")
            if call_id:
                result = results.get(call_id)
                if result is None or is_error_text(_content_text(result.get("content"))):
                    continue
            return sql
    return None


def _last_anthropic(messages: list[Any]) -> str | None:
    results: dict[str, dict[str, Any]] = {}
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user" \
                and isinstance(message.get("content"), list):
            for block in message["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result" \
                        and block.get("tool_use_id"):
                    results[str(block["tool_use_id"])] = block
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in reversed(content):
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            if block.get("name") != TOOL_NAME or not isinstance(block.get("input"), dict):
                continue
            sql = _sql_argument(block["input"])
            if not sql:
                continue
            use_id = str(block.get("id") or "")
            if use_id:
                result = results.get(use_id)
                if result is None or result.get("is_error") \
                        or is_error_text(_content_text(result.get("content"))):
                    continue
            return sql
    return None


def last_successful_run_sql(messages: list[Any] | None,
                            message_format: str = "openai") -> str | None:
    """Step 3: the SQL of the last ``run_sql`` call whose result is not an error."""
    if not messages:
        return None
    if message_format.strip().lower() == "anthropic":
        return _last_anthropic(messages)
    return _last_openai(messages)


def extract_sql(final_text: str, messages: list[Any] | None = None,
                message_format: str = "openai") -> Extraction:
    """The agent's SQL and its source label, in the reference order (see the module doc)."""
    found = last_fenced_sql(final_text or "")
    if found is not None:
        return found
    sql = last_successful_run_sql(messages, message_format)
    if sql:
        return Extraction(sql, SOURCE_LAST_TOOL_CALL)
    return Extraction("", SOURCE_NONE)
