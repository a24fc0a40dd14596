"""Search-to-SQL failure reasons, from ``hopscore sql-match`` output rows.

Categories follow the grader's pipeline: the gold must run, the agent's SQL must be found and
run, then the result tables are compared (columns first, then rows, then their order when the
gold query orders its outermost SELECT).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from hopscore.analysis.categories import Dimension, Inputs, Sample

CATEGORIES = (
    "match", "SQL extraction failed", "execution error: timeout",
    "execution error: rejected (not a read-only query)", "execution error: other",
    "column mismatch", "row mismatch", "order mismatch", "gold SQL failed", "missing gold SQL",
    "database not found", "grading limit (time or memory)",
)  # fmt: skip


def _rows(table: Any) -> list[str] | None:
    if isinstance(table, Mapping) and isinstance(table.get("rows"), list):
        return [repr(row) for row in table["rows"]]
    return None


def failure_reason(sample: Sample) -> str | None:
    row = sample.record
    if "match" not in row or "reason" not in row:
        return None
    if row.get("match") is True:
        return "match"
    # ``reason_kind`` (hopscore sql-match) is the reason without its details; the reference
    # writes only ``reason``, whose prefix is the same kind.
    reason = str(row.get("reason_kind") or row.get("reason") or "")
    if reason.startswith("missing_gold_sql"):
        return "missing gold SQL"
    if reason.startswith(("compare_timeout", "result_too_large")):
        return "grading limit (time or memory)"
    if row.get("gold_exec_error") or reason.startswith("gold_sql_exec_error") or (
        row.get("gold_failure") is True
    ):
        return "gold SQL failed"
    if reason.startswith(("sqlite_db_not_found", "record needs db_path")):
        return "database not found"
    if reason.startswith("agent_sql_extraction_failed") or row.get("agent_sql_source") == "none":
        return "SQL extraction failed"
    error = row.get("agent_exec_error")
    if error or reason.startswith("agent_sql_exec_error"):
        text = f"{error or ''} {reason}".lower()
        if "timed out" in text or "timeout" in text or "interrupted" in text:
            return "execution error: timeout"
        if "rejected" in text or "not authorized" in text or "read-only" in text:
            return "execution error: rejected (not a read-only query)"
        return "execution error: other"
    precision = row.get("column_precision")
    recall = row.get("column_recall")
    if isinstance(precision, (int, float)) and isinstance(recall, (int, float)) and (
        precision < 1 or recall < 1
    ):
        return "column mismatch"
    agent, gold = _rows(row.get("agent_table")), _rows(row.get("gold_table"))
    if (row.get("order_sensitive") and agent is not None and gold is not None
            and agent != gold and Counter(agent) == Counter(gold)):
        return "order mismatch"
    return "row mismatch"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "S2SQL failure reason",
        "Why the agent's SQL did not match: extraction, execution (timeout, rejected write, "
        "other), column alignment, rows, or row order; gold-side failures apart.",
        failure_reason, CATEGORIES,
    )]  # fmt: skip
