"""Exact power of McNemar's exact test, and the sample sizes and MDEs it gives.

n pairs each fall discordant with probability psi (the discordance); a discordant pair favours
B with probability pi = (1 + delta / psi) / 2, so that B - A = delta. Given m discordant pairs
the test is the two-sided binomial test of the number favouring B against 1/2 (rejecting when
its exact p is below alpha: at most c_m or at least m - c_m of them); its power is

    sum over m of Binomial(m; n, psi) * P(reject | m, pi),

computed here over every m that carries probability (12 standard deviations about n psi), with
scipy's binomial distribution functions, vectorised. Nothing is approximated but the tails
beyond 12 standard deviations.

The power at a fixed m jumps up and down with m (a saw-tooth, from the discreteness of the test),
and so, much less, does the power in n: averaged over the binomial number of discordant pairs
the teeth nearly vanish (:func:`n_mcnemar` says how the smallest n is defined). A delta larger
than the discordance is impossible, so, as in Connor (1987), the discordance is taken to be at
least |delta| (all discordant pairs then favour B).
"""

from __future__ import annotations

import math

import numpy as np

from hopscore.errors import HopscoreError

#: most pairs a plan may need before it is refused
MAX_N = 100_000_000
#: below this many pairs every n is tried (the power is not monotone in n there)
SCAN_BELOW = 400


def critical_counts(ms: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant pairs m, the largest c with 2 P(Bin(m, 1/2) <= c) < alpha
    (-1 when even c = 0 is not significant): the exact test rejects at most c_m or at least
    m - c_m pairs favouring B."""
    from scipy.special import bdtr, ndtri

    ms = np.asarray(ms, dtype=np.int64)
    start = np.floor(ms / 2 + ndtri(alpha / 2) * np.sqrt(ms) / 2)
    c = np.clip(start, -1, ms).astype(np.int64)

    def significant(k: np.ndarray) -> np.ndarray:
        safe = np.clip(k, 0, ms)
        out: np.ndarray = (k >= 0) & (k <= ms) & (2 * bdtr(safe, ms, 0.5) < alpha)
        return out

    for _ in range(10_000):  # the normal start is within a few counts of the answer
        up = significant(c + 1)
        down = (c >= 0) & ~significant(c)
        if not up.any() and not down.any():
            return np.asarray(c, dtype=np.int64)
        c = c + up - down
    raise AssertionError("critical counts did not settle")  # pragma: no cover


def _window(n: int, psi: float) -> np.ndarray:
    sd = math.sqrt(n * psi * (1 - psi))
    low = max(0, math.floor(n * psi - 12 * sd - 5))
    high = min(n, math.ceil(n * psi + 12 * sd + 5))
    return np.arange(low, high + 1, dtype=np.int64)


def reject_given_discordant(ms: np.ndarray, c: np.ndarray, favour: float) -> np.ndarray:
    """P(reject | m discordant pairs) when each favours B with probability ``favour``."""
    from scipy.special import bdtr, bdtrc

    safe = np.clip(c, 0, None)
    return np.where(c >= 0, bdtr(safe, ms, favour) + bdtrc(ms - safe - 1, ms, favour), 0.0)


class _Fixed:
    """The parts of the power that do not depend on delta (n, the discordance, alpha)."""

    def __init__(self, n: int, psi: float, alpha: float) -> None:
        from scipy.stats import binom

        self.ms = _window(n, psi)
        self.c = critical_counts(self.ms, alpha)
        self.weights = binom.pmf(self.ms, n, psi)

    def power(self, favour: float) -> float:
        reject = reject_given_discordant(self.ms, self.c, favour)
        return float(min(1.0, np.dot(self.weights, reject)))


def _first_small_n(delta: float, discordance: float, alpha: float, power: float) -> int | None:
    """The smallest n below :data:`SCAN_BELOW` whose exact power reaches ``power``, every n
    computed at once (P(reject | m) does not depend on n)."""
    from scipy.stats import binom

    psi = min(1.0, max(discordance, abs(delta)))
    ms = np.arange(SCAN_BELOW, dtype=np.int64)
    reject = reject_given_discordant(ms, critical_counts(ms, alpha), (1 + abs(delta) / psi) / 2)
    ns = np.arange(1, SCAN_BELOW, dtype=np.int64)
    powers = binom.pmf(ms[None, :], ns[:, None], psi) @ reject
    reached = np.flatnonzero(powers >= power)
    return int(ns[reached[0]]) if reached.size else None


def mcnemar_power(n: int, discordance: float, delta: float, alpha: float) -> float:
    """Exact power of McNemar's exact two-sided test at level alpha for n pairs."""
    if n <= 0:
        return 0.0
    psi = min(1.0, max(discordance, abs(delta)))
    if psi <= 0:
        return 0.0
    return _Fixed(n, psi, alpha).power((1 + abs(delta) / psi) / 2)


def min_exact_discordant(alpha: float) -> int:
    """Fewest discordant pairs, all one way, that the exact two-sided test rejects at alpha."""
    k = 1
    while 2 * 0.5**k >= alpha:
        k += 1
    return k


def n_mcnemar(delta: float, discordance: float, *, alpha: float, power: float) -> int:
    """The smallest n at which McNemar's exact test has at least ``power`` (exact, above).

    Below :data:`SCAN_BELOW` pairs every n is tried in turn, so the n is the smallest even where
    the power is not monotone in n; above, n is found by bisection, which gives the smallest n
    as long as the power does not fall from one n to the next near the target: measured, it
    never did (docs/statistics.md).
    """
    small = _first_small_n(delta, discordance, alpha, power)
    if small is not None:
        return small

    def reaches(k: int) -> bool:
        return mcnemar_power(k, discordance, delta, alpha) >= power

    low, high = SCAN_BELOW - 1, SCAN_BELOW
    while not reaches(high):
        low, high = high, 2 * high
        if high > MAX_N:
            raise HopscoreError(f"a difference of {delta:g} needs more than {MAX_N:,} pairs")
    while high - low > 1:
        mid = (low + high) // 2
        if reaches(mid):
            high = mid
        else:
            low = mid
    return high


def mde_mcnemar(n: int, discordance: float, *, alpha: float, power: float) -> float:
    """Smallest |delta| at which McNemar's exact test on n pairs with this discordance has at
    least ``power``; infinite when even n one-way flips would not be significant.

    The power is continuous and grows with |delta| (up to the discordance the share favouring B
    grows, beyond it the discordance), so Brent's method finds where it crosses the target, and
    the answer is moved up to the first delta (within 1e-10) whose power reaches it."""
    from scipy.optimize import brentq

    if n < min_exact_discordant(alpha):
        return math.inf
    psi = min(1.0, max(discordance, 0.0))
    fixed = _Fixed(n, psi, alpha) if psi > 0 else None

    def excess(delta: float) -> float:
        if fixed is not None and delta <= psi:
            return fixed.power((1 + delta / psi) / 2) - power
        return mcnemar_power(n, delta, delta, alpha) - power

    if excess(1.0) < 0:  # pragma: no cover - n one-way flips are significant here
        return math.inf
    # the root lies below the discordance when the power there already reaches the target
    low, high = (0.0, psi) if psi > 0 and excess(psi) >= 0 else (psi, 1.0)
    delta = float(brentq(excess, low, high, xtol=1e-12))
    while excess(delta) < 0:
        delta += 1e-10
    return delta
