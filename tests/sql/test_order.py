"""Order detection: the reference's rule and the SQLite reading (spec §6.4, C13)."""

from __future__ import annotations

import pytest

from hopscore.sql.order import reference_ordered, sqlite_ordered

CASES = [
    # sql, reference, sqlite
    ("SELECT a FROM t ORDER BY a", True, True),
    ("select a from t order\n  by a desc", True, True),
    ("SELECT a FROM t", False, False),
    ("", False, False),
    ("SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", False, True),
    ("WITH x AS (SELECT a FROM t ORDER BY a) SELECT * FROM x", False, False),
    ("SELECT a FROM (SELECT a FROM t ORDER BY a)", False, False),
    ("SELECT sum(a) OVER (ORDER BY b) FROM t", False, False),
    ("SELECT group_concat(a ORDER BY b) FROM t", False, False),
    ("SELECT a->>'$.b' FROM t ORDER BY 1", True, True),
    ("SELECT a FROM t WHERE c = 'order by'", False, False),
    # Unparsable for the default dialect: the reference falls back to a substring test.
    ("SELECT [a b] FROM t -- order by", True, False),
    ("SELECT [a b] FROM t ORDER BY 1", True, True),
]


@pytest.mark.parametrize(("sql", "reference", "sqlite"), CASES)
def test_order_detection(sql: str, reference: bool, sqlite: bool) -> None:
    assert reference_ordered(sql) is reference
    assert sqlite_ordered(sql) is sqlite


def test_sqlite_reading_falls_back_to_tokens() -> None:
    # Not parsable by sqlglot, still tokenizable: ORDER BY outside parentheses decides.
    assert sqlite_ordered("SELECT a FROM t ORDER BY a ,,, garbage") is True
    assert sqlite_ordered("SELECT f(ORDER BY x) FROM t garbage ,,,") is False
