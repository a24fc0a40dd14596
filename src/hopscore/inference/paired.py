"""Paired comparison of two systems on the same examples: one test and one interval per row.

Tests (``name`` as compare --output records it):

* ``mcnemar-exact``: McNemar's exact test for binary metrics, the two-sided binomial test of
  the discordant pairs against 1/2 (``scipy.stats.binomtest``); ``mcnemar-mid-p`` its mid-p
  version (``--mid-p``): the exact p minus the probability of the observed table;
* ``permutation``: the paired sign-flip permutation test of the mean difference for other
  metrics, exact when at most 16 examples differ (all 2^k sign patterns), else ``permutations``
  seeded Monte Carlo draws with p = (1 + #{|T*| >= |T|}) / (1 + draws), never 0;
* ``cluster-permutation``: the same flipping the signs of whole clusters' total differences
  (``--cluster``), for binary and other metrics;
* ``paired-bootstrap``: for metrics derived from means (made in :mod:`hopscore.analysis.compare`).

Intervals of the difference B - A (``--ci``): ``exact-conditional`` (binary, the default, and
``--ci clopper-pearson``: the Clopper-Pearson interval of the share of discordant pairs that
favour B, scaled by the discordance; it excludes 0 exactly when McNemar's exact test rejects at
the same level, so the row's interval and test never disagree), ``newcombe`` (binary, ``--ci
wilson``: Newcombe's 1998 method 10, Wilson-based with the phi correlation of the pair), and
for any metric ``bca`` (the default for continuous ones: BCa of the mean difference from its
cumulants), ``bootstrap`` and ``t``. With at most ``FLIP_INTERVAL_LIMIT`` (12) non-zero
differences a bootstrap is degenerate, and ``bca`` and ``bootstrap`` give way to ``sign-flip``,
the interval that inverts the exact sign-flip test (so it excludes 0 exactly when that test
rejects at the same level).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hopscore.inference.ci import (
    Interval,
    bca_mean,
    clopper_pearson,
    moments,
    t_mean,
    t_quantile,
    wilson,
    z_quantile,
)
from hopscore.inference.flip_interval import FLIP_INTERVAL_LIMIT, flip_interval

#: at most this many nonzero differences (or clusters) are permuted exactly
EXACT_LIMIT = 16
DEFAULT_PERMUTATIONS = 10_000


@dataclass(frozen=True, slots=True)
class Flips:
    """The paired 2x2 table of a binary metric (A = baseline, B = candidate)."""

    both_right: int
    both_wrong: int
    right_to_wrong: int  # right in A, wrong in B
    wrong_to_right: int  # wrong in A, right in B

    @property
    def n(self) -> int:
        return self.both_right + self.both_wrong + self.right_to_wrong + self.wrong_to_right

    @property
    def discordant(self) -> int:
        return self.right_to_wrong + self.wrong_to_right

    def to_json(self) -> dict[str, int]:
        return {"both_right": self.both_right, "both_wrong": self.both_wrong,
                "right_to_wrong": self.right_to_wrong, "wrong_to_right": self.wrong_to_right}


def flips_of(a: Sequence[float], b: Sequence[float]) -> Flips:
    both_right = both_wrong = rw = wr = 0
    for x, y in zip(a, b, strict=True):
        right_a, right_b = x >= 0.5, y >= 0.5
        if right_a and right_b:
            both_right += 1
        elif right_a:
            rw += 1
        elif right_b:
            wr += 1
        else:
            both_wrong += 1
    return Flips(both_right, both_wrong, rw, wr)


@dataclass(frozen=True, slots=True)
class TestResult:
    """One row's test: its name, p-value, and the adjusted p-value once the family is known."""

    name: str
    p: float
    p_adjusted: float | None = None
    #: Monte Carlo draws (None: exact)
    permutations: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "p": self.p, "p_adjusted": self.p_adjusted}
        if self.permutations is not None:
            out["permutations"] = self.permutations
        return out


def mcnemar(flips: Flips, *, mid_p: bool = False) -> TestResult:
    """McNemar's exact test (two-sided binomial on the discordant pairs); p = 1 without any."""
    from scipy.stats import binom, binomtest

    m = flips.discordant
    if m == 0:
        return TestResult("mcnemar-mid-p" if mid_p else "mcnemar-exact", 1.0)
    k = min(flips.right_to_wrong, flips.wrong_to_right)
    p = float(binomtest(k, m, 0.5).pvalue)
    if mid_p:
        # two-sided mid-p: 2 * (P(X < k) + P(X = k) / 2), X ~ Bin(m, 1/2)
        p = 2 * (float(binom.cdf(k - 1, m, 0.5)) + 0.5 * float(binom.pmf(k, m, 0.5)))
        return TestResult("mcnemar-mid-p", min(1.0, p))
    return TestResult("mcnemar-exact", min(1.0, p))


def sign_flip(differences: Sequence[float], *, permutations: int = DEFAULT_PERMUTATIONS,
              seed: int = 0, name: str = "permutation") -> TestResult:
    """Two-sided paired sign-flip permutation test of the mean difference (see the module doc).

    Equal absolute differences are pooled: a replicate flips, per distinct value, a binomial
    number of its copies, which is exactly the law of flipping each copy on its own.
    """
    nonzero = [d for d in differences if d != 0]
    observed = abs(math.fsum(nonzero))
    if not nonzero:
        return TestResult(name, 1.0)
    tolerance = 1e-9 * max(1.0, observed)
    import numpy as np

    if len(nonzero) <= EXACT_LIMIT:
        k = len(nonzero)
        patterns = np.arange(2**k, dtype=np.int64)[:, None] >> np.arange(k, dtype=np.int64)
        signs = 1.0 - 2.0 * (patterns & 1)
        sums = np.abs(signs @ np.asarray(nonzero, dtype=np.float64))
        return TestResult(name, float(np.count_nonzero(sums >= observed - tolerance)) / 2**k)
    atoms = Counter(abs(d) for d in nonzero)
    values = np.array(list(atoms), dtype=np.float64)
    counts = np.array(list(atoms.values()), dtype=np.int64)
    rng = np.random.default_rng(seed)
    hits = 0
    block = max(1, (1 << 22) // max(1, values.size))
    for start in range(0, permutations, block):
        size = min(block, permutations - start)
        positive = rng.binomial(counts[None, :], 0.5, size=(size, values.size))
        sums = (2 * positive - counts[None, :]) @ values
        hits += int(np.count_nonzero(np.abs(sums) >= observed - tolerance))
    return TestResult(name, (1 + hits) / (1 + permutations), permutations=permutations)


def newcombe(flips: Flips, level: float) -> tuple[float, float]:
    """Newcombe's (1998) method 10 interval of p_B - p_A for paired proportions."""
    n = flips.n
    r, s, t, u = flips.both_right, flips.wrong_to_right, flips.right_to_wrong, flips.both_wrong
    p1, p2 = (r + s) / n, (r + t) / n  # B's and A's accuracy
    l1, u1 = wilson(r + s, n, level)
    l2, u2 = wilson(r + t, n, level)
    phi = 0.0
    margins = (r + s) * (t + u) * (r + t) * (s + u)
    if margins > 0:
        cross = r * u - s * t
        corrected = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0.0)
        phi = corrected / math.sqrt(margins)
    delta = p1 - p2
    low = delta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)
                                + (u2 - p2) ** 2))
    high = delta + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)
                                 + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high)


def exact_conditional(flips: Flips, level: float) -> tuple[float, float]:
    """Clopper-Pearson on the share of discordant pairs won by B, as a difference: given m
    discordant pairs, B - A = (m / n) (2 pi - 1)."""
    m, n = flips.discordant, flips.n
    if m == 0:
        return 0.0, 0.0
    low, high = clopper_pearson(flips.wrong_to_right, m, level)
    return m / n * (2 * low - 1), m / n * (2 * high - 1)


def difference_interval(differences: Sequence[float], method: str, level: float, *,
                        flips: Flips | None = None, resamples: int = 2000, seed: int = 0,
                        bounds: tuple[float, float] | None = None) -> Interval:
    """The interval of mean(B - A) over paired examples by one method (module docstring).

    ``flips`` is the 2x2 table when the metric is binary; a method that would give a single
    point there (no discordant pair) gives way to Newcombe's interval. ``bounds`` is the range
    the mean difference can take; with it, a bootstrap method (``bca``, ``bootstrap``) on at most
    :data:`FLIP_INTERVAL_LIMIT` non-zero differences gives way to the interval that inverts the
    exact sign-flip test (:mod:`hopscore.inference.flip_interval`).
    """
    n = len(differences)
    m = moments(differences)
    note = None
    if flips is not None and m.m2 <= 0 and method != "newcombe":
        note = f"newcombe: {method} is a single point without discordant pairs"
        method = "newcombe"
    if method == "newcombe":
        assert flips is not None
        low, high = newcombe(flips, level)
    elif method == "exact-conditional":
        assert flips is not None
        low, high = exact_conditional(flips, level)
    elif method in ("bca", "bootstrap") and flips is None and bounds is not None and 0 < (
            nonzero := sum(1 for d in differences if d != 0)) <= FLIP_INTERVAL_LIMIT:
        low, high = flip_interval(differences, level, bounds)
        note = (f"sign-flip: {method} is degenerate with {nonzero} non-zero "
                f"difference{'s' if nonzero > 1 else ''}; this interval inverts the exact "
                "sign-flip test")
        return Interval(low, high, level, "sign-flip", m.se, n, note=note)
    elif method == "bca":
        low, high = bca_mean(m, level)
    elif method == "t":
        low, high = t_mean(m, level)
    elif method == "bootstrap":
        import numpy as np

        from hopscore.inference.resample import bootstrap_means, percentile_bounds

        replicates = bootstrap_means(np.asarray(differences, dtype=np.float64)[:, None],
                                     resamples=resamples, rng=np.random.default_rng(seed))
        low, high = percentile_bounds(replicates[:, 0], level)
        return Interval(low, high, level, method, m.se, n, resamples, seed, note=note)
    else:
        raise ValueError(f"unknown interval method {method!r}")
    return Interval(low, high, level, method, m.se, n, note=note)


def delta_method(requested: str, *, binary: bool) -> tuple[str, str | None]:
    """The interval method of one row's difference, and a note when it is not the requested."""
    if requested == "auto":
        return ("exact-conditional" if binary else "bca"), None
    if requested in ("wilson", "clopper-pearson"):
        if not binary:
            return "bca", f"bca: {requested} applies to binary (0/1) metrics only"
        return ("newcombe" if requested == "wilson" else "exact-conditional"), None
    return requested, None


def mde_binary(n: int, discordance: float, *, alpha: float = 0.05, power: float = 0.8
               ) -> float:
    """Smallest |B - A| that McNemar's exact test detects with ``power`` at two-sided ``alpha``,
    for n pairs with this share of discordant pairs (exact power by binomial sums:
    :mod:`hopscore.inference.exact_power`, the discordance at least |delta|); infinite when
    even n one-way flips would not be significant."""
    from hopscore.inference.exact_power import mde_mcnemar

    return mde_mcnemar(n, discordance, alpha=alpha, power=power)


def mde_continuous(se: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest |mean difference| detected with ``power``: (z_{alpha/2} + z_power) * se, where
    se is the standard error of the mean difference (sd / sqrt(n), or cluster-robust)."""
    return (z_quantile(1 - alpha) + z_quantile(2 * power - 1)) * se


def cluster_t_interval(mean: float, se: float, clusters: int, level: float) -> tuple[float, float]:
    half = t_quantile(level, max(1, clusters - 1)) * se
    return mean - half, mean + half
