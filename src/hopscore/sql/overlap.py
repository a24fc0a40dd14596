"""The reference's column-overlap pass (``col_precision``/``col_recall``), without pandas.

The reference builds pandas DataFrames and, for each agent column in order, tries each
still-unmatched gold column in order; the first that matches is consumed. Both columns are
first sorted independently. A pair matches on the first of:

(a) pandas ``assert_series_equal`` (dtype ignored; exact for integer columns, relative
    tolerance 1e-5 for two float columns, case-sensitive strings);
(b) the unordered cell-equality rule (:func:`hopscore.sql.cells.multiset_equal`) on the sorted
    values as pandas holds them (integers with a NULL become floats, NULL becomes NaN in number
    and text columns);
(c) numeric coercion: both columns read as numbers (text that is not a number becomes NaN),
    position by position ``isclose`` with NaN equal to NaN, unless either side is all NaN;
(d) the percentage rule: every number within [-100, 100] on both sides, and one side within
    0.1 of 100 times the other.

Here each column's pandas view (dtype, sorted values, numbers) is computed once, and the pair
tests are counting and vectorized numpy instead of pandas calls per pair. A column mixing
types that cannot be ordered (text and numbers, say) makes the reference's sort raise and its
whole run abort; here it is ordered by type, then value, and marked ``unsortable``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopscore.sql.cells import NAN, Column, multiset_equal

PERCENT_ATOL = 0.1
_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.IGNORECASE | re.ASCII
)
_SPACE = " \t\n\r\f\v"
_PADDED_NUMBER = re.compile(r"[ \t\n\r\f\v]*(" + _NUMBER.pattern + r")[ \t\n\r\f\v]*",
                            re.IGNORECASE | re.ASCII)
_NUMBER_START = frozenset("+-.0123456789iInN")


def to_number(value: Any) -> float:
    """One cell through ``pandas.to_numeric(errors="coerce")`` (non-numbers become NaN)."""
    if value is None:
        return math.nan
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, str):
        text = value.strip(_SPACE)
        if text[:1] in _NUMBER_START and _NUMBER.fullmatch(text):
            return float(text)
    return math.nan


def _kind(types: set[type]) -> str:
    types = set(types)
    has_null = type(None) in types
    types.discard(type(None))
    if not types:
        return "null"
    if types <= {int}:
        return "float" if has_null else "int"
    if types <= {int, float}:
        return "float"
    if types == {str}:
        return "str"
    return "object"


def _text_numbers(ordered: list[Any], present: list[str]) -> np.ndarray[Any, Any] | None:
    """``to_number`` of a text column in ``ordered`` order (NaN padding kept), or None when no
    text is a number. Each distinct text is matched once, in C."""
    distinct = list(set(present))
    found = {text: float(match.group(1))
             for text, match in zip(distinct, map(_PADDED_NUMBER.fullmatch, distinct),
                                    strict=True) if match}
    if all(number != number for number in found.values()):
        return None  # no number at all ("nan" texts are NaN too)
    get = found.get
    return np.array([get(v, math.nan) if type(v) is str else math.nan for v in ordered],
                    dtype=np.float64)


@dataclass(slots=True)
class OverlapColumn:
    """One column as the reference's overlap pass sees it: pandas dtype, sorted values."""

    kind: str  # "int", "float", "str", "null" (all NULL) or "object"
    values: list[Any]
    column: Column
    numbers: np.ndarray[Any, np.dtype[np.float64]] | None  # None when every value is NaN
    unsortable: bool = False

    @classmethod
    def build(cls, values: Sequence[Any], cells: Column | None = None,
              types: set[type] | None = None) -> OverlapColumn:
        """``values`` rounded as the reference rounds a table; ``cells`` their
        :class:`Column` (to know whether any cell is JSON); ``types`` the values' types."""
        if types is None:
            types = set(map(type, values))
        kind = _kind(types)
        unsortable = False
        present = [value for value in values if value is not None] \
            if type(None) in types else list(values)
        missing = len(values) - len(present)
        keys: list[Any] | None = None
        if kind == "int":
            ordered: list[Any] = sorted(present)
            keys = ordered
        elif kind == "float":
            ordered = sorted(map(float, present) if int in types else present)
            ordered += [math.nan] * missing
        elif kind == "str":
            ordered = sorted(present)
            keys = list(map(str.casefold, map(str.strip, ordered))) + [NAN] * missing
            ordered += [math.nan] * missing
        elif kind == "null":
            ordered = [None] * missing
        else:
            try:
                ordered = sorted(present)
            except TypeError:
                unsortable = True
                ordered = sorted(present, key=lambda v: (type(v).__name__, v))
            ordered += [None] * missing
        numbers: np.ndarray[Any, np.dtype[np.float64]] | None = None
        if kind in ("int", "float"):
            numbers = np.array(ordered, dtype=np.float64)
            if numbers.size == 0 or bool(np.isnan(numbers).all()):
                numbers = None
        elif kind == "str":
            numbers = _text_numbers(ordered, present)
        elif kind == "object":
            parsed = {v: to_number(v) for v in set(present)}
            if not all(number != number for number in parsed.values()):
                numbers = np.array([math.nan if v is None else parsed[v] for v in ordered],
                                   dtype=np.float64)
        json_free = kind in ("int", "float", "null") or (
            kind == "str" and cells is not None and not cells.has_json)
        column = Column(ordered, rounded=True, keys=keys, json_free=json_free)
        return cls(kind, ordered, column, numbers, unsortable)


def _pandas_equal(p: OverlapColumn, g: OverlapColumn) -> bool:
    """Rule (a), ``assert_series_equal(check_dtype=False)`` on the sorted columns: exact when
    either column holds integers, ``math.isclose`` (rtol 1e-5, atol 1e-8) for two float
    columns, exact for text, NULLs and other objects; NaN matches NaN in the same place."""
    numeric = ("int", "float")
    if p.kind in numeric and g.kind in numeric:
        if p.values == g.values:
            return True
        if p.numbers is None or g.numbers is None:
            return False
        left, right = p.numbers, g.numbers
        both_nan = np.isnan(left) & np.isnan(right)
        if p.kind == "float" and g.kind == "float":
            with np.errstate(invalid="ignore"):
                bound = np.maximum(1e-5 * np.maximum(np.abs(left), np.abs(right)), 1e-8)
                close = (left == right) | (np.abs(left - right) <= bound)
            return bool((close | both_nan).all())
        return bool(((left == right) | both_nan).all())
    if p.kind == g.kind and p.kind in ("str", "null", "object"):
        # The NaN of a text column is one object, so list equality matches NaN with NaN.
        return p.values == g.values
    return False


def _percent(p: np.ndarray[Any, Any], g: np.ndarray[Any, Any]) -> bool:
    if not (np.abs(p[~np.isnan(p)]) <= 100).all() or not (np.abs(g[~np.isnan(g)]) <= 100).all():
        return False
    return bool(
        np.isclose(p, g * 100, atol=PERCENT_ATOL, equal_nan=True).all()
        or np.isclose(p * 100, g, atol=PERCENT_ATOL, equal_nan=True).all()
    )


def pair_rule(p: OverlapColumn, g: OverlapColumn) -> str | None:
    """Which rule makes agent column ``p`` match gold column ``g``: ``equal`` (a or b),
    ``numeric`` (c), ``percent`` (d), or None."""
    if len(p.values) != len(g.values):
        return None
    if _pandas_equal(p, g) or multiset_equal(p.column, g.column):
        return "equal"
    if p.numbers is None or g.numbers is None:
        return None
    if bool(np.isclose(p.numbers, g.numbers, rtol=1e-5, atol=1e-8, equal_nan=True).all()):
        return "numeric"
    if _percent(p.numbers, g.numbers):
        return "percent"
    return None


@dataclass(frozen=True, slots=True)
class Overlap:
    precision: float
    recall: float
    #: (agent column, gold column, rule) for each match, in the order they were found.
    pairs: tuple[tuple[int, int, str], ...]
    unsortable: bool


def column_overlap(agent: Sequence[OverlapColumn], gold: Sequence[OverlapColumn], *,
                   ignore_extra_for_recall: bool = True) -> Overlap:
    """The reference's greedy column overlap; precision = matches / gold columns."""
    remaining = list(range(len(gold)))
    pairs: list[tuple[int, int, str]] = []
    for p_index, p in enumerate(agent):
        for g_index in remaining:
            rule = pair_rule(p, gold[g_index])
            if rule is not None:
                pairs.append((p_index, g_index, rule))
                remaining.remove(g_index)
                break
    total = len(pairs)
    precision = total / len(gold) if gold else 0.0
    denominator = len(gold) if ignore_extra_for_recall else len(agent)
    recall = total / denominator if denominator else 0.0
    unsortable = any(c.unsortable for c in agent) or any(c.unsortable for c in gold)
    return Overlap(precision, recall, tuple(pairs), unsortable)
