"""Sample sizes and minimum detectable effects for planning an evaluation (``hopscore plan``).

Paired binary comparisons (two systems on the same questions, McNemar's test) depend on the
share of questions the systems disagree on, the *discordance* psi: the n needed to detect a
difference delta at two-sided level alpha with the given power is the smallest n at which
McNemar's exact test has that power, by exact binomial sums (:mod:`hopscore.inference.
exact_power`; Connor's (1987) normal formula falls a little short of it). Without a measured
discordance, the systems' errors are taken as independent: ``psi = p (1 - q) + q (1 - p)`` for
accuracies p and q = p + delta, an upper bound for systems that fail on the same hard questions.
Unpaired comparisons (different questions per system) use the two-proportion z-test's
``(z_{alpha/2} sqrt(2 pbar qbar) + z_power sqrt(p1 q1 + p2 q2))^2 / delta^2`` per system.
A continuous metric with standard deviation of the per-question differences sd needs
``((z_{alpha/2} + z_power) sd / delta)^2``. With several comparisons the level is alpha divided
by their number (Bonferroni: the planning bound of Holm's correction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hopscore.errors import HopscoreError
from hopscore.inference.ci import z_quantile
from hopscore.inference.exact_power import mcnemar_power, n_mcnemar


def _z(alpha: float, power: float) -> tuple[float, float]:
    return z_quantile(1 - alpha), z_quantile(2 * power - 1)


def independent_discordance(p: float, q: float) -> float:
    return p * (1 - q) + q * (1 - p)


def n_paired_binary(delta: float, discordance: float, *, alpha: float, power: float) -> int:
    return n_mcnemar(delta, discordance, alpha=alpha, power=power)


def n_unpaired_binary(p: float, delta: float, *, alpha: float, power: float) -> int:
    za, zb = _z(alpha, power)
    q = p + delta
    mean = (p + q) / 2
    return math.ceil((za * math.sqrt(2 * mean * (1 - mean))
                      + zb * math.sqrt(p * (1 - p) + q * (1 - q))) ** 2 / delta**2)


def n_continuous(delta: float, sd: float, *, alpha: float, power: float) -> int:
    za, zb = _z(alpha, power)
    return math.ceil(((za + zb) * sd / delta) ** 2)


def mde_unpaired_binary(n: int, p: float, *, alpha: float, power: float) -> float:
    """Smallest delta (above p) that two independent samples of n detect."""
    low, high = 0.0, 1.0 - p
    if high <= 0 or n_unpaired_binary(p, high, alpha=alpha, power=power) > n:
        return math.nan
    for _ in range(60):
        mid = (low + high) / 2
        if mid > 0 and n_unpaired_binary(p, mid, alpha=alpha, power=power) <= n:
            high = mid
        else:
            low = mid
    return high


def mde_paired_independent(n: int, p: float, *, alpha: float, power: float) -> float:
    """MDE of a paired comparison whose discordance is that of independent errors (it grows
    with delta, so the two are solved together), by the exact power of McNemar's test."""
    low, high = 0.0, 1.0 - p
    for _ in range(50):
        mid = (low + high) / 2
        psi = independent_discordance(p, p + mid)
        if mid > 0 and mcnemar_power(n, psi, mid, alpha) >= power:
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True, slots=True)
class PlanRow:
    delta: float
    paired: int | None
    unpaired: int | None
    continuous: int | None
    discordance: float | None


def plan_rows(baseline: float, deltas: list[float], *, discordance: float | None,
              sd: float | None, alpha: float, power: float) -> list[PlanRow]:
    if not 0 < baseline < 1:
        raise HopscoreError("--baseline-acc must be between 0 and 1 (e.g. 0.62)")
    rows = []
    for delta in deltas:
        if not 0 < delta < 1 or baseline + delta > 1:
            raise HopscoreError(f"--delta {delta:g}: must be > 0 with baseline + delta <= 1")
        psi = discordance if discordance is not None else independent_discordance(
            baseline, baseline + delta)
        rows.append(PlanRow(
            delta, n_paired_binary(delta, psi, alpha=alpha, power=power),
            n_unpaired_binary(baseline, delta, alpha=alpha, power=power),
            None if sd is None else n_continuous(delta, sd, alpha=alpha, power=power), psi))
    return rows
