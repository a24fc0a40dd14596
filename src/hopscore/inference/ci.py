"""Confidence intervals of one mean, from counts or moments (pure Python).

Methods (``--ci``):

* ``wilson``: the Wilson score interval of a proportion (binary per-example metrics; the
  default for them). Never a single point unless n = 0: at 0/20 it is [0, 0.161].
* ``clopper-pearson``: the exact binomial interval (``scipy.stats.binomtest(...).proportion_ci``).
* ``bca``: the bias-corrected and accelerated bootstrap interval (the default for other
  metrics). For a mean it is computed on the ideal bootstrap distribution (B = infinity): its
  cumulants are those of the sample (mean, m2/n, m3/n^2, (m4 - 3 m2^2)/n^3), its quantiles come
  from the Cornish-Fisher expansion, the bias correction z0 from the Edgeworth expansion at the
  mean, and the acceleration from the closed-form jackknife of a mean,
  ``a = sum(d^3) / (6 sum(d^2)^1.5)``. No resampling, so it costs O(n) and has no Monte Carlo
  error; it agrees with ``scipy.stats.bootstrap(method="BCa")`` to within that method's own
  Monte Carlo error (tests). Endpoints stay inside the range of the data, as every bootstrap
  mean does.
* ``t``: mean +- t(n-1) * s / sqrt(n) (scipy's t quantile).
* ``bootstrap``: the percentile bootstrap with ``--resamples`` Monte Carlo replicates (drawn by
  :mod:`hopscore.inference.resample`, which needs numpy).

:class:`Interval` is what ``metrics.json`` records for every interval: method and level always.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import mul, sub
from statistics import NormalDist
from typing import Any

from hopscore.errors import HopscoreError

METHODS = ("wilson", "clopper-pearson", "bootstrap", "bca", "t")
#: ``--ci`` choices: a method, "auto" (Wilson for binary metrics, BCa for the others) or "none"
CHOICES = ("auto", *METHODS, "none")
BINARY_ONLY = ("wilson", "clopper-pearson")
_NORMAL = NormalDist()


def check_choice(method: str, level: float) -> None:
    """Reject an unknown ``--ci`` or a level outside (0, 1) with a clear message."""
    if method not in CHOICES:
        raise HopscoreError(f"--ci must be one of {', '.join(CHOICES)} (got {method!r})")
    if not 0 < level < 1:
        raise HopscoreError(f"--ci-level must be between 0 and 1, e.g. 0.95 (got {level})")


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval of one reported value."""

    low: float
    high: float
    level: float
    method: str
    #: standard error of the value (analytic s / sqrt(n), cluster-robust, or bootstrap sd)
    se: float | None = None
    n: int | None = None
    #: Monte Carlo replicates and seed (bootstrap methods that resample); None otherwise
    resamples: int | None = None
    seed: int | None = None
    #: extra facts worth recording: {"clusters": 40, "cluster": "table_id", "effective_n": ...}
    details: dict[str, Any] = field(default_factory=dict)
    #: why this method and not the requested one (e.g. "wilson: bca would be a point at 1")
    note: str | None = None

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "level": self.level, "low": self.low,
                               "high": self.high, "se": self.se, "n": self.n}
        if self.resamples is not None:
            out["resamples"] = self.resamples
            out["seed"] = self.seed
        out.update(self.details)
        if self.note:
            out["note"] = self.note
        return out


def z_quantile(level: float) -> float:
    """The two-sided normal quantile of a confidence level (1.959964 for 0.95)."""
    return _NORMAL.inv_cdf(0.5 + 0.5 * level)


def wilson(successes: float, n: float, level: float) -> tuple[float, float]:
    """Wilson score interval, computed as ``scipy.stats.binomtest(k, n).proportion_ci(level,
    "wilson")`` does (Newcombe 1998's formulas); ``n`` may be an effective (non-integer) size."""
    p = successes / n
    z = z_quantile(level)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(max(0.0, 4 * n * p * (1 - p) + z**2))
    low = 0.0 if successes <= 0 else max(0.0, center - delta)
    high = 1.0 if successes >= n else min(1.0, center + delta)
    return low, high


def clopper_pearson(successes: float, n: float, level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval: scipy's binomtest for whole counts, beta quantiles
    for an effective (non-integer) size (Korn and Graubard's design-effect version)."""
    from scipy.stats import beta, binomtest

    k = round(successes)
    if abs(successes - k) < 1e-9 and abs(n - round(n)) < 1e-9:
        ci = binomtest(int(k), round(n)).proportion_ci(level, method="exact")
        return float(ci.low), float(ci.high)
    tail = (1 - level) / 2
    low = 0.0 if successes <= 0 else float(beta.ppf(tail, successes, n - successes + 1))
    high = 1.0 if successes >= n else float(beta.ppf(1 - tail, successes + 1, n - successes))
    return low, high


def t_quantile(level: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(0.5 + 0.5 * level, df))


@dataclass(frozen=True, slots=True)
class Moments:
    """What the analytic intervals need of a sample: size, mean, central moments, range."""

    n: int
    mean: float
    m2: float
    m3: float
    m4: float
    low: float
    high: float

    @property
    def sd(self) -> float:
        """Sample standard deviation (ddof = 1); 0 for n < 2."""
        return math.sqrt(self.m2 * self.n / (self.n - 1)) if self.n > 1 else 0.0

    @property
    def se(self) -> float | None:
        return self.sd / math.sqrt(self.n) if self.n > 1 else None


def moments(values: Sequence[float], counts: Counter[float] | None = None) -> Moments:
    """Central moments of ``values`` (a list or ``array('d')``), at C speed: distinct values
    are counted first (``counts``, when the caller has them), and when there are few of them
    (the usual case for per-example metrics) the sums run over the distinct values."""
    n = len(values)
    if n == 0:
        raise HopscoreError("no values")
    few = moments_of_distinct(Counter(values) if counts is None else counts, n)
    if few is not None:
        return few
    mean = math.fsum(values) / n
    d = list(map(sub, values, repeat(mean)))
    d2 = list(map(mul, d, d))
    return Moments(n, mean, math.fsum(d2) / n, math.fsum(map(mul, d2, d)) / n,
                   math.fsum(map(mul, d2, d2)) / n, min(values), max(values))


def moments_of_distinct(counts: Counter[float], n: int) -> Moments | None:
    """:func:`moments` of ``n`` values from their counts, or None when there are so many
    distinct values (more than a quarter of them) that summing the values is faster."""
    if n == 0 or len(counts) * 4 > n:
        return None
    items = list(counts.items())
    mean = math.fsum(v * c for v, c in items) / n
    deviations = [(v - mean, c) for v, c in items]
    m2 = math.fsum(d * d * c for d, c in deviations) / n
    m3 = math.fsum(d * d * d * c for d, c in deviations) / n
    m4 = math.fsum(d * d * d * d * c for d, c in deviations) / n
    return Moments(n, mean, m2, m3, m4, min(counts), max(counts))


def moments_of_counts(values: Iterable[tuple[float, float]]) -> Moments:
    """Moments of a weighted sample given as (value, count) pairs."""
    items = [(v, c) for v, c in values if c > 0]
    n = sum(c for _, c in items)
    if n <= 0:
        raise HopscoreError("no values")
    mean = math.fsum(v * c for v, c in items) / n
    dev = [(v - mean, c) for v, c in items]
    return Moments(round(n), mean, math.fsum(d * d * c for d, c in dev) / n,
                   math.fsum(d**3 * c for d, c in dev) / n, math.fsum(d**4 * c for d, c in dev) / n,
                   min(v for v, _ in items), max(v for v, _ in items))


def _cornish_fisher(z: float, skew: float, kurt: float) -> float:
    """Standardized quantile of a distribution with this skewness and excess kurtosis."""
    return (z + skew / 6 * (z * z - 1) + kurt / 24 * (z**3 - 3 * z)
            - skew * skew / 36 * (2 * z**3 - 5 * z))


def bca_mean(m: Moments, level: float) -> tuple[float, float]:
    """BCa interval of the mean on the ideal bootstrap distribution (see the module docstring)."""
    if m.m2 <= 0 or m.n < 2 or m.m2**2 == 0:  # no spread, or one whose square underflows
        return m.mean, m.mean
    scale = math.sqrt(m.m2 / m.n)
    skew = m.m3 / m.m2**1.5 / math.sqrt(m.n)  # skewness of the bootstrap mean
    kurt = (m.m4 / m.m2**2 - 3) / m.n  # its excess kurtosis
    z0 = _NORMAL.inv_cdf(min(1 - 1e-12, max(1e-12, 0.5 + skew / (6 * math.sqrt(2 * math.pi)))))
    accel = skew / 6  # = sum(d^3) / (6 sum(d^2)^1.5), the jackknife acceleration of a mean
    # the expansion is a quantile function only where it increases; beyond that drop the
    # fourth-order terms (heavy skew at small n)
    if not _increasing(skew, kurt):
        kurt = 0.0
        if not _increasing(skew, 0.0):
            skew = 0.0
    bounds = []
    for tail in ((1 - level) / 2, (1 + level) / 2):
        z = _NORMAL.inv_cdf(tail)
        shifted = z0 + (z0 + z) / (1 - accel * (z0 + z))
        if 1 - accel * (z0 + z) <= 0:  # past the acceleration's pole: the extreme quantile
            shifted = math.copysign(8.0, z)
        bounds.append(m.mean + scale * _cornish_fisher(shifted, skew, kurt))
    return max(m.low, min(bounds[0], m.high)), max(m.low, min(bounds[1], m.high))


def _increasing(skew: float, kurt: float, reach: float = 4.0) -> bool:
    steps = 80
    previous = -math.inf
    for i in range(steps + 1):
        value = _cornish_fisher(-reach + 2 * reach * i / steps, skew, kurt)
        if value <= previous:
            return False
        previous = value
    return True


def t_mean(m: Moments, level: float) -> tuple[float, float]:
    if m.n < 2:
        return m.mean, m.mean
    half = t_quantile(level, m.n - 1) * m.sd / math.sqrt(m.n)
    return m.mean - half, m.mean + half


def is_binary(values: Iterable[float]) -> bool:
    """Whether every value is exactly 0 or 1 (Wilson's domain); true of no values."""
    return set(values) <= {0.0, 1.0}


def analytic_interval(method: str, m: Moments, level: float, *, binary: bool) -> Interval:
    """An interval of one mean by a method that needs no resampling (``bootstrap`` does).

    ``method`` is what applies to this metric (see :func:`resolve_method`); a binary metric whose
    interval by the requested method would be a single point (all 0 or all 1) gets Wilson's.
    """
    note = None
    if binary and method not in BINARY_ONLY and m.m2 <= 0:
        note = f"wilson: {method} is a single point when every value is {m.mean:g}"
        method = "wilson"
    if method == "wilson":
        low, high = wilson(m.mean * m.n, m.n, level)
    elif method == "clopper-pearson":
        low, high = clopper_pearson(m.mean * m.n, m.n, level)
    elif method == "bca":
        low, high = bca_mean(m, level)
    elif method == "t":
        low, high = t_mean(m, level)
    else:
        raise ValueError(f"{method} needs resampling")
    return Interval(low, high, level, method, m.se, m.n, note=note)


def resolve_method(requested: str, *, binary: bool, derived: bool = False
                   ) -> tuple[str, str | None]:
    """The method used for one metric, and a note when it is not the requested one."""
    if requested == "auto":
        return ("wilson" if binary and not derived else "bca"), None
    if requested in BINARY_ONLY and (derived or not binary):
        return "bca", f"bca: {requested} applies to binary (0/1) metrics only"
    return requested, None


def intervals_to_json(ci: Mapping[str, Interval | None]) -> dict[str, Any]:
    """The ``ci`` block of ``metrics.json``: each metric's interval as JSON (null: none)."""
    return {name: None if iv is None else iv.to_json() for name, iv in ci.items()}
