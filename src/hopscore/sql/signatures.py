"""Cheap value signatures that rule out column pairs and alignments before they are compared.

Every signature here is a *necessary* condition: when it says two columns (or two column
pairs, or two tables under an alignment) differ, the exact test would say so too; when it says
they may be equal, the exact test decides. So pruning by signatures never changes a verdict, it
only skips work: the Hungarian cost matrix tests only column pairs whose signatures agree, and
the row-alignment search (``rows`` mode, the ``rows_mode_mismatch`` flag) tries only
alignments under which every pair of aligned columns holds the same multiset of value pairs,
instead of every permutation (8 agent columns against 5 gold ones are 6,720 alignments).

Values are hashed with Python's ``hash`` (equal values hash equal), mixed with splitmix64, and
summed modulo 2**64: a sum does not depend on row order, so equal multisets give equal sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hopscore.sql.cells import ATOL, RTOL, Column

_U64 = np.uint64
_GOLDEN = _U64(0x9E3779B97F4A7C15)
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)


def mix(values: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """splitmix64 of each uint64 (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = values + _GOLDEN
        z = (z ^ (z >> _U64(30))) * _M1
        z = (z ^ (z >> _U64(27))) * _M2
        return np.asarray(z ^ (z >> _U64(31)))


def hashes(values: Sequence[Any]) -> np.ndarray[Any, Any]:
    """The mixed hash of every value (a uint64 array)."""
    raw = np.fromiter(map(hash, values), dtype=np.int64, count=len(values))
    return mix(raw.view(np.uint64))


def multiset_sum(mixed: np.ndarray[Any, Any]) -> int:
    """The order-free sum of mixed hashes, modulo 2**64."""
    return int(np.sum(mixed, dtype=np.uint64))


def pair_sum(left: np.ndarray[Any, Any], right: np.ndarray[Any, Any]) -> int:
    """The order-free signature of the multiset of (left, right) value pairs, row by row."""
    with np.errstate(over="ignore"):
        combined = mix(left ^ (right * _M1 + _GOLDEN))
    return int(np.sum(combined, dtype=np.uint64))


def row_signatures(columns: Sequence[np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
    """One mixed hash per row of the given columns (in their order), sorted: equal multisets
    of rows give equal arrays."""
    combined = columns[0].copy()
    with np.errstate(over="ignore"):
        for column in columns[1:]:
            combined = mix(combined * _M2 + column)
    return np.sort(combined)


@dataclass(frozen=True, slots=True)
class ColumnSignature:
    """What :func:`hopscore.sql.cells.multiset_equal` needs equal, in a few numbers.

    ``exact`` must be equal for two columns to be equal as multisets: their length, the kinds of
    their keys, and the count and hash sum of their non-numeric keys, and the count of their
    numbers. Numbers compare with a tolerance next to a float, so then only a bound on their
    sums is checked (``total``, ``magnitude``); without floats on either side their hash sum
    is exact.
    """

    exact: tuple[Any, ...]
    has_float: bool
    numbers_hash: int
    total: float
    magnitude: float


def _counted_sum(counts: dict[Any, int]) -> int:
    """:func:`multiset_sum` of a multiset given as value -> count."""
    if not counts:
        return 0
    mixed = hashes(list(counts))
    times = np.fromiter(counts.values(), dtype=np.uint64, count=len(counts))
    with np.errstate(over="ignore"):
        return int(np.sum(mixed * times, dtype=np.uint64))


def column_signature(column: Column) -> ColumnSignature | None:
    """The signature of ``column``, or None when it holds JSON cells (compared pairwise)."""
    if column.has_json:
        return None
    split = column.split()
    others, numbers = split.others, split.numbers
    exact = (len(column), column.classes(), sum(others.values()), _counted_sum(others),
             sum(numbers.values()))
    try:
        values = np.fromiter(numbers, dtype=np.float64, count=len(numbers))
        times = np.fromiter(numbers.values(), dtype=np.float64, count=len(numbers))
    except OverflowError:  # an integer beyond float range: no bound from the sums
        values, times = np.array([np.inf]), np.ones(1)
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(values * times))
        magnitude = float(np.sum(np.abs(values) * times))
    numbers_hash = 0 if split.has_float else _counted_sum(numbers)
    return ColumnSignature(exact, split.has_float, numbers_hash, total, magnitude)


def may_be_equal(a: ColumnSignature | None, b: ColumnSignature | None) -> bool:
    """False only when the two columns cannot be equal as multisets."""
    if a is None or b is None:
        return True
    if a.exact != b.exact:
        return False
    if not a.has_float and not b.has_float:
        return a.numbers_hash == b.numbers_hash
    magnitude = a.magnitude + b.magnitude
    if not (np.isfinite(a.total) and np.isfinite(b.total) and np.isfinite(magnitude)):
        return True
    count = a.exact[4]
    # Sorted pairings within tolerance bound the difference of the sums; the last terms allow
    # for the rounding of the two float sums themselves.
    bound = (count * ATOL + RTOL * magnitude) * 1.000001 + 1e-9 * magnitude + 1e-300
    return bool(abs(a.total - b.total) <= bound)
