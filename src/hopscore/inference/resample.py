"""Monte Carlo bootstrap intervals (numpy): the percentile and BCa intervals from replicates,
over examples or over whole clusters, for means and for metrics derived from means.

Used where no closed form applies: ``--ci bootstrap``, clustered bootstrap intervals, and
derived metrics (a benchmark's ``finalize``, e.g. FEVEROUS' evidence F1 from macro precision and
recall). Replicates are seeded. BCa follows ``scipy.stats.bootstrap``: z0 from the share of
replicates below the estimate (ties counted half), the acceleration from the jackknife (closed
form for a ratio of cluster totals, the empirical influence values for a derived metric), and
linear interpolation of the replicate quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Finalize = Callable[[Mapping[str, float]], Mapping[str, float]]
_NORMAL = NormalDist()
#: replicates x clusters drawn at once (about 32 MB of int64)
_BLOCK_CELLS = 1 << 22


def percentile_bounds(replicates: Floats, level: float) -> tuple[float, float]:
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
