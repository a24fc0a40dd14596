"""The run_sql observation text (spec §4, run_sql)."""

from __future__ import annotations

from pathlib import Path

from hopscore.sql.observation import (
    EMPTY_SQL,
    NOT_CONFIGURED,
    format_observation,
    run_sql,
)
from hopscore.sql.sandbox import QueryResult, SqlExecutor


def test_layout_with_description() -> None:
    result = QueryResult(ok=True, columns=("id", "name"), rows=[(1, "Walter"), (22, None)])
    text = format_observation(result, description="  names  ")
    assert text == (
        "names\n\n"
        "Rows: 2\n\n"
        "id | name  \n"
        "---+-------\n"
        "1  | Walter\n"
        "22 |       "
    )


def test_truncation_and_clipping() -> None:
    long_cell = "x" * 2500
    result = QueryResult(ok=True, columns=("c",), rows=[(long_cell,)], truncated=True)
    text = format_observation(result, max_rows=1)
    lines = text.split("\n")
    assert lines[0] == "Rows: 1 (truncated to first 1; more rows existed)"
    assert lines[2] == "c" + " " * 59  # width capped at 60
    assert lines[3] == "-" * 60
    assert lines[4] == "x" * 1997 + "..."  # clipped to 2000, not cut to the width


def test_empty_and_errors() -> None:
    assert format_observation(QueryResult(ok=True, columns=("a",))) == "(empty result set)"
    assert format_observation(QueryResult(ok=True, columns=("a",)), description="d") == \
        "d\n\n(empty result set)"
    error = QueryResult(ok=False, error="SQL error: no such table: x", kind="sql_error")
    assert format_observation(error, description="ignored") == "SQL error: no such table: x"


def test_blob_and_float_cells() -> None:
    result = QueryResult(ok=True, columns=("b", "f"), rows=[(b"\x00", 0.5)])
    assert format_observation(result).endswith("b'\\x00' | 0.5")


def test_run_sql_tool(shop_db: Path, executor: SqlExecutor) -> None:
    assert run_sql(executor, shop_db, "   ") == EMPTY_SQL
    assert run_sql(executor, None, "SELECT 1") == NOT_CONFIGURED
    text = run_sql(executor, shop_db, "SELECT i FROM big", "all rows")
    assert text.startswith("all rows\n\nRows: 500 (truncated to first 500; more rows existed)")
    assert run_sql(executor, shop_db, "DELETE FROM people").startswith("Rejected:")
