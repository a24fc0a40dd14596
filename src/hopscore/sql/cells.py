"""Cell equality of the reference's execution match, computed once per cell.

The reference compares two cells like this (spec §6.3, "cell equality"):

* when both cells are JSON (a string whose first non-space character is ``[`` or ``{`` and that
  decodes), the JSON rule applies: lists element-wise in order, objects by key-agnostic
  coverage of their leaf values (the side with fewer leaves must be covered by the other);
* otherwise the cells are normalized (floats rounded to 3 digits, strings stripped and
  case-folded) and compared with ``==``, except that a float against a number uses numpy's
  ``isclose`` (rtol 1e-5, atol 1e-8, tolerance relative to the right-hand cell; NaN equals NaN).

It then matches two columns as multisets by greedy first fit (each left cell takes the first
unused equal right cell) in a pairwise Python loop. Here every cell is normalized once into a
hashable key, and two columns are compared through counts of keys. Because the numeric
tolerance is not transitive, greedy first fit can depend on order; wherever two distinct
numbers of the columns lie within tolerance of each other, the greedy walk is replayed exactly
on just those cells (with a sorted window instead of a scan), so the answer is always the
reference's. Columns holding JSON cells use the reference's pairwise walk on pre-parsed cells.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import numpy as np

DIGITS = 3
RTOL = 1e-5
ATOL = 1e-8


class _NaN:
    """The one key of every NaN cell (NaN equals NaN under the reference's ``isclose``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NaN"


NAN: Any = _NaN()
NOT_JSON: Any = object()


def round_cell(value: Any, digits: int = DIGITS) -> Any:
    """The reference's table-wide rounding: Python floats only, to ``digits`` places."""
    return round(value, digits) if type(value) is float else value


def round_floats(values: list[float], digits: int = DIGITS) -> list[float]:
    """``[round(v, digits) for v in values]`` for a list of floats, vectorized.

    Python rounds the exact binary value correctly. Scaling by ``10**digits`` in floating point
    gives the same integer whenever the scaled value is not within 1e-6 of a half; those
    values (and huge or non-finite ones) go through ``round`` itself, so the result is always
    identical to ``round``.
    """
    if len(values) < 64:
        return [round(v, digits) for v in values]
    scale = 10.0 ** digits
    array = np.array(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = array * scale
        fraction = np.abs(scaled - np.trunc(scaled))
        doubtful = ~np.isfinite(scaled) | (np.abs(scaled) >= 2.0**52) \
            | (np.abs(fraction - 0.5) < 1e-6)
        result: list[float] = (np.rint(scaled) / scale).tolist()
    for index in np.flatnonzero(doubtful).tolist():
        result[index] = round(values[index], digits)
    return result


def normalize(value: Any, digits: int = DIGITS) -> Any:
    """The reference's primitive normalization, on an already rounded cell."""
    if isinstance(value, float):
        return NAN if value != value else round(value, digits)
    if isinstance(value, str):
        return value.strip().casefold()
    return value


def parse_json(value: Any) -> Any:
    """The decoded cell when it counts as JSON for the reference, else :data:`NOT_JSON`."""
    if isinstance(value, (list, dict)):
        return value
    if not isinstance(value, str):
        return NOT_JSON
    text = value.strip()
    if not text or text[0] not in "[{":
        return NOT_JSON
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


def isclose(x: float, y: float) -> bool:
    """numpy's ``isclose(x, y, rtol=1e-5, atol=1e-8, equal_nan=True)`` on two Python floats."""
    if x == y or (x != x and y != y):
        return True
    return abs(x - y) <= ATOL + RTOL * abs(y) and math.isfinite(y)


def values_equal(a: Any, b: Any) -> bool:
    """Equality of two normalized primitives (``b`` is the side the tolerance is relative to)."""
    if a is NAN or b is NAN:
        if a is b:
            return True
        other = b if a is NAN else a
        return isinstance(other, float) and other != other
    if (isinstance(a, float) and isinstance(b, (int, float))) or (
        isinstance(b, float) and isinstance(a, (int, float))
    ):
        return isclose(float(a), float(b))
    return bool(a == b)


def _leaves(obj: Any, digits: int, out: list[Any]) -> list[Any]:
    if isinstance(obj, dict):
        for value in obj.values():
            _leaves(value, digits, out)
    elif isinstance(obj, list):
        for item in obj:
            _leaves(item, digits, out)
    else:
        out.append(normalize(obj, digits))
    return out


def _covered(smaller: list[Any], larger: list[Any]) -> bool:
    used = [False] * len(larger)
    for small in smaller:
        for index, large in enumerate(larger):
            if not used[index] and values_equal(small, large):
                used[index] = True
                break
        else:
            return False
    return True


def _json_compatible(left: Any, right: Any, digits: int) -> bool:
    if isinstance(left, dict) and isinstance(right, dict):
        left_leaves = _leaves(left, digits, [])
        right_leaves = _leaves(right, digits, [])
        if len(left_leaves) <= len(right_leaves):
            return _covered(left_leaves, right_leaves)
        return _covered(right_leaves, left_leaves)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _json_compatible(a, b, digits) for a, b in zip(left, right, strict=True)
        )
    return values_equal(normalize(left, digits), normalize(right, digits))


def json_equal(left: Any, right: Any, digits: int = DIGITS) -> bool:
    """The reference's JSON rule for two decoded cells."""
    if isinstance(left, dict) != isinstance(right, dict):
        left, right = [left], [right]
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _json_compatible(a, b, digits) for a, b in zip(left, right, strict=True)
        )
    return _json_compatible(left, right, digits)


def _no_nan(values: list[Any]) -> bool:
    """True when no value is NaN (quickly: a NaN, or inf - inf, makes the sum NaN)."""
    try:
        total = sum(values)
    except (OverflowError, ValueError):
        return False
    return bool(total == total)


def _may_hold_json(keys: list[str]) -> bool:
    """Whether a text key may start with ``[`` or ``{`` (a quick test over joined text)."""
    joined = "\x00".join(keys)
    return joined[:1] in ("[", "{") or "\x00[" in joined or "\x00{" in joined


def _keys(values: list[Any], digits: int, rounded: bool,
          types: set[type] | None = None) -> tuple[list[Any], list[int]]:
    """:func:`normalize` of every cell (fast paths per common column type), and the positions
    of text cells that may be JSON."""
    if types is None:
        types = set(map(type, values))
    keys: list[Any]
    if types <= {str}:
        keys = list(map(str.casefold, map(str.strip, values)))
        if not _may_hold_json(keys):
            return keys, []
        return keys, [i for i, key in enumerate(keys) if key[:1] in ("[", "{")]
    if types <= {int, type(None)}:
        return list(values), []
    if types <= {float, int, type(None)}:
        if rounded and type(None) not in types and _no_nan(values):
            keys = list(values)
        elif rounded:
            keys = [NAN if value != value else value for value in values]
        else:
            keys = [(NAN if value != value else round(value, digits))
                    if type(value) is float else value for value in values]
        return keys, []
    keys = [normalize(value, digits) for value in values]
    return keys, [i for i, key in enumerate(keys)
                  if type(key) is str and key[:1] in ("[", "{")]


def same_counts(a: Counter[Any], b: Counter[Any]) -> bool:
    """Counter equality at dict speed (``Counter.__eq__`` is a Python loop before 3.12);
    the counters here never hold zero counts, so the two agree."""
    return dict.__eq__(a, b) is True


class _Split:
    """A column's numeric keys (counted, sorted) apart from its other keys (counted)."""

    __slots__ = ("has_float", "numbers", "others", "sorted")

    def __init__(self, keys: list[Any]) -> None:
        types = set(map(type, keys))
        if not types & {int, float}:
            numeric: list[Any] = []
            self.others: Counter[Any] = Counter(keys)
        elif types <= {int, float}:
            numeric = keys
            self.others = Counter()
        else:
            numeric = [k for k in keys if type(k) in (int, float)]
            self.others = Counter(k for k in keys if type(k) not in (int, float))
        self.numbers = Counter(numeric)
        self.has_float = float in types
        self.sorted = np.sort(np.array(numeric, dtype=np.float64)) if self.has_float else None


class Column:
    """One result column with each cell's key computed once.

    ``values`` are the cells as compared (rounded); ``keys`` their normalized primitives;
    ``parsed`` the decoded JSON of each cell (:data:`NOT_JSON` for the others) when any cell is
    JSON, else None.
    """

    __slots__ = ("_classes", "_split", "digits", "keys", "parsed", "values")

    def __init__(self, values: Sequence[Any], digits: int = DIGITS, *, rounded: bool = False,
                 keys: list[Any] | None = None, json_free: bool = False,
                 types: set[type] | None = None) -> None:
        """``rounded``: floats are already rounded to ``digits``; ``keys``: the cells' keys when
        already known (a permutation of another column's, say); ``json_free``: no cell is
        JSON (known from that other column); ``types``: the set of the values' types."""
        self.values = list(values)
        self.digits = digits
        if keys is None:
            self.keys, candidates = _keys(self.values, digits, rounded, types)
        else:
            self.keys = keys
            candidates = [] if json_free else [
                i for i, key in enumerate(keys) if type(key) is str and key[:1] in ("[", "{")]
        parsed = None
        # A text key is the stripped, case-folded text: it starts as the JSON text would.
        for index in candidates:
            decoded = parse_json(self.values[index])
            if decoded is not NOT_JSON:
                if parsed is None:
                    parsed = [NOT_JSON] * len(self.values)
                parsed[index] = decoded
        self.parsed = parsed
        self._split: _Split | None = None
        self._classes: frozenset[type] | None = None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def has_json(self) -> bool:
        return self.parsed is not None

    def classes(self) -> frozenset[type]:
        """The kinds of keys present; numbers count as one kind (only they compare across
        types), so two columns with different kinds cannot be equal as multisets."""
        if self._classes is None:
            kinds = set(map(type, self.keys))
            if kinds & {int, float}:
                kinds -= {int, float}
                kinds.add(float)
            self._classes = frozenset(kinds)
        return self._classes

    def split(self) -> _Split:
        """The keys split into numbers and the rest, counted (computed once)."""
        if self._split is None:
            self._split = _Split(self.keys)
        return self._split

    def cell_equal(self, i: int, other: Column, j: int) -> bool:
        """The reference's ``_cells_equal(self[i], other[j])``."""
        if self.parsed is not None and other.parsed is not None:
            left, right = self.parsed[i], other.parsed[j]
            if left is not NOT_JSON and right is not NOT_JSON:
                return json_equal(left, right, self.digits)
        return values_equal(self.keys[i], other.keys[j])


def ordered_equal(a: Column, b: Column) -> bool:
    """Cell by cell, in order (the reference's ordered column test)."""
    if len(a) != len(b):
        return False
    if not a.has_json and not b.has_json:
        if a.keys == b.keys:
            return True
        return all(x == y or values_equal(x, y) for x, y in zip(a.keys, b.keys, strict=True))
    return all(a.cell_equal(i, b, i) for i in range(len(a)))


def _maybe_close(x: float, y: float) -> bool:
    """A symmetric over-approximation of :func:`isclose` (never False when isclose is True)."""
    return abs(x - y) <= (ATOL + RTOL * max(abs(x), abs(y))) * 1.000001 or x == y


def _pairwise_greedy(a: Column, b: Column) -> bool:
    """The reference's greedy first fit, cell pair by cell pair (used for JSON columns)."""
    if a.keys == b.keys:
        return True  # identical sequences: each cell takes its twin, in order
    unused = list(range(len(b)))
    for i in range(len(a)):
        for position, j in enumerate(unused):
            if a.cell_equal(i, b, j):
                del unused[position]
                break
        else:
            return False
    return True


def _maybe_close_arrays(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """:func:`_maybe_close` element-wise."""
    with np.errstate(invalid="ignore"):
        bound = (ATOL + RTOL * np.maximum(np.abs(x), np.abs(y))) * 1.000001
        return np.asarray((np.abs(x - y) <= bound) | (x == y))


def _tolerance_groups(values: list[Any]) -> list[list[Any]]:
    """Sorted distinct numbers in runs linked by possible closeness; runs of two or more."""
    floats = np.array(values, dtype=np.float64)
    linked = _maybe_close_arrays(floats[:-1], floats[1:])
    starts = np.flatnonzero(~linked) + 1
    bounds = [0, *starts.tolist(), len(values)]
    return [values[lo:hi] for lo, hi in pairwise(bounds) if hi - lo > 1]


def _replay_greedy(a_keys: list[Any], b_keys: list[Any]) -> bool:
    """Greedy first fit on numeric keys (in their column order), exactly as the reference.

    Right-hand cells are grouped by (value, type); for each left cell the groups within
    tolerance are found in a sorted window and the unused cell with the lowest position wins.
    """
    groups: dict[tuple[Any, type], deque[int]] = {}
    for position, key in enumerate(b_keys):
        groups.setdefault((key, type(key)), deque()).append(position)
    order = sorted(groups, key=lambda group: group[0])
    values = [float(group[0]) for group in order]
    for key in a_keys:
        x = float(key)
        start = bisect_left(values, x)
        best_group = None
        best_position = -1
        for step in (-1, 1):
            index = start if step == 1 else start - 1
            while 0 <= index < len(order) and _maybe_close(x, values[index]):
                queue = groups[order[index]]
                if queue and (best_group is None or queue[0] < best_position) \
                        and values_equal(key, order[index][0]):
                    best_group, best_position = order[index], queue[0]
                index += step
        if best_group is None:
            return False
        groups[best_group].popleft()
    return True


def multiset_equal(a: Column, b: Column) -> bool:
    """The reference's unordered column test (greedy first fit), computed by counting keys.

    Keys that are not numbers only equal the same key, so their counts must agree. Numbers
    need a tolerance only next to a float; then a sorted pairing within tolerance is a
    necessary condition (checked vectorized), and only numbers lying within tolerance of
    another distinct number have the greedy walk replayed.
    """
    if len(a) != len(b):
        return False
    if a.keys == b.keys:
        return True  # identical sequences: each cell takes its twin, in order
    if a.has_json or b.has_json:
        return _pairwise_greedy(a, b)
    if a.classes() != b.classes():
        return False
    left, right = a.split(), b.split()
    if not same_counts(left.others, right.others):
        return False
    if not left.has_float and not right.has_float:
        return same_counts(left.numbers, right.numbers)  # exact equality: an equivalence
    if left.sorted is None or right.sorted is None:
        left_sorted = np.sort(np.array(list(left.numbers.elements()), dtype=np.float64))
        right_sorted = np.sort(np.array(list(right.numbers.elements()), dtype=np.float64))
    else:
        left_sorted, right_sorted = left.sorted, right.sorted
    if not bool(_maybe_close_arrays(left_sorted, right_sorted).all()):
        return False
    counts_agree = same_counts(left.numbers, right.numbers)
    distinct = sorted(left.numbers.keys() | right.numbers.keys())
    groups = _tolerance_groups(distinct) if len(distinct) > 1 else []
    if not groups:
        return counts_agree  # no two distinct numbers within tolerance: exact counts decide
    group_of = {key: index for index, group in enumerate(groups) for key in group}
    if not counts_agree:
        for key in left.numbers.keys() ^ right.numbers.keys() | {
                k for k, n in left.numbers.items() if right.numbers.get(k) != n}:
            if key not in group_of:
                return False
    a_parts: list[list[Any]] = [[] for _ in groups]
    b_parts: list[list[Any]] = [[] for _ in groups]
    for keys, parts in ((a.keys, a_parts), (b.keys, b_parts)):
        for key in keys:
            index = group_of.get(key) if type(key) in (int, float) else None
            if index is not None:
                parts[index].append(key)
    return all(
        len(x) == len(y) and _replay_greedy(x, y)
        for x, y in zip(a_parts, b_parts, strict=True)
    )
