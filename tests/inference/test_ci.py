"""Interval methods against scipy and statsmodels on fixed inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from hopscore.inference.ci import (
    Moments,
    bca_mean,
    clopper_pearson,
    moments,
    moments_of_counts,
    t_mean,
    wilson,
)
from hopscore.inference.clusters import totals_by_cluster
from hopscore.inference.intervals import set_intervals
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import MatrixValues

proportion = pytest.importorskip("statsmodels.stats.proportion")

CASES = [(0, 1), (1, 1), (0, 20), (1, 20), (20, 20), (19, 20), (7, 20), (6, 120), (60, 120),
         (114, 120), (0, 500), (25, 500), (250, 500), (499, 500), (3, 7405), (3068, 7405)]


@pytest.mark.parametrize("k,n", CASES)
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99])
def test_wilson_equals_scipy_and_statsmodels(k, n, level):
    expected = sps.binomtest(k, n).proportion_ci(level, method="wilson")
    low, high = wilson(k, n, level)
    assert (low, high) == pytest.approx((expected.low, expected.high), abs=1e-12)
    sm = proportion.proportion_confint(k, n, alpha=1 - level, method="wilson")
    assert (low, high) == pytest.approx(sm, abs=1e-12)
    assert n == 0 or high > low  # never a point


@pytest.mark.parametrize("k,n", CASES)
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_clopper_pearson_equals_statsmodels_beta(k, n, level):
    sm = proportion.proportion_confint(k, n, alpha=1 - level, method="beta")
    assert clopper_pearson(k, n, level) == pytest.approx(sm, abs=1e-10)


def test_clopper_pearson_with_an_effective_size_uses_beta_quantiles():
    low, high = clopper_pearson(12.5, 50.0, 0.95)
    assert low == pytest.approx(sps.beta.ppf(0.025, 12.5, 38.5))
    assert high == pytest.approx(sps.beta.ppf(0.975, 13.5, 37.5))


SAMPLES = {
    "f1-like": lambda rng, n: np.where(rng.random(n) < 0.3, 1.0,
                                       np.where(rng.random(n) < 0.5, rng.beta(2, 2, n), 0.0)),
    "skewed": lambda rng, n: rng.exponential(0.2, n),
    "uniform": lambda rng, n: rng.random(n),
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
@pytest.mark.parametrize("n", [40, 150, 600])
def test_bca_matches_scipy_bootstrap_bca_within_its_monte_carlo_error(kind, n):
    rng = np.random.default_rng(n)
    x = SAMPLES[kind](rng, n)
    expected = sps.bootstrap((x,), np.mean, method="BCa", n_resamples=40_000,
                             random_state=np.random.default_rng(1)).confidence_interval
    low, high = bca_mean(moments(x.tolist()), 0.95)
    width = expected.high - expected.low
    assert low == pytest.approx(expected.low, abs=0.04 * width)
    assert high == pytest.approx(expected.high, abs=0.04 * width)


def test_bca_acceleration_is_the_jackknife_of_the_mean():
    x = np.random.default_rng(3).exponential(1.0, 60)
    jack = np.array([np.delete(x, i).mean() for i in range(x.size)])
    d = jack.mean() - jack
    accel = np.sum(d**3) / (6 * np.sum(d**2) ** 1.5)
    m = moments(x.tolist())
    assert m.m3 / m.m2**1.5 / math.sqrt(m.n) / 6 == pytest.approx(accel, rel=1e-9)


def test_moments_by_distinct_values_equal_the_direct_ones():
    rng = np.random.default_rng(0)
    few = rng.choice([0.0, 0.25, 0.5, 1.0], 1000).tolist()  # the distinct-value path
    many = rng.random(1000).tolist()  # the direct path
    for values in (few, many):
        m = moments(values)
        x = np.array(values)
        d = x - x.mean()
        assert (m.mean, m.m2, m.m3, m.m4) == pytest.approx(
            (x.mean(), np.mean(d**2), np.mean(d**3), np.mean(d**4)), rel=1e-9, abs=1e-15)
        assert m.se == pytest.approx(x.std(ddof=1) / math.sqrt(x.size))
    assert moments_of_counts([(0.0, 3), (1.0, 1)]) == Moments(4, 0.25, 0.1875, 0.09375,
                                                             0.08203125, 0.0, 1.0)


def test_t_interval_equals_scipy_and_statsmodels():
    x = np.random.default_rng(5).random(33)
    expected = sps.t.interval(0.9, x.size - 1, loc=x.mean(), scale=sps.sem(x))
    assert t_mean(moments(x.tolist()), 0.9) == pytest.approx(expected, abs=1e-12)
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    assert t_mean(moments(x.tolist()), 0.9) == pytest.approx(
        weightstats.DescrStatsW(x).tconfint_mean(alpha=0.1), abs=1e-12)


def test_cluster_robust_standard_error_equals_statsmodels_ols_cluster():
    api = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(2)
    groups = rng.integers(0, 25, 300)
    effect = rng.normal(0, 0.3, 25)[groups]
    y = (rng.random(300) < 0.5 + effect.clip(-0.4, 0.4)).astype(float)
    fit = api.OLS(y, np.ones(300)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    stats = totals_by_cluster(y.tolist(), groups.tolist())
    assert math.sqrt(stats.robust_variance()) == pytest.approx(fit.bse[0], rel=1e-9)
    # the clustered t interval is mean +- t(G-1) * that error
    spec = IntervalSpec(method="t")
    interval = set_intervals(MatrixValues(y[:, None], ["em"], groups.tolist()), spec)["em"]
    half = sps.t.ppf(0.975, 24) * fit.bse[0]
    assert (interval.low, interval.high) == pytest.approx((y.mean() - half, y.mean() + half))
    assert interval.details["clusters"] == 25


def test_clustered_wilson_uses_the_effective_size_and_widens():
    rng = np.random.default_rng(9)
    groups = np.repeat(np.arange(30), 10)
    y = (rng.random(30) < 0.6).repeat(10).astype(float)  # every cluster all right or all wrong
    values = MatrixValues(y[:, None], ["em"], groups.tolist())
    clustered = set_intervals(values, IntervalSpec())["em"]
    plain = set_intervals(MatrixValues(y[:, None], ["em"]), IntervalSpec())["em"]
    assert clustered.method == "wilson"
    assert clustered.details["effective_n"] == pytest.approx(30.0)  # the cluster count
    assert (clustered.low, clustered.high) == pytest.approx(wilson(y.mean() * 30, 30, 0.95))
    assert clustered.high - clustered.low > 2.5 * (plain.high - plain.low)


def test_clustered_bootstrap_resamples_whole_clusters():
    rng = np.random.default_rng(4)
    groups = np.repeat(np.arange(40), 5)
    y = np.clip(rng.normal(0.5, 0.2, 40).repeat(5) + rng.normal(0, 0.05, 200), 0, 1)
    clustered = set_intervals(MatrixValues(y[:, None], ["f1"], groups.tolist()),
                              IntervalSpec(resamples=3000))["f1"]
    plain = set_intervals(MatrixValues(y[:, None], ["f1"]), IntervalSpec())["f1"]
    assert clustered.method == "bca" and clustered.resamples == 3000
    assert clustered.low < y.mean() < clustered.high
    # about sqrt(design effect) wider: clusters of 5 nearly identical values
    ratio = (clustered.high - clustered.low) / (plain.high - plain.low)
    assert 1.6 < ratio < 2.6, ratio
