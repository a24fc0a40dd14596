"""Monte Carlo bootstrap (numpy): replicates of means, and the percentile and BCa intervals
from them, over examples or over whole clusters, for means and for metrics derived from means.

Used where no closed form applies: ``--ci bootstrap``, clustered bootstrap intervals, paired
differences by the bootstrap, and derived metrics (a benchmark's ``finalize``, e.g. an
evidence F1 from macro precision and recall). Replicates are seeded.

:func:`bootstrap_means` draws replicates of the column means of a (examples x metrics) matrix,
vectorized. Resampling n rows with replacement is the same as drawing how many times each row
is taken, ``Multinomial(n, 1/n)``; identical values are pooled into *atoms* first, so a binary
metric needs only a 2-category multinomial per replicate, whatever n is (exactly the same
distribution as drawing indices). When values are mostly distinct, indices are drawn and
counted in blocks, so memory stays bounded (the cost is then about 10 ns per example and
replicate: 2,000 replicates of 1,000,000 distinct values take tens of seconds; lower
``resamples`` for such files).

BCa follows ``scipy.stats.bootstrap``: z0 from the share of replicates below the estimate (ties
counted half), the acceleration from the jackknife (closed form for a ratio of cluster totals,
the empirical influence values for a derived metric), and linear interpolation of the replicate
quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from hopscore.errors import HopscoreError

Floats = NDArray[np.float64]
Finalize = Callable[[Mapping[str, float]], Mapping[str, float]]
_NORMAL = NormalDist()
#: replicates x rows (or clusters) drawn at once (about 32 MB of int64)
_BLOCK_CELLS = 1 << 22


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
    values: Floats, *, resamples: int, rng: np.random.Generator, joint: bool = False
) -> Floats:
    """``resamples`` bootstrap replicates of the column means of ``values`` (n x m) -> (B x m).

    With ``joint`` every replicate resamples the same rows for all columns (needed when
    replicates of several columns are combined, e.g. by ``finalize``). Otherwise each column
    with few distinct values is resampled on its own, which gives the same distribution of
    each column's replicate means (all that a per-metric interval uses) at a fraction of the
    cost; the remaining columns are resampled jointly.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError("values must be a 2-d array (examples x metrics)")
    n, m = values.shape
    if n == 0:
        raise HopscoreError("cannot bootstrap an empty set of examples")
    if joint or m == 1:
        return _joint_means(values, resamples, rng)
    # Every column starts from the same stream, so identical columns get identical replicates.
    state = int(rng.integers(2**63))
    out = np.empty((resamples, m), dtype=np.float64)
    rest: list[int] = []
    for column in range(m):
        atoms, counts = np.unique(values[:, column], return_counts=True)
        if atoms.shape[0] * 8 > n:
            rest.append(column)
            continue
        column_rng = np.random.default_rng(state)
        out[:, column] = _multinomial_means(atoms[:, None], counts / n, n, resamples, column_rng)[
            :, 0
        ]
    if rest:
        out[:, rest] = _joint_means(values[:, rest], resamples, np.random.default_rng(state))
    return out


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


def percentile_bounds(replicates: Floats, level: float) -> tuple[float, float]:
    """The percentile interval of one series of replicates."""
    tail = (1 - level) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail])
    return float(low), float(high)


def acceleration(influence: Floats) -> float:
    """BCa acceleration from jackknife or influence values: sum(u^3) / (6 sum(u^2)^1.5)."""
    u = np.asarray(influence, dtype=np.float64)
    u = u - u.mean()
    spread = float(np.sum(u * u))
    return 0.0 if spread <= 0 else float(np.sum(u**3)) / (6 * spread**1.5)


def bca_bounds(replicates: Floats, estimate: float, accel: float, level: float
               ) -> tuple[float, float] | None:
    """BCa bounds from replicates; None when z0 is infinite (every replicate on one side)."""
    b = replicates.size
    share = (np.count_nonzero(replicates < estimate) + np.count_nonzero(replicates <= estimate)
             ) / (2 * b)
    if share <= 0 or share >= 1:
        return None
    z0 = _NORMAL.inv_cdf(share)
    levels = []
    for tail in ((1 - level) / 2, (1 + level) / 2):
        z = _NORMAL.inv_cdf(tail)
        denominator = 1 - accel * (z0 + z)
        shifted = z0 + (z0 + z) / denominator if denominator > 0 else math.copysign(40.0, z)
        levels.append(_NORMAL.cdf(shifted))
    low, high = np.quantile(replicates, levels)
    return float(low), float(high)


def cluster_replicate_means(totals: Floats, sizes: Floats, resamples: int,
                            rng: np.random.Generator) -> Floats:
    """Means of ``resamples`` cluster bootstrap samples: G clusters drawn with replacement,
    each bringing all its examples (ratio of resampled totals to resampled sizes).
    ``totals`` is clusters x metrics."""
    g = sizes.size
    out = np.empty((resamples, totals.shape[1]), dtype=np.float64)
    block = max(1, _BLOCK_CELLS // g)
    shares = np.full(g, 1.0 / g)
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        counts = rng.multinomial(g, shares, size=stop - start).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = (counts @ totals) / (counts @ sizes)[:, None]
    return out


def cluster_jackknife_acceleration(totals: Floats, sizes: Floats) -> float:
    """Acceleration of the ratio mean from its leave-one-cluster-out values (closed form)."""
    whole_total, whole_size = float(totals.sum()), float(sizes.sum())
    remaining = whole_size - sizes
    if np.any(remaining <= 0):
        return 0.0
    left_out = (whole_total - totals) / remaining
    return acceleration(left_out.mean() - left_out)


def gradient(finalize: Finalize, names: Sequence[str], means: Floats, metric: str
             ) -> Floats | None:
    """Numerical gradient of one derived metric with respect to the means (central steps)."""
    out = np.zeros(means.size)
    for j in range(means.size):
        step = 1e-6 * max(1.0, abs(float(means[j])))
        try:
            up = means.copy()
            down = means.copy()
            up[j] += step
            down[j] -= step
            hi = finalize(dict(zip(names, up.tolist(), strict=True)))[metric]
            lo = finalize(dict(zip(names, down.tolist(), strict=True)))[metric]
        except (ArithmeticError, ValueError, KeyError):
            return None
        out[j] = (float(hi) - float(lo)) / (2 * step)
    return out
