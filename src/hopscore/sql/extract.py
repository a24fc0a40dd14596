"""Find the SQL an agent submitted: in its final answer, else in its trajectory.

The order is the reference's (first hit wins):

1. the last fenced block labelled ``sql`` in the final text (``final_text_fenced_sql``);
2. the last unlabelled fenced block (``final_text_fenced_generic``);
3. the ``sql`` argument of the last successful ``run_sql`` call of the trajectory, newest
   assistant message first and, within one message, last call first (``last_tool_call``);
4. nothing (``none``).

Two readings (``mode``):

``reference`` (the default)
    Exactly the reference evaluator's reading (spec §6.1), its quirks included, so verdicts
    equal the leaderboard's: only ```` ```sql ```` / ```` ```SQL ```` followed by a line break
    open a SQL block (not ``Sql``, ``sqlite`` or ``~~~``); an unlabelled fence is any three
    backticks followed by a line break, so the closing fence of one block can open the next
    and the prose between two ``sqlite`` blocks is taken as the SQL; ``message_format`` is
    ``anthropic`` only when written exactly so; in Anthropic format a call without a result
    counts as successful. Two documented bugs of the reference are fixed even here, because
    they pick a query the agent saw fail: a call whose result is an error (any of the
    executor's error texts, ``SQL error: ...``, ``Query timed out ...``, not only ``Error:`` and
    ``Rejected:``; or ``is_error``) is never a successful one, and calls without ids are
    paired with their results by position instead of being accepted unchecked.
``lenient`` (``--extract lenient``)
    The robust reading: the ``sql`` label in any letter case and ``sqlite``/``postgresql``-style
    labels count as SQL, ``~~~`` fences too, fences are paired in order (prose between blocks is
    never SQL), ``message_format`` is read in any letter case, and a call whose result is missing
    is a failure in both formats.
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
EXTRACT_MODES = ("reference", "lenient")
#: Fence labels read as SQL by the lenient reading (compared in lower case).
SQL_LABELS = frozenset({"sql", "sqlite", "sqlite3", "postgresql", "postgres", "psql", "mysql"})
TOOL_NAME = "run_sql"

_MARKER = re.compile(r"`{3,}|~{3,}")
_INFO = re.compile(r"[ \t]*([A-Za-z0-9_.+#-]*)\s*?\n")
# The reference's two fence patterns: a label (or none), optional whitespace, a line break,
# then the body up to the next three backticks; matches are found left to right.
_REFERENCE_SQL_FENCE = re.compile(r"```(?:sql|SQL)\s*\n(.*?)```", re.DOTALL)
_REFERENCE_GENERIC_FENCE = re.compile(r"```\s*\n(.*?)```", re.DOTALL)


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
    """Steps 1 and 2, lenient: the last SQL-labelled block, else the last unlabelled one.

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


def reference_fenced_sql(text: str) -> Extraction | None:
    """Steps 1 and 2 as the reference reads them (see the module docstring)."""
    for pattern, source in ((_REFERENCE_SQL_FENCE, SOURCE_FENCED_SQL),
                            (_REFERENCE_GENERIC_FENCE, SOURCE_FENCED_GENERIC)):
        matches = list(pattern.finditer(text))
        last = matches[-1] if matches else None
        if last is not None and last.group(1).strip():
            return Extraction(last.group(1).strip(), source)
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
        except (ValueError, RecursionError):  # bad JSON, too deep, a 5,000-digit integer
            return ""
    if not isinstance(arguments, dict):
        return ""
    return str(arguments.get("sql") or "").strip()


_MISSING: Any = object()


def _openai_results(messages: list[Any]) -> tuple[dict[str, Any], dict[int, list[Any]]]:
    """Tool results by ``tool_call_id``, and for each assistant message (by index) the tool
    messages that directly follow it, for pairing calls without ids by position."""
    by_id: dict[str, Any] = {}
    following: dict[int, list[Any]] = {}
    owner: int | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            owner = None
            continue
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            if call_id:
                by_id[call_id] = message
            if owner is not None:
                following[owner].append(message)
        elif role == "assistant":
            owner = index
            following[index] = []
        else:
            owner = None
    return by_id, following


def _last_openai(messages: list[Any], lenient: bool) -> str | None:
    by_id, following = _openai_results(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls")
        if not isinstance(calls, list):
            continue
        for position in range(len(calls) - 1, -1, -1):
            call = calls[position]
            if not isinstance(call, dict):
                continue
            function = call.get("function")
            if not isinstance(function, dict):
                function = {}
            if (function.get("name") or call.get("name") or "") != TOOL_NAME:
                continue
            sql = _sql_argument(function.get("arguments"))
            if not sql:
                continue
            call_id = str(call.get("id") or "")
            if call_id:
                result = by_id.get(call_id, _MISSING)
            else:
                answers = following.get(index, [])
                result = answers[position] if position < len(answers) else _MISSING
                if result is _MISSING and not lenient:
                    return sql  # the reference accepts a call without an id unchecked
            if result is _MISSING or is_error_text(_content_text(result.get("content"))):
                continue
            return sql
    return None


def _anthropic_results(messages: list[Any]) -> tuple[dict[str, Any], dict[int, list[Any]]]:
    """``tool_result`` blocks by ``tool_use_id``, and for each assistant message (by index) the
    ``tool_result`` blocks of the user message right after it."""
    by_id: dict[str, Any] = {}
    following: dict[int, list[Any]] = {}
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "user" \
                or not isinstance(message.get("content"), list):
            continue
        blocks = [block for block in message["content"]
                  if isinstance(block, dict) and block.get("type") == "tool_result"]
        for block in blocks:
            use_id = str(block.get("tool_use_id") or "")
            if use_id:
                by_id[use_id] = block
        previous = messages[index - 1] if index else None
        if isinstance(previous, dict) and previous.get("role") == "assistant":
            following[index - 1] = blocks
    return by_id, following


def _last_anthropic(messages: list[Any], lenient: bool) -> str | None:
    by_id, following = _anthropic_results(messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        uses = [block for block in content
                if isinstance(block, dict) and block.get("type") == "tool_use"]
        for position in range(len(uses) - 1, -1, -1):
            block = uses[position]
            if (block.get("name") or "") != TOOL_NAME or not isinstance(block.get("input"), dict):
                continue
            sql = _sql_argument(block["input"])
            if not sql:
                continue
            use_id = str(block.get("id") or "")
            if use_id:
                result = by_id.get(use_id, _MISSING)
            else:
                answers = following.get(index, [])
                result = answers[position] if position < len(answers) else _MISSING
            if result is _MISSING:
                if lenient:
                    continue
                return sql  # the reference counts a call without a result as a success
            if result.get("is_error") or is_error_text(_content_text(result.get("content"))):
                continue
            return sql
    return None


def last_successful_run_sql(messages: list[Any] | None, message_format: str = "openai", *,
                            mode: str = "reference") -> str | None:
    """Step 3: the SQL of the last ``run_sql`` call whose result is not an error."""
    if not messages:
        return None
    lenient = mode == "lenient"
    anthropic = (message_format.strip().lower() if lenient else message_format) == "anthropic"
    if anthropic:
        return _last_anthropic(messages, lenient)
    return _last_openai(messages, lenient)


def extract_sql(final_text: str, messages: list[Any] | None = None,
                message_format: str = "openai", *, mode: str = "reference") -> Extraction:
    """The agent's SQL and its source label, in the reference order (see the module doc)."""
    if mode not in EXTRACT_MODES:
        raise ValueError(f"unknown extraction {mode!r}; expected one of "
                         f"{', '.join(EXTRACT_MODES)}")
    text = final_text or ""
    found = last_fenced_sql(text) if mode == "lenient" else reference_fenced_sql(text)
    if found is not None:
        return found
    sql = last_successful_run_sql(messages, message_format, mode=mode)
    if sql:
        return Extraction(sql, SOURCE_LAST_TOOL_CALL)
    return Extraction("", SOURCE_NONE)
