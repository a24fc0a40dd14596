"""The statement check that runs before a query reaches SQLite.

It answers one question with a real SQL tokenizer (sqlglot, SQLite dialect), never with a
substring test: is this text exactly one statement that reads? String literals, quoted
identifiers and comments are tokens of their own, so ``'Walter White'``, a ``last_update``
column or ``-- create a list`` are fine, while ``SELECT 1; DROP TABLE t`` is two statements.

The check exists to give a clear message early; it is not the security boundary. The worker's
read-only connection and its authorizer (:mod:`hopscore.sql.query`) refuse every write even
for a text this check lets through (for instance when the tokenizer cannot read it).
"""

from __future__ import annotations

from sqlglot.dialects.sqlite import SQLite
from sqlglot.errors import TokenError
from sqlglot.tokenizer_core import Token, TokenType

#: Longest query text accepted (characters).
MAX_SQL_CHARS = 1_000_000
#: The reference's message for a statement that does not start as a query (kept verbatim).
NOT_A_QUERY = "Rejected: only SELECT / WITH / PRAGMA / EXPLAIN queries are allowed."
_QUERY_OPENERS = {TokenType.SELECT, TokenType.WITH, TokenType.VALUES}
_TOKENIZER = SQLite().tokenizer_class()


def _statements(tokens: list[Token]) -> list[list[Token]]:
    groups: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(token)
    return [group for group in groups if group]


def _tokenize(sql: str) -> list[Token] | None:
    try:
        return _TOKENIZER.tokenize(sql)
    except TokenError:
        return None


def _check_opener(statement: list[Token], allow_pragma: bool) -> str | None:
    first = statement[0]
    if first.token_type in _QUERY_OPENERS:
        return None
    if allow_pragma and first.token_type == TokenType.PRAGMA:
        return None
    if allow_pragma and first.token_type == TokenType.COMMAND and first.text.upper() == "EXPLAIN":
        # The tokenizer keeps the rest of an EXPLAIN statement as one string: check it too.
        rest = " ".join(token.text for token in statement[1:]).strip()
        words = rest.split(None, 2)
        if len(words) >= 2 and words[0].upper() == "QUERY" and words[1].upper() == "PLAN":
            rest = words[2] if len(words) > 2 else ""
        inner = _tokenize(rest)
        if inner is None:
            return None
        groups = _statements(inner)
        if not groups:
            return NOT_A_QUERY
        return _check_opener(groups[0], allow_pragma)
    return NOT_A_QUERY


def check_query(sql: str, *, allow_pragma: bool = True,
                max_chars: int = MAX_SQL_CHARS) -> str | None:
    """Why ``sql`` may not run, as a ``Rejected: ...`` message, or None when it may.

    ``allow_pragma`` also admits PRAGMA and EXPLAIN statements, as the reference's ``run_sql``
    does; the worker's authorizer still refuses PRAGMA assignments.
    """
    if not sql.strip():
        return "Rejected: the query is empty."
    if len(sql) > max_chars:
        return f"Rejected: the query is longer than {max_chars:,} characters."
    if "\x00" in sql:
        return "Rejected: the query contains a NUL character."
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError as exc:
        return ("Rejected: the query is not valid Unicode "
                f"(lone surrogate at character {exc.start}).")
    tokens = _tokenize(sql)
    if tokens is None:
        # Unreadable for the tokenizer (say, an unterminated string): SQLite reports the
        # syntax error itself, and the authorizer still guards.
        return None
    statements = _statements(tokens)
    if not statements:
        return "Rejected: the query is empty."
    if len(statements) > 1:
        return f"Rejected: only one SQL statement is allowed (found {len(statements)})."
    return _check_opener(statements[0], allow_pragma)
