"""The statement check reads tokens, never substrings."""

from __future__ import annotations

import pytest

from hopscore.sql.guard import NOT_A_QUERY, check_query


@pytest.mark.parametrize("sql", [
    "SELECT age FROM people WHERE name = 'Walter White'",
    "SELECT last_update, backdrop, salter, vacuum_level FROM t",
    "-- create a list of names\nSELECT name FROM people",
    "/* DROP TABLE people; */ SELECT 1",
    "SELECT name FROM people WHERE name LIKE '%insert %'",
    "SELECT REPLACE (name, 'a', 'b') FROM people",
    "with x as (select 1) select * from x",
    "VALUES (1, 2)",
    "SELECT 1;",
    "SELECT 1; -- trailing comment",
    "SELECT 'a;b'",
    'SELECT "weird;name" FROM t',
    "SELECT [odd name] FROM t",
    "PRAGMA table_info(people)",
    "EXPLAIN QUERY PLAN SELECT * FROM people",
    "SELECT profile ->> '$.job' FROM people",
])
def test_read_only_queries_pass(sql: str) -> None:
    assert check_query(sql) is None


@pytest.mark.parametrize(("sql", "message"), [
    ("", "empty"),
    ("   -- only a comment\n", "empty"),
    (";;", "empty"),
    ("SELECT 1; SELECT 2", "only one SQL statement is allowed (found 2)"),
    ("SELECT 1; DROP TABLE people", "found 2"),
    ("EXPLAIN SELECT 1; DELETE FROM t", "found 2"),
    ("DELETE FROM people", NOT_A_QUERY),
    ("INSERT INTO people(id) VALUES (9)", NOT_A_QUERY),
    ("UPDATE people SET age = 1", NOT_A_QUERY),
    ("DROP TABLE people", NOT_A_QUERY),
    ("ATTACH 'x.db' AS x", NOT_A_QUERY),
    ("DETACH x", NOT_A_QUERY),
    ("VACUUM INTO 'copy.db'", NOT_A_QUERY),
    ("REINDEX", NOT_A_QUERY),
    ("BEGIN", NOT_A_QUERY),
    ("EXPLAIN DELETE FROM people", NOT_A_QUERY),
    ("(SELECT 1)", NOT_A_QUERY),
    ("SELECT 1\x00", "NUL character"),
    ("SELECT '\ud800'", "lone surrogate"),
])
def test_rejections(sql: str, message: str) -> None:
    rejected = check_query(sql)
    assert rejected is not None and rejected.startswith("Rejected:")
    assert message in rejected


def test_pragma_and_explain_can_be_refused() -> None:
    assert check_query("PRAGMA table_info(t)", allow_pragma=False) == NOT_A_QUERY
    assert check_query("EXPLAIN SELECT 1", allow_pragma=False) == NOT_A_QUERY


def test_length_limit() -> None:
    assert check_query("SELECT 1 " + " " * 50, max_chars=20) is not None
    long_query = "SELECT 1 WHERE 1 IN (" + ",".join(["1"] * 60_000) + ")"
    assert len(long_query) > 100_000
    assert check_query(long_query) is None


def test_untokenizable_text_is_left_to_sqlite() -> None:
    # The tokenizer cannot read an unterminated literal; SQLite reports the error itself.
    assert check_query("SELECT 'unterminated") is None
