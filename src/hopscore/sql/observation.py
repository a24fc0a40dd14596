"""The ``run_sql`` tool's observation text, in the reference harness's layout.

An agent sees a query's result as plain text:

* an error: the executor's error text as it is (``Rejected: ...``, ``SQL error: ...``, ...);
* an empty result: ``(empty result set)``;
* otherwise ``Rows: N`` (``Rows: 500 (truncated to first 500; more rows existed)`` when capped),
  a blank line, a header of column names and a dashed separator, then one line per row. Cells
  are ``str()`` of the value (NULL prints empty), clipped to ``max_cell_chars`` with ``...``;
  columns are left-justified to the widest of header and cells, at most 60 characters (longer
  cells are not cut to the width).

A non-empty description is put first, followed by a blank line, on success only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore.sql.sandbox import QueryResult, SqlExecutor

MAX_TOOL_ROWS = 500
MAX_CELL_CHARS = 2000
MAX_COLUMN_WIDTH = 60
EMPTY_SQL = "Error: empty sql query."
NOT_CONFIGURED = "Error: run_sql is not configured (no sqlite database for this run)."


def _cell(value: Any, max_cell_chars: int) -> str:
    text = "" if value is None else str(value)
    if len(text) > max_cell_chars:
        text = text[: max_cell_chars - 3] + "..."
    return text


def format_observation(result: QueryResult, *, description: str = "",
                       max_rows: int = MAX_TOOL_ROWS, max_cell_chars: int = MAX_CELL_CHARS) -> str:
    """The text an agent sees for ``result`` (see the module docstring for the layout)."""
    if not result.ok:
        return result.error or "SQL error: unknown failure"
    header = f"{description.strip()}\n\n" if description.strip() else ""
    if not result.rows:
        return header + "(empty result set)"
    cells = [[_cell(value, max_cell_chars) for value in row] for row in result.rows]
    names = list(result.columns)
    widths = [len(name) for name in names]
    for row in cells:
        for index, text in enumerate(row):
            widths[index] = min(MAX_COLUMN_WIDTH, max(widths[index], len(text)))

    def line(values: list[str]) -> str:
        return " | ".join(value.ljust(widths[index]) for index, value in enumerate(values))

    summary = f"Rows: {len(cells)}"
    if result.truncated:
        summary += f" (truncated to first {max_rows}; more rows existed)"
    body = "\n".join(line(row) for row in cells)
    separator = "-+-".join("-" * width for width in widths)
    return f"{header}{summary}\n\n{line(names)}\n{separator}\n{body}"


def run_sql(executor: SqlExecutor, db_path: str | Path | None, sql: str, description: str = "",
            *, max_rows: int = MAX_TOOL_ROWS, timeout_s: float | None = 120.0,
            max_cell_chars: int = MAX_CELL_CHARS) -> str:
    """The reference ``run_sql(sql, description)`` tool: run read-only, return the observation."""
    text = (sql or "").strip()
    if not text:
        return EMPTY_SQL
    if db_path is None:
        return NOT_CONFIGURED
    result = executor.execute(db_path, text, max_rows=max_rows, timeout_s=timeout_s,
                              max_cell_chars=max_cell_chars + 1)
    return format_observation(result, description=description or "", max_rows=max_rows,
                              max_cell_chars=max_cell_chars)
