"""Grade one ``hopscore sql-match`` record: extract, resolve the database, run, compare.

Per record, in the reference's order: gold present, agent SQL extracted, database resolved,
gold query run, agent query run, tables compared. Any failure ends the record with a reason
(``missing_gold_sql``, ``agent_sql_extraction_failed``, ``sqlite_db_not_found: ...``,
``gold_sql_exec_error: ...``, ``agent_sql_exec_error: ...``).
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.sql.extract import EXTRACT_MODES, Extraction, extract_sql
from hopscore.sql.modes import MODES
from hopscore.sql.order import reference_ordered, sqlite_ordered
from hopscore.sql.records import LIMIT_REASONS, MatchRecord, Verdict
from hopscore.sql.sandbox import SqlExecutor
from hopscore.sql.tables import MAX_CELL_CHARS

DEFAULT_TEMPLATE = "{db}/{db}_template.sqlite"
NEEDS_DB = "record needs db_path, or db together with --db-root"


@dataclass(frozen=True, slots=True)
class MatchOptions:
    db_root: Path | None = None
    db_template: str = DEFAULT_TEMPLATE
    timeout_s: float | None = 120.0
    max_rows: int = 100_000
    compare: str = "reference"
    table_rows: int = 20
    #: how the agent's SQL is read: "reference" (exactly as the reference) or "lenient"
    extract: str = "reference"
    #: cap of one result-table cell in a verdict row (characters)
    max_cell_chars: int = MAX_CELL_CHARS
    #: cap of one verdict row (bytes of its JSON line)
    max_row_bytes: int = 1_000_000

    @property
    def other_extract(self) -> str:
        return "lenient" if self.extract == "reference" else "reference"

    def check(self) -> None:
        if self.extract not in EXTRACT_MODES:
            raise HopscoreError(f"--extract must be one of {', '.join(EXTRACT_MODES)}, not "
                                f"{self.extract!r}")
        if self.compare not in MODES:
            raise HopscoreError(
                f"--compare must be one of {', '.join(MODES)}, not {self.compare!r}")
        try:
            fields = [name for _, name, _, _ in string.Formatter().parse(self.db_template) if name]
        except ValueError as exc:
            raise HopscoreError(f"--db-template {self.db_template!r}: {exc}") from None
        if any(name != "db" for name in fields) or "db" not in fields:
            raise HopscoreError(f"--db-template {self.db_template!r} must use {{db}} and no other "
                                "field")


def resolve_db(record: MatchRecord, options: MatchOptions) -> tuple[str, Path | str]:
    """``("ok", path)``, or a failure ``(reason_kind, reason)``."""
    if record.db_path:
        return "ok", Path(record.db_path).expanduser().resolve()
    if not record.db or options.db_root is None:
        return "missing_db", NEEDS_DB
    name = record.db
    if any(part in ("", ".", "..") for part in name.replace("\\", "/").split("/")) \
            or "/" in name or "\\" in name or "\x00" in name:
        return "invalid_db_name", f"invalid_db_name: {name!r} is not a plain database name"
    return "ok", options.db_root / options.db_template.format(db=name)


def evaluate(record: MatchRecord, options: MatchOptions, executor: SqlExecutor) -> Verdict:
    """Grade one record (see the module docstring for the steps).

    When the other extraction (lenient for reference, and back) reads another SQL, that one is
    graded too, in the same worker call, and recorded as ``other_extraction``, so a summary can
    say how many verdicts the other reading would change.
    """
    found = extract_sql(record.response, record.messages, record.message_format,
                        mode=options.extract)
    other = extract_sql(record.response, record.messages, record.message_format,
                        mode=options.other_extract)
    verdict = Verdict(record.instance_id, record.line, options.compare)
    verdict.extract = options.extract
    if not record.gold_sql:
        return verdict.fail("missing_gold_sql")
    verdict.agent_sql, verdict.agent_sql_source = found.sql, found.source
    status, where = resolve_db(record, options)
    path = Path(where) if status == "ok" else None
    if path is not None:
        verdict.db_path = str(path)
    agents = [sql for sql in (found.sql, other.sql if other.sql != found.sql else "") if sql]
    reply: dict[str, Any] | None = None
    if path is not None and path.is_file() and agents:
        verdict.order_sensitive = reference_ordered(record.gold_sql)
        verdict.order_sensitive_sqlite = sqlite_ordered(record.gold_sql)
        reference_like = options.compare in ("reference", "strict")
        ordered = verdict.order_sensitive if reference_like else verdict.order_sensitive_sqlite
        reply = executor.grade(
            path, record.gold_sql, agents, max_rows=options.max_rows,
            timeout_s=options.timeout_s, compare=options.compare, order_matters=ordered,
            table_rows=options.table_rows, max_cell_chars=options.max_cell_chars)
    sides = dict(zip(agents, reply["agents"], strict=False)) if reply is not None else {}
    _decide(verdict, found, status, where, path, reply, sides.get(found.sql), options)
    if other.sql != found.sql:
        alternative = Verdict(record.instance_id, record.line, options.compare)
        alternative.agent_sql = other.sql
        _decide(alternative, other, status, where, path, reply, sides.get(other.sql), options)
        verdict.other_extraction = {
            "extract": options.other_extract, "agent_sql": other.sql,
            "agent_sql_source": other.source, "match": alternative.match,
            "reason_kind": alternative.reason_kind,
            "decided": alternative.reason_kind not in LIMIT_REASONS
            and "timed out" not in (alternative.agent_exec_error or ""),
        }
    return verdict


def _limit_reason(verdict: Verdict, limit: str, side: str, options: MatchOptions) -> Verdict:
    if limit == "compare_timeout":
        return verdict.fail("compare_timeout", (
            f"compare_timeout: executing and comparing took longer than --timeout "
            f"{options.timeout_s or 0:g}s"))
    if limit == "result_too_large":
        return verdict.fail("result_too_large", (
            f"result_too_large: {side} does not fit in the memory limit (--memory-mb)"))
    return verdict.fail("internal_error",
                        "internal_error: the SQL worker died while comparing the results")


def _decide(verdict: Verdict, found: Extraction, status: str, where: Path | str,
            path: Path | None, reply: dict[str, Any] | None, agent: dict[str, Any] | None,
            options: MatchOptions) -> Verdict:
    """Fill ``verdict`` for the SQL ``found``, in the reference's order of steps."""
    if not found.sql:
        return verdict.fail("agent_sql_extraction_failed")
    if status != "ok" or path is None:
        return verdict.fail(status, str(where))
    if not path.is_file() or reply is None:
        return verdict.fail("sqlite_db_not_found", f"sqlite_db_not_found: {path}")
    gold = reply["gold"]
    if not gold["ok"]:
        verdict.gold_exec_error = gold["error"]
        if gold["kind"] in ("memory", "too_large"):
            return _limit_reason(verdict, "result_too_large", "the gold result", options)
        if gold["kind"] == "not_found":
            return verdict.fail("sqlite_db_not_found", f"sqlite_db_not_found: {path}")
        return verdict.fail("gold_sql_exec_error", f"gold_sql_exec_error: {gold['error']}")
    assert agent is not None
    verdict.gold_table = gold.get("table")
    if agent.get("limit") and not agent["ok"]:
        return _limit_reason(verdict, agent["limit"], "the comparison", options)
    if not agent["ok"]:
        verdict.agent_exec_error = agent["error"]
        if agent["kind"] in ("memory", "too_large"):
            return _limit_reason(verdict, "result_too_large", "the agent's result", options)
        return verdict.fail("agent_sql_exec_error", f"agent_sql_exec_error: {agent['error']}")
    verdict.agent_table = agent.get("table")
    verdict.rows_truncated = {"agent": agent["truncated"], "gold": gold["truncated"]}
    if agent["truncated"] or gold["truncated"]:
        verdict.flags.append("rows_truncated")
    if agent["duplicate_column_names"] or gold["duplicate_column_names"]:
        verdict.flags.append("duplicate_column_names")
    result = agent.get("comparison")
    if result is None:
        return _limit_reason(verdict, agent.get("limit") or "", "comparing the results", options)
    verdict.match = result["match"]
    verdict.score = 1.0 if result["match"] else 0.0
    verdict.raw_score = result["raw_score"]
    verdict.column_precision = result["column_precision"]
    verdict.column_recall = result["column_recall"]
    verdict.decided_by = result["decided_by"]
    verdict.flags = [*result["flags"], *verdict.flags]
    verdict.alignment = result["alignment"]
    if result["match"]:
        return verdict.fail("exec_match")
    return verdict.fail("exec_mismatch", (
        f"exec_mismatch: raw_score={result['raw_score']:.3f} "
        f"col_precision={result['column_precision']:.3f} "
        f"col_recall={result['column_recall']:.3f}"))
