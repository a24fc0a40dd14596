"""The two-phase estimate of accuracy (judge verdicts on every row, human labels on a random
slice): exactly unbiased, the labelled accuracy when every row is labelled, inside [0, 1]."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binom, multinomial

from hopscore.inference.two_phase import sample_check, two_phase


@pytest.mark.parametrize(("n", "m", "se", "sp", "acc"), [
    (6, 5, 0.7, 0.99, 0.1), (8, 4, 0.85, 0.7, 0.9), (5, 6, 0.99, 0.99, 0.5),
    (7, 3, 0.6, 0.8, 0.3)])
def test_unbiased_by_exact_enumeration(n: int, m: int, se: float, sp: float,
                                       acc: float) -> None:
    """E[estimate | both verdict classes hold a labelled row] is the accuracy, summed over
    every possible data set: the judge's passes of n evaluated rows, and the 2x2 table of a
    separate labelled slice of m rows."""
    cells = (acc * se, acc * (1 - se), (1 - acc) * (1 - sp), (1 - acc) * sp)  # tp fn fp tn
    q = acc * se + (1 - acc) * (1 - sp)
    total = weight = 0.0
    for x in range(n + 1):
        px = binom.pmf(x, n, q)
        for tp, fn, fp in itertools.product(range(m + 1), repeat=3):
            tn = m - tp - fn - fp
            if tn < 0 or tp + fp == 0 or fn + tn == 0:
                continue
            p = px * multinomial.pmf([tp, fn, fp, tn], m, cells)
            total += p * float(two_phase(x, n, tp, fn, fp, tn)[0])
            weight += p
    assert weight > 0.2
    assert total / weight == pytest.approx(acc, abs=1e-12)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_every_row_labelled_gives_the_labelled_accuracy(tp: int, fn: int, fp: int,
                                                        tn: int) -> None:
    m = tp + fn + fp + tn
    if m == 0:
        return
    estimate, low, high = (float(v) for v in two_phase(tp + fp, m, tp, fn, fp, tn))
    assert estimate == pytest.approx((tp + fn) / m, abs=1e-12)
    assert 0.0 <= low <= high <= 1.0


@given(st.integers(0, 400), st.integers(1, 400), st.integers(0, 40), st.integers(0, 40),
       st.integers(0, 40), st.integers(0, 40), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_estimate_and_interval_stay_in_the_unit_interval(x: int, n: int, tp: int, fn: int,
                                                         fp: int, tn: int,
                                                         level: float) -> None:
    x = min(x, n)
    estimate, low, high = (float(v) for v in two_phase(x, n, tp, fn, fp, tn, level))
    if math.isnan(estimate):
        # only when a verdict class the judge used has no labelled row
        assert (tp + fp == 0 and x > 0) or (fn + tn == 0 and x < n)
        assert math.isnan(low) and math.isnan(high)
        return
    assert 0.0 <= estimate <= 1.0 and 0.0 <= low <= high <= 1.0


def test_an_unused_empty_stratum_is_fine_and_arrays_match_scalars() -> None:
    # the judge passed every row, and every labelled row: P(correct | failed) is not needed
    estimate, _, _ = two_phase(50, 50, 8, 0, 2, 0)
    assert float(estimate) == pytest.approx(0.8)
    xs = np.array([10, 50, 90])
    arrays = two_phase(xs, 100, np.array([5, 9, 3]), 2, 1, np.array([7, 0, 4]))
    for i, x in enumerate(xs):
        scalar = two_phase(int(x), 100, [5, 9, 3][i], 2, 1, [7, 0, 4][i])
        for a, s in zip(arrays, scalar, strict=True):
            assert float(a[i]) == pytest.approx(float(s), nan_ok=True)


def test_sample_check_flags_a_slice_chosen_by_verdict() -> None:
    assert sample_check(30, 60, 600, 1000) > 0.05
    assert sample_check(58, 60, 600, 1000) < 1e-6
    assert sample_check(0, 0, 10, 20) == 1.0
