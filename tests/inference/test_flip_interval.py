"""The interval that inverts the exact sign-flip test, used where a bootstrap is degenerate (few
non-zero paired differences), against scipy's exact permutation test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from hopscore.analysis.compare import compare_pair
from hopscore.inference.flip_interval import FLIP_INTERVAL_LIMIT, shifted_p
from hopscore.inference.paired import difference_interval
from tests.analysis.test_compare_stats import scored

CASES = [[0.0] * 13 + [0.9, 1.0], [0.0] * 10 + [0.5, -0.2, 0.3],
         [0.1, 0.4, -0.3, 0.2, 0.6, 0.5, 0.7], [0.0] * 7 + [1.0, 0.8, 0.6, 0.9, 0.4]]


def scipy_p(differences, theta: float) -> float:
    """scipy's exact two-sided sign-flip test of the differences minus theta."""
    x = np.asarray(differences, dtype=np.float64) - theta
    return float(sps.permutation_test((x,), lambda v, axis: np.mean(v, axis=axis),
                                      permutation_type="samples", n_resamples=np.inf,
                                      alternative="two-sided").pvalue)


@pytest.mark.parametrize("differences", CASES)
def test_shifted_p_equals_scipy_exact_permutation_test(differences):
    for theta in (0.0, 0.05, -0.1, 0.13, 0.3, -0.5):
        assert shifted_p(differences, theta) == pytest.approx(scipy_p(differences, theta),
                                                              abs=1e-12)


@pytest.mark.parametrize("differences", CASES)
def test_interval_is_the_set_the_exact_test_keeps(differences):
    interval = difference_interval(differences, "bca", 0.95, bounds=(-1.0, 1.0))
    assert interval.method == "sign-flip" and "degenerate" in interval.note
    p0 = scipy_p(differences, 0.0)
    assert (interval.low <= 0 <= interval.high) == (p0 >= 0.05)
    for edge, outside in ((interval.low, -1e-6), (interval.high, 1e-6)):
        if abs(edge) < 1:
            assert scipy_p(differences, edge - outside) >= 0.05
            assert scipy_p(differences, edge + outside) < 0.05


def test_the_issue_case_no_longer_excludes_zero_and_compare_says_why():
    """13 zeros and two positive F1 differences: the exact test's p is 0.5, whatever they are;
    the analytic BCa interval excluded 0."""
    a = np.zeros((15, 1))
    b = np.array([[0.0]] * 13 + [[0.9], [1.0]])
    row = compare_pair(scored("a", a + 0.05), scored("b", b + 0.05)).row("em")
    assert row.test.p == pytest.approx(scipy_p(b[:, 0] - a[:, 0], 0.0)) == pytest.approx(0.5)
    assert row.interval.low <= 0 <= row.interval.high
    assert row.interval.method == "sign-flip" and "2 non-zero differences" in row.interval.note


def test_interval_and_test_agree_on_random_rows_with_few_non_zero_differences():
    rng = np.random.default_rng(5)
    disagree = 0
    for _ in range(40):
        k = int(rng.integers(2, 9))
        d = np.zeros(int(rng.integers(k, 13)))
        d[:k] = np.round(rng.normal(0.3, 0.3, k), 2)
        interval = difference_interval(d.tolist(), "bca", 0.95, bounds=(-1.0, 1.0))
        excludes = not interval.low <= 0 <= interval.high
        disagree += excludes != (scipy_p(d, 0.0) < 0.05)
    assert disagree == 0


def test_many_non_zero_differences_keep_bca():
    d = np.random.default_rng(1).normal(0.1, 0.2, FLIP_INTERVAL_LIMIT + 1).tolist()
    assert difference_interval(d, "bca", 0.95, bounds=(-1.0, 1.0)).method == "bca"
