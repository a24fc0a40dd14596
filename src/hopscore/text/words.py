"""Counts in messages: "1 predicted id is", "2 predicted ids are" (never "1 errors")."""

from __future__ import annotations


def plural(noun: str) -> str:
    """The plural of a message noun: "id" -> "ids", "query" -> "queries", "match" -> "matches"."""
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and the noun in the right number: ``counted(1, "error")`` is "1 error".

    The noun may be several words; the last one is the one made plural
    (``counted(2, "predicted id")`` is "2 predicted ids"). ``many`` gives an irregular plural.
    """
    if n == 1:
        return f"{n} {noun}"
    if many is None:
        head, _, last = noun.rpartition(" ")
        many = f"{head} {plural(last)}" if head else plural(last)
    return f"{n} {many}"


def agree(n: int, one: str, many: str) -> str:
    """The verb form for ``n`` things: ``agree(1, "is", "are")`` is "is"."""
    return one if n == 1 else many
