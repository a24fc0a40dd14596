"""Uncertainty of scores: standard errors, bootstrap confidence intervals, paired tests.

Everything here is pure numpy on per-example value matrices (rows = examples, columns =
metrics); nothing reads files.

* :func:`bootstrap_means` draws ``resamples`` nonparametric bootstrap replicates of the column
  means, seeded and vectorized. Resampling n rows with replacement is the same as drawing how
  many times each row is taken, ``Multinomial(n, 1/n)``; identical values are pooled into
  *atoms* first, so a binary metric needs only a 2-category multinomial per replicate,
  whatever n is (exactly the same distribution as drawing indices). When values are mostly
  distinct, indices are drawn and counted in blocks, so memory stays bounded (the cost is then
  about 10 ns per example and replicate: 2,000 replicates of 1,000,000 distinct values take
  tens of seconds; lower ``resamples`` for such files).
* the intervals of single scores are made in :mod:`hopscore.intervals` (Wilson, BCa, ...);
* :func:`paired_difference` is the paired bootstrap of ``mean(B) - mean(A)`` over the same ids,
  resampling examples (not runs) so the pairing is kept.
* :func:`mcnemar_exact` is McNemar's exact test (two-sided binomial on the discordant pairs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.defaults import DEFAULT_LEVEL as DEFAULT_LEVEL
from hopscore.defaults import DEFAULT_RESAMPLES as DEFAULT_RESAMPLES
from hopscore.defaults import DEFAULT_SEED as DEFAULT_SEED
from hopscore.errors import HopscoreError

#: Upper bound on the count matrix built at once (replicates x rows); about 32 MB of int64.
_BLOCK_CELLS = 1 << 22

Floats = NDArray[np.float64]
Finalize = Callable[[Mapping[str, float]], Mapping[str, float]]


Rows = NDArray[np.intp] | None


def _column(values: Floats, rows: Rows, column: int) -> Floats:
    """One column (of the selected rows): a temporary of n values, never of the whole matrix."""
    return values[:, column] if rows is None else values[rows, column]


def _count(values: Floats, rows: Rows) -> int:
    return int(values.shape[0] if rows is None else rows.size)


def standard_errors(values: Floats, rows: Rows = None) -> Floats:
    """Column-wise standard error of the mean, ``sd(ddof=1) / sqrt(n)``; NaN when n < 2."""
    n = _count(values, rows)
    if n < 2:
        return np.full(values.shape[1], np.nan)
    spreads = [float(_column(values, rows, j).std(ddof=1)) for j in range(values.shape[1])]
    return np.asarray(spreads, dtype=np.float64) / math.sqrt(n)


def _pooled(values: Floats) -> tuple[Floats, Floats] | None:
    """Distinct rows and their shares, or None when pooling would not pay off (mostly distinct)."""
    n = values.shape[0]
    atoms, counts = np.unique(values, axis=0, return_counts=True)
    if atoms.shape[0] * 8 > n:
        return None
    return atoms, counts / n


def _multinomial_means(
    atoms: Floats, shares: Floats, n: int, resamples: int, rng: np.random.Generator
) -> Floats:
    out = np.empty((resamples, atoms.shape[1]), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // atoms.shape[0])
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        draws = rng.multinomial(n, shares, size=stop - start)
        out[start:stop] = (draws @ atoms) / n
    return out


def _index_means(values: Floats, resamples: int, rng: np.random.Generator) -> Floats:
    """Draw row indices, count them per replicate in blocks, and average with a matrix product."""
    n, m = values.shape
    out = np.empty((resamples, m), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // n)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        size = stop - start
        picks = rng.integers(0, n, size=(size, n))
        picks += (np.arange(size, dtype=np.int64) * n)[:, None]
        taken = np.bincount(picks.ravel(), minlength=size * n).reshape(size, n)
        out[start:stop] = (taken.astype(np.float64) @ values) / n
    return out


def _joint_means(values: Floats, resamples: int, rng: np.random.Generator) -> Floats:
    pooled = _pooled(values)
    if pooled is not None:
        return _multinomial_means(pooled[0], pooled[1], values.shape[0], resamples, rng)
    return _index_means(values, resamples, rng)


def bootstrap_means(
    values: Floats,
    *,
    resamples: int,
    rng: np.random.Generator,
    joint: bool = False,
    rows: Rows = None,
) -> Floats:
    """``resamples`` bootstrap replicates of the column means of ``values`` (n x m) -> (B x m).

    With ``joint`` every replicate resamples the same rows for all columns (needed when
    replicates of several columns are combined, e.g. by ``finalize``). Otherwise each column
    with few distinct values is resampled on its own, which gives the same distribution of
    each column's replicate means (all that a per-metric interval uses) at a fraction of the
    cost; the remaining columns are resampled jointly. ``rows`` selects a subset (a group)
    without copying the whole matrix: columns are taken one at a time.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("values must be a 2-d array (examples x metrics)")
    m = values.shape[1]
    n = _count(values, rows)
    if n == 0:
        raise HopscoreError("cannot bootstrap an empty set of examples")
    if joint or m == 1:
        return _joint_means(values if rows is None else values[rows], resamples, rng)
    # Every column starts from the same stream, so identical columns get identical replicates.
    state = int(rng.integers(2**63))
    out = np.empty((resamples, m), dtype=np.float64)
    rest: list[int] = []
    for column in range(m):
        atoms, counts = np.unique(_column(values, rows, column), return_counts=True)
        if atoms.shape[0] * 8 > n:
            rest.append(column)
            continue
        column_rng = np.random.default_rng(state)
        out[:, column] = _multinomial_means(atoms[:, None], counts / n, n, resamples, column_rng)[
            :, 0
        ]
    if rest:
        subset = values[:, rest] if rows is None else values[np.ix_(rows, np.asarray(rest))]
        out[:, rest] = _joint_means(subset, resamples, np.random.default_rng(state))
    return out


def percentile_bounds(replicates: Floats, level: float) -> tuple[Floats, Floats]:
    """Column-wise percentile interval of bootstrap replicates."""
    tail = (1 - level) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail], axis=0)
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def apply_finalize(
    finalize: Finalize, names: Sequence[str], replicates: Floats, wanted: Sequence[str]
) -> Floats:
    """Recompute derived metrics on every replicate; a replicate where finalize fails is NaN."""
    out = np.full((replicates.shape[0], len(wanted)), np.nan)
    for row, means in enumerate(replicates):
        try:
            result = finalize(dict(zip(names, means.tolist(), strict=True)))
        except (ArithmeticError, ValueError):
            continue
        for column, metric in enumerate(wanted):
            if metric in result:
                out[row, column] = float(result[metric])
    return out


@dataclass(frozen=True, slots=True)
class Difference:
    """``B - A`` of one metric over paired examples, with its bootstrap interval."""

    a: float
    b: float
    delta: float
    low: float
    high: float
    se: float | None
    level: float
    resamples: int
    seed: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "delta": self.delta, "low": self.low, "high": self.high,
            "se": self.se, "level": self.level, "resamples": self.resamples, "seed": self.seed,
        }  # fmt: skip


def paired_difference(
    a: Floats,
    b: Floats,
    names: Sequence[str],
    *,
    finalize: Finalize | None = None,
    derived: Sequence[str] = (),
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
    rng: np.random.Generator | None = None,
) -> dict[str, Difference | None]:
    """Paired bootstrap of ``mean(b) - mean(a)`` per metric; rows of ``a`` and ``b`` are the
    same examples. Both halves are resampled with the same indices, so derived metrics
    (``finalize``) are recomputed per replicate on each side and differenced."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired arrays differ in shape: {a.shape} vs {b.shape}")
    m = len(names)
    rng = rng if rng is not None else np.random.default_rng(seed)
    joint = bool(derived) and finalize is not None
    if joint:
        replicates = bootstrap_means(np.hstack([a, b]), resamples=resamples, rng=rng, joint=True)
        rep_a, rep_b = replicates[:, :m], replicates[:, m:]
        diffs = rep_b - rep_a
    else:
        diffs = bootstrap_means(b - a, resamples=resamples, rng=rng)
    low, high = percentile_bounds(diffs, level)
    point_a, point_b = a.mean(axis=0), b.mean(axis=0)
    errors = standard_errors(b - a)
    out: dict[str, Difference | None] = {}
    for i, name in enumerate(names):
        out[name] = Difference(
            float(point_a[i]), float(point_b[i]), float(point_b[i] - point_a[i]),
            float(low[i]), float(high[i]), _finite(errors[i]), level, resamples, seed,
        )  # fmt: skip
    if joint and finalize is not None:
        fa = apply_finalize(finalize, names, rep_a, derived)
        fb = apply_finalize(finalize, names, rep_b, derived)
        try:
            whole_a = finalize(dict(zip(names, point_a.tolist(), strict=True)))
            whole_b = finalize(dict(zip(names, point_b.tolist(), strict=True)))
        except (ArithmeticError, ValueError):
            whole_a = whole_b = {}
        for column, metric in enumerate(derived):
            series = fb[:, column] - fa[:, column]
            if metric not in whole_a or metric not in whole_b or not np.isfinite(series).all():
                out[metric] = None
                continue
            d_low, d_high = percentile_bounds(series[:, None], level)
            va, vb = float(whole_a[metric]), float(whole_b[metric])
            spread = float(series.std(ddof=1)) if resamples > 1 else None
            out[metric] = Difference(
                va, vb, vb - va, float(d_low[0]), float(d_high[0]), spread, level, resamples, seed
            )
    return out


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes.

    ``right_to_wrong``: right in A, wrong in B; ``wrong_to_right``: the opposite.
    """

    both_right: int
    both_wrong: int
    right_to_wrong: int
    wrong_to_right: int
    p_value: float

    def to_json(self) -> dict[str, Any]:
        return {
            "both_right": self.both_right, "both_wrong": self.both_wrong,
            "right_to_wrong": self.right_to_wrong, "wrong_to_right": self.wrong_to_right,
            "p_value": self.p_value,
        }  # fmt: skip


def mcnemar_exact(a: NDArray[Any], b: NDArray[Any]) -> McNemar:
    """Two-sided exact McNemar test: a binomial test of the discordant pairs against p = 1/2.

    With no discordant pairs the p-value is 1.
    """
    from scipy.stats import binomtest

    right_a = np.asarray(a) >= 0.5
    right_b = np.asarray(b) >= 0.5
    if right_a.shape != right_b.shape:
        raise ValueError(f"paired arrays differ in shape: {right_a.shape} vs {right_b.shape}")
    right_to_wrong = int(np.count_nonzero(right_a & ~right_b))
    wrong_to_right = int(np.count_nonzero(~right_a & right_b))
    both_right = int(np.count_nonzero(right_a & right_b))
    both_wrong = int(right_a.size - both_right - right_to_wrong - wrong_to_right)
    discordant = right_to_wrong + wrong_to_right
    p_value = 1.0
    if discordant:
        p_value = float(binomtest(min(right_to_wrong, wrong_to_right), discordant, 0.5).pvalue)
    return McNemar(both_right, both_wrong, right_to_wrong, wrong_to_right, min(1.0, p_value))


def is_binary(values: NDArray[Any]) -> bool:
    """Whether every value is exactly 0 or 1."""
    array = np.asarray(values)
    return bool(np.isin(array, (0.0, 1.0)).all())
