"""Input records and output verdicts of ``hopscore sql-match``.

Input (one JSON object per line, as the reference evaluator takes it): ``instance_id`` or
``id``; the answer text in ``response`` or ``final_answer``; the gold query in ``gold_sql`` or
``sql``; the database as ``db_path``, or ``db`` with ``--db-root``; optionally ``messages`` (a
trajectory) and ``message_format`` (``openai``, the default, or ``anthropic``). As in the
reference, an empty first field falls back to the second. Text fields must be strings (or
null), ``messages`` a list; anything else is reported with its file, line and field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hopscore.errors import InputError, Location
from hopscore.files.fields import json_type

MESSAGE_FORMATS = ("openai", "anthropic")
#: Reasons that leave a row without a verdict (``match`` is null).
UNDECIDED = frozenset({"invalid_input", "internal_error"})
#: Reasons whose failure is the benchmark's or the setup's, not the agent's.
GOLD_FAILURES = frozenset({
    "missing_gold_sql", "missing_db", "invalid_db_name", "sqlite_db_not_found",
    "gold_sql_exec_error",
})
#: Reasons of a record that ran into --timeout or --memory-mb while being compared or held
#: (the record is a miss; a rerun with higher limits grades it).
LIMIT_REASONS = frozenset({"compare_timeout", "result_too_large"})


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """One validated input line."""

    line: int
    instance_id: str | int | None
    response: str
    gold_sql: str
    db: str
    db_path: str
    messages: list[Any] | None
    message_format: str


def _text(data: dict[str, Any], where: Location, *names: str) -> str:
    """The first non-empty of ``names`` (stripped), as the reference's ``a or b or ""``."""
    for name in names:
        value = data.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(where, f"expected a string, got {json_type(value)}", field=name)
        if value.strip():
            return value.strip()
    return ""


def _path_text(data: dict[str, Any], where: Location, name: str) -> str:
    """A text field used as (part of) a file path: no NUL, no lone surrogate."""
    value = _text(data, where, name)
    if "\x00" in value:
        raise InputError(where, "contains a NUL character", field=name)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(where, f"contains a lone surrogate at character {exc.start + 1}",
                         field=name) from None
    return value


def record_id(data: Any) -> str | int | None:
    """The record's id as given (``instance_id``, else ``id``), for error rows too."""
    if not isinstance(data, dict):
        return None
    for name in ("instance_id", "id"):
        value = data.get(name)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return value
    return None


def parse_record(data: Any, where: Location) -> MatchRecord:
    """Validate one input object; raises :class:`InputError` naming the line and field."""
    if not isinstance(data, dict):
        raise InputError(where, f"expected a JSON object, got {json_type(data)}")
    for name in ("instance_id", "id"):
        value = data.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            raise InputError(where, f"expected a string or integer id, got {json_type(value)}",
                             field=name)
    messages = data.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise InputError(where, f"expected a list of messages, got {json_type(messages)}",
                         field="messages")
    message_format = _text(data, where, "message_format") or "openai"
    if message_format.lower() not in MESSAGE_FORMATS:
        raise InputError(where, f"unknown message format {message_format!r}; expected "
                         f"{' or '.join(MESSAGE_FORMATS)}", field="message_format")
    return MatchRecord(
        line=where.line or 0,
        instance_id=record_id(data),
        response=_text(data, where, "response", "final_answer"),
        gold_sql=_text(data, where, "gold_sql", "sql"),
        db=_path_text(data, where, "db"),
        db_path=_path_text(data, where, "db_path"),
        messages=messages,
        # As written: the reference reading takes only "anthropic" exactly as Anthropic.
        message_format=data.get("message_format") or "openai",
    )


@dataclass(slots=True)
class Verdict:
    """One output line: the reference's verdict fields plus what decided it."""

    instance_id: str | int | None
    line: int
    compare: str
    #: None when no verdict could be given (``invalid_input``, ``internal_error``)
    match: bool | None = False
    score: float | None = 0.0
    raw_score: float = 0.0
    reason: str = ""
    reason_kind: str = ""
    agent_sql: str = ""
    agent_sql_source: str = "none"
    column_precision: float = 0.0
    column_recall: float = 0.0
    order_sensitive: bool = False
    order_sensitive_sqlite: bool = False
    agent_exec_error: str | None = None
    gold_exec_error: str | None = None
    decided_by: str | None = None
    flags: list[str] = field(default_factory=list)
    alignment: list[list[int]] = field(default_factory=list)
    #: whether each result had more rows than --max-rows (compared on the first ones)
    rows_truncated: dict[str, bool] = field(
        default_factory=lambda: {"agent": False, "gold": False})
    db_path: str | None = None
    agent_table: dict[str, Any] | None = None
    gold_table: dict[str, Any] | None = None
    extract: str = "reference"
    #: the other extraction's SQL and verdict, when it reads another SQL
    other_extraction: dict[str, Any] | None = None

    @property
    def extraction_changes_verdict(self) -> bool:
        other = self.other_extraction
        return other is not None and self.match is not None \
            and bool(other.get("match")) != bool(self.match)

    def fail(self, kind: str, reason: str | None = None) -> Verdict:
        self.reason_kind = kind
        self.reason = reason if reason is not None else kind
        if kind in UNDECIDED:
            self.match = None
            self.score = None
        return self

    @property
    def gold_failure(self) -> bool:
        return self.reason_kind in GOLD_FAILURES or (
            self.reason_kind == "result_too_large" and self.gold_exec_error is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "instance_id": self.instance_id,
            "judge_kind": "s2sql_exec",
            "match": self.match,
            "score": self.score,
            "reason": self.reason,
            "agent_sql": self.agent_sql,
            "agent_sql_source": self.agent_sql_source,
            "column_precision": self.column_precision,
            "column_recall": self.column_recall,
            "order_sensitive": self.order_sensitive,
            "agent_exec_error": self.agent_exec_error,
            "gold_exec_error": self.gold_exec_error,
            "agent_table": self.agent_table,
            "gold_table": self.gold_table,
            "line": self.line,
            "reason_kind": self.reason_kind,
            "gold_failure": self.gold_failure,
            "raw_score": self.raw_score,
            "compare": self.compare,
            "decided_by": self.decided_by,
            "flags": self.flags,
            "alignment": self.alignment,
            "order_sensitive_sqlite": self.order_sensitive_sqlite,
            "rows_truncated": self.rows_truncated,
            "truncated": False,
            "db_path": self.db_path,
            "extract": self.extract,
            "other_extraction": self.other_extraction,
        }


def _clip(text: Any, limit: int) -> Any:
    if isinstance(text, str) and len(text) > limit:
        return f"{text[:limit]} … [{len(text):,} chars]"
    return text


def cap_row(row: dict[str, Any], max_row_bytes: int, max_cell_chars: int) -> dict[str, Any]:
    """``row`` made to fit in ``max_row_bytes`` (its JSON line), marked ``truncated``.

    Table cells are already capped by the worker. A row still too long loses the rows shown of
    its result tables (their sizes stay), then has its long texts (the agent's SQL, the reason,
    the error texts, the other extraction's SQL) cut to ``max_cell_chars``, then loses its tables.
    Nothing cut is needed to resume: rows are keyed by the input line, not by their content.
    """
    def size(value: dict[str, Any]) -> int:
        return len(dumps_line(value).encode("utf-8"))

    if size(row) <= max_row_bytes:
        return row
    row = dict(row)
    cut: list[str] = []
    for name in ("agent_table", "gold_table"):
        table = row.get(name)
        if isinstance(table, dict) and table.get("rows"):
            row[name] = {**table, "rows": [], "rows_shown": 0}
            cut.append(f"{name}.rows")
    if size(row) > max_row_bytes:
        for name in ("agent_sql", "reason", "agent_exec_error", "gold_exec_error"):
            if isinstance(row.get(name), str) and len(row[name]) > max_cell_chars:
                row[name] = _clip(row[name], max_cell_chars)
                cut.append(name)
        other = row.get("other_extraction")
        if isinstance(other, dict) and len(str(other.get("agent_sql"))) > max_cell_chars:
            row["other_extraction"] = {**other,
                                       "agent_sql": _clip(other["agent_sql"], max_cell_chars)}
            cut.append("other_extraction.agent_sql")
    if size(row) > max_row_bytes:
        for name in ("agent_table", "gold_table"):
            if row.get(name) is not None:
                row[name] = None
                cut.append(name)
    if size(row) > max_row_bytes:  # what is left long is the record's own (its id, db_path)
        for name, value in list(row.items()):
            if name not in ("key", "settings") and isinstance(value, str) \
                    and len(value) > max_cell_chars:
                row[name] = _clip(value, max_cell_chars)
                cut.append(name)
        if isinstance(row.get("other_extraction"), dict) and \
                size({"x": row["other_extraction"]}) > max_row_bytes // 2:
            row["other_extraction"] = None
            cut.append("other_extraction")
    row["truncated"] = True
    row["truncated_fields"] = cut
    return row


def dumps_line(value: dict[str, Any]) -> str:
    """One JSON line; text that cannot be UTF-8 (lone surrogates) is escaped instead."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False)
    return text + "\n"
