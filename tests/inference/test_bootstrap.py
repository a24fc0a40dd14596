"""The bootstrap of means (seeded, pooled or by indices) and the intervals of single scores."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from hopscore.inference import resample
from hopscore.inference.intervals import set_intervals
from hopscore.inference.resample import bootstrap_means
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import MatrixValues


def mean_intervals(values, names, *, reported=None, finalize=None, resamples=2000, seed=0,
                   method="auto"):
    spec = IntervalSpec(method=method, resamples=resamples, seed=seed)
    return set_intervals(MatrixValues(np.asarray(values, dtype=float), names), spec,
                         reported=reported, finalize=finalize)


def test_bootstrap_is_seeded_and_shaped():
    rng = np.random.default_rng(5)
    values = rng.random((300, 3))
    one = bootstrap_means(values, resamples=500, rng=np.random.default_rng(1))
    two = bootstrap_means(values, resamples=500, rng=np.random.default_rng(1))
    other = bootstrap_means(values, resamples=500, rng=np.random.default_rng(2))
    assert one.shape == (500, 3)
    assert np.array_equal(one, two)
    assert not np.array_equal(one, other)


def test_identical_columns_get_identical_intervals():
    values = (np.random.default_rng(0).random((200, 1)) < 0.3).astype(float)
    result = mean_intervals(np.hstack([values, values, 1 - values]), ["a", "b", "c"], resamples=800)
    assert result["a"] == result["b"]
    assert result["a"].half_width == pytest.approx(result["c"].half_width, abs=1 / 200)


def test_pooled_and_index_paths_agree_in_distribution():
    # Binary data goes through the 2-atom multinomial; the index path must give the same law.
    values = (np.random.default_rng(3).random((400, 1)) < 0.35).astype(float)
    pooled = resample._multinomial_means(
        np.array([[0.0], [1.0]]),
        np.array([1 - values.mean(), values.mean()]),
        400, 4000, np.random.default_rng(0),
    )[:, 0]  # fmt: skip
    drawn = resample._index_means(values, 4000, np.random.default_rng(1))[:, 0]
    assert pooled.mean() == pytest.approx(drawn.mean(), abs=0.003)
    assert pooled.std() == pytest.approx(drawn.std(), rel=0.06)
    expected_sd = math.sqrt(values.mean() * (1 - values.mean()) / 400)
    assert drawn.std() == pytest.approx(expected_sd, rel=0.06)


def coverage(draw, true_mean: float, trials: int, n: int) -> float:
    rng = np.random.default_rng(2024)
    hits = 0
    for trial in range(trials):
        sample = draw(rng, n)
        interval = mean_intervals(sample[:, None], ["m"], resamples=1000, seed=trial,
                                  method="bootstrap")["m"]
        hits += interval.low <= true_mean <= interval.high
    return hits / trials


def test_bootstrap_covers_a_bernoulli_mean_at_the_nominal_rate():
    rate = coverage(lambda rng, n: (rng.random(n) < 0.3).astype(float), 0.3, 400, 120)
    assert 0.91 <= rate <= 0.98, rate


def test_bootstrap_covers_a_skewed_continuous_mean_at_the_nominal_rate():
    # exponential(1) scaled into [0, 1]-ish values, all distinct: exercises the index path
    rate = coverage(lambda rng, n: rng.exponential(0.2, n), 0.2, 300, 150)
    assert 0.90 <= rate <= 0.98, rate


def test_a_constant_metric_is_a_point_unless_it_is_all_zero_or_all_one():
    interval = mean_intervals(np.full((50, 1), 0.5), ["f1"], resamples=200)["f1"]
    assert (interval.low, interval.high, interval.se) == (0.5, 0.5, 0.0)
    for method in ("auto", "bootstrap", "bca", "t"):
        interval = mean_intervals(np.ones((50, 1)), ["em"], resamples=200, method=method)["em"]
        assert interval.method == "wilson" and interval.high == 1.0
        assert interval.low == pytest.approx(binomtest(50, 50).proportion_ci(
            method="wilson").low, abs=1e-12)


def f1_from_pr(means):
    p, r = means["p"], means["r"]
    return {"p": p, "r": r, "f1": 2 * p * r / (p + r)}


def test_derived_metric_is_recomputed_on_every_replicate():
    rng = np.random.default_rng(4)
    values = np.column_stack([rng.random(200), rng.random(200)])
    means = values.mean(axis=0)
    reported = f1_from_pr({"p": means[0], "r": means[1]})
    result = mean_intervals(values, ["p", "r"], reported=reported, finalize=f1_from_pr,
                            resamples=1000)
    f1 = result["f1"]
    assert f1.details["derived"] is True and f1.method == "bca" and f1.resamples == 1000
    assert f1.low < reported["f1"] < f1.high
    assert result["p"].resamples is None  # a plain mean: BCa from its cumulants
    # the derived interval is about as wide as the delta method predicts
    assert 0.02 < f1.high - f1.low < 0.12


def test_derived_metric_without_a_valid_replicate_gets_no_interval():
    # p and r are both 0 on some replicates, so the F1 divides by zero: no interval, not a guess
    values = np.array([[1.0, 1.0]] + [[0.0, 0.0]] * 5)
    reported = f1_from_pr({"p": 1 / 6, "r": 1 / 6})
    result = mean_intervals(values, ["p", "r"], reported=reported, finalize=f1_from_pr,
                            resamples=500)
    assert result["f1"] is None
    assert result["p"] is not None


def test_derived_metric_without_finalize_is_marked_without_interval():
    values = np.array([[0.5], [0.7]])
    result = mean_intervals(values, ["p"], reported={"p": 0.6, "odd": 3.0}, resamples=50)
    assert result["odd"] is None
    assert result["p"] is not None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1, allow_nan=False), min_size=1, max_size=60),
    st.integers(min_value=0, max_value=2**31),
)
def test_interval_lies_within_the_data_range(data, seed):
    values = np.array(data)[:, None]
    for method in ("auto", "bootstrap", "bca"):
        interval = mean_intervals(values, ["m"], resamples=200, seed=seed, method=method)["m"]
        if set(data) <= {0.0, 1.0}:
            continue  # Wilson: it may reach beyond a sample of all ones
        assert values.min() - 1e-12 <= interval.low <= interval.high <= values.max() + 1e-12


def test_bootstrap_rejects_empty_input():
    from hopscore.errors import HopscoreError

    with pytest.raises(HopscoreError):
        bootstrap_means(np.empty((0, 2)), resamples=10, rng=np.random.default_rng(0))
