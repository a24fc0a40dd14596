"""Paired tests, intervals of differences, multiplicity and power against scipy/statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from hopscore.inference.multiplicity import adjust
from hopscore.inference.paired import (
    Flips,
    difference_interval,
    exact_conditional,
    mcnemar,
    mde_binary,
    mde_continuous,
    newcombe,
    sign_flip,
)

contingency = pytest.importorskip("statsmodels.stats.contingency_tables")
multitest = pytest.importorskip("statsmodels.stats.multitest")

TABLES = [(3, 2, 0, 0), (3, 2, 0, 1), (10, 5, 5, 5), (0, 0, 3, 11), (50, 40, 40, 25),
          (1, 1, 0, 30), (200, 300, 120, 97), (5000, 2000, 1000, 1100), (12, 3, 0, 5),
          (7, 8, 1, 7)]


@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_exact_equals_statsmodels(table):
    both_right, both_wrong, rw, wr = table
    flips = Flips(both_right, both_wrong, rw, wr)
    expected = contingency.mcnemar([[both_right, rw], [wr, both_wrong]], exact=True).pvalue
    assert mcnemar(flips).p == pytest.approx(expected, rel=1e-12)
    assert mcnemar(flips).name == "mcnemar-exact"


@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_mid_p_is_the_exact_p_minus_the_observed_point(table):
    flips = Flips(*table)
    m, k = flips.discordant, min(flips.right_to_wrong, flips.wrong_to_right)
    mid = mcnemar(flips, mid_p=True)
    if m == 0:
        assert mid.p == 1.0
        return
    expected = min(1.0, 2 * sps.binom.cdf(k, m, 0.5) - sps.binom.pmf(k, m, 0.5))
    assert mid.p == pytest.approx(expected, rel=1e-12) and mid.name == "mcnemar-mid-p"
    assert mid.p <= mcnemar(flips).p


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_sign_flip_equals_scipy_permutation_test(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(12), rng.random(12) + 0.1
    expected = sps.permutation_test((b, a), lambda x, y: np.mean(x - y), vectorized=False,
                                    permutation_type="samples", n_resamples=np.inf).pvalue
    assert sign_flip((b - a).tolist()).p == pytest.approx(expected, rel=1e-9)


def test_monte_carlo_sign_flip_agrees_with_scipy_and_is_never_zero():
    rng = np.random.default_rng(5)
    a = rng.random(300)
    b = np.clip(a + rng.normal(0.02, 0.2, 300), 0, 1)
    result = sign_flip((b - a).tolist(), permutations=20_000, seed=3)
    expected = sps.permutation_test((b, a), lambda x, y, axis: np.mean(x - y, axis=axis),
                                    vectorized=True, permutation_type="samples",
                                    n_resamples=20_000, random_state=1).pvalue
    assert result.p == pytest.approx(expected, abs=0.02) and result.permutations == 20_000
    far = sign_flip([1.0] * 200)
    assert 0 < far.p <= 1 / 10_001


def test_sign_flip_of_binary_differences_is_mcnemar():
    d = [1.0] * 9 + [-1.0] * 3 + [0.0] * 20
    assert sign_flip(d).p == pytest.approx(mcnemar(Flips(10, 10, 3, 9)).p, rel=1e-12)


def newcombe_by_hand(table, level):
    from statsmodels.stats.proportion import proportion_confint

    r, u, t, s = table  # both right, both wrong, right->wrong (t), wrong->right (s)
    n = r + s + t + u
    p1, p2 = (r + s) / n, (r + t) / n
    l1, u1 = proportion_confint(r + s, n, 1 - level, "wilson")
    l2, u2 = proportion_confint(r + t, n, 1 - level, "wilson")
    cross = r * u - s * t
    c = cross - n / 2 if cross > n / 2 else (cross if cross < 0 else 0)
    margins = (r + s) * (t + u) * (r + t) * (s + u)
    phi = c / math.sqrt(margins) if margins else 0
    low = p1 - p2 - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = p1 - p2 + math.sqrt((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2)
    return low, high


@pytest.mark.parametrize("table", [t for t in TABLES if sum(t) > 5])
def test_newcombe_method_10_with_statsmodels_wilson_intervals(table):
    assert newcombe(Flips(*table), 0.95) == pytest.approx(newcombe_by_hand(table, 0.95),
                                                          abs=1e-12)


@pytest.mark.parametrize("table", TABLES)
def test_exact_conditional_interval_agrees_with_the_exact_test(table):
    flips = Flips(*table)
    low, high = exact_conditional(flips, 0.95)
    rejects = mcnemar(flips).p < 0.05
    assert rejects == (low > 0 or high < 0)


def test_a_binary_difference_without_discordant_pairs_is_not_a_point():
    flips = Flips(10, 10, 0, 0)
    for method in ("exact-conditional", "bca", "t", "bootstrap"):
        interval = difference_interval([0.0] * 20, method, 0.95, flips=flips, resamples=200)
        assert interval.method == "newcombe" and interval.low < 0 < interval.high


def test_continuous_difference_intervals_against_scipy():
    rng = np.random.default_rng(8)
    d = rng.normal(0.03, 0.2, 80)
    t = difference_interval(d.tolist(), "t", 0.9)
    assert (t.low, t.high) == pytest.approx(sps.t.interval(0.9, 79, d.mean(), sps.sem(d)))
    bca = difference_interval(d.tolist(), "bca", 0.95)
    expected = sps.bootstrap((d,), np.mean, method="BCa", n_resamples=40_000,
                             random_state=np.random.default_rng(0)).confidence_interval
    width = expected.high - expected.low
    assert bca.low == pytest.approx(expected.low, abs=0.04 * width)
    assert bca.high == pytest.approx(expected.high, abs=0.04 * width)


@pytest.mark.parametrize("method,name", [("holm", "holm"), ("bh", "fdr_bh"), ("none", None)])
def test_adjusted_p_values_equal_statsmodels(method, name):
    p = np.random.default_rng(1).random(37) ** 3
    p[5] = p[9]  # a tie
    expected = p if name is None else multitest.multipletests(p, method=name)[1]
    assert adjust(p.tolist(), method) == pytest.approx(expected.tolist(), abs=1e-12)


def exact_mcnemar_power(n: int, discordance: float, delta: float, alpha: float) -> float:
    """Power of the exact two-sided McNemar test at n pairs, by summing binomials (the
    discordance at least |delta|: all discordant pairs favour B beyond it)."""
    power = 0.0
    discordance = max(discordance, abs(delta))
    favour = (1 + abs(delta) / discordance) / 2
    for m in range(1, n + 1):
        pm = sps.binom.pmf(m, n, discordance)
        if pm < 1e-30:
            continue
        ks = np.arange(m + 1)
        p = np.minimum(1, 2 * sps.binom.cdf(np.minimum(ks, m - ks), m, 0.5))
        power += pm * float(np.sum(sps.binom.pmf(ks, m, favour)[p < alpha]))
    return power


@pytest.mark.parametrize("n,discordance,alpha", [(400, 0.2, 0.05), (1000, 0.1, 0.05),
                                                  (3466, 0.15, 0.05), (60, 0.05, 0.01),
                                                  (250, 0.4, 0.05 / 6)])
def test_binary_mde_is_the_smallest_difference_the_exact_test_detects(n, discordance, alpha):
    mde = mde_binary(n, discordance, alpha=alpha, power=0.8)
    assert exact_mcnemar_power(n, discordance, mde, alpha) >= 0.8 - 1e-9
    assert exact_mcnemar_power(n, discordance, mde * (1 - 1e-4), alpha) < 0.8


def test_binary_mde_without_discordance_is_still_finite():
    assert mde_binary(50, 0.0) >= 6 / 50  # six one-way flips are the fewest p < 0.05 allows
    assert mde_binary(20, 0.0) <= 1.0


def test_continuous_mde_equals_statsmodels_normal_power():
    power_module = pytest.importorskip("statsmodels.stats.power")
    sd, n = 0.25, 500
    mde = mde_continuous(sd / math.sqrt(n), alpha=0.05, power=0.8)
    effect = power_module.NormalIndPower().solve_power(nobs1=n, alpha=0.05, power=0.8, ratio=0)
    assert mde == pytest.approx(effect * sd, rel=1e-5)  # statsmodels solves numerically
