"""Whether a query's result order is part of its meaning (an outermost ORDER BY).

Two answers are computed, and verdicts record both:

* :func:`reference_ordered` is the reference's rule, kept for parity: parse with sqlglot's
  *default* dialect, take the root scope, and call the query ordered when an ORDER BY in that
  scope hangs directly off a SELECT. An ORDER BY of a top-level UNION does not count. When
  parsing fails (or gives no scope) it falls back to a case-insensitive substring test for
  ``order by`` anywhere in the text, comments and literals included.
* :func:`sqlite_ordered` reads the query as SQLite does: parsed with the sqlite dialect, the
  root query (a SELECT or a set operation such as UNION) is ordered when it carries an ORDER
  BY. When parsing fails, the tokens decide: an ``ORDER BY`` outside every parenthesis (so not in
  a window, an aggregate, a subquery or a CTE body), never one inside a comment or a literal.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.sqlite import SQLite
from sqlglot.errors import SqlglotError, TokenError
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.tokenizer_core import TokenType

_TOKENIZER = SQLite().tokenizer_class()


@lru_cache(maxsize=4096)
def reference_ordered(sql: str) -> bool:
    """The reference's ``is_sql_ordered`` (default dialect, SELECT parent only)."""
    if not sql:
        return False
    try:
        scopes = traverse_scope(sqlglot.parse_one(sql))
        if not scopes:
            return "order by" in sql.lower()
        return any(isinstance(node.parent, exp.Select) for node in scopes[-1].find_all(exp.Order))
    except Exception:  # the reference falls back on any failure, so do we
        return "order by" in sql.lower()


def _top_level_order_by(sql: str) -> bool | None:
    try:
        tokens = _TOKENIZER.tokenize(sql)
    except TokenError:
        return None
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth = max(0, depth - 1)
        elif token.token_type == TokenType.ORDER_BY and depth == 0:
            return True
    return False


@lru_cache(maxsize=4096)
def sqlite_ordered(sql: str) -> bool:
    """Whether the outermost query (SELECT or set operation) has an ORDER BY, read as SQLite."""
    if not sql.strip():
        return False
    try:
        root = sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError, ValueError):
        root = None
    if root is not None:
        while isinstance(root, (exp.Subquery, exp.Paren)) and not root.args.get("order"):
            root = root.this
        if isinstance(root, exp.Query):
            return bool(root.args.get("order"))
    tokens_say = _top_level_order_by(sql)
    if tokens_say is not None:
        return tokens_say
    return "order by" in sql.lower()
