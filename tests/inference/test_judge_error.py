"""The judge's error rates on human labels and the Rogan-Gladen corrected accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from hopscore.inference.judge_error import (
    Confusion,
    adjusted_wald,
    confusion_of,
    corrected_accuracy,
    corrected_difference,
    rogan_gladen,
)


def test_confusion_counts_and_exact_intervals() -> None:
    pairs = [(True, True)] * 40 + [(True, False)] * 10 + [(False, True)] * 5 + [
        (False, False)] * 45
    c = confusion_of(pairs)
    assert (c.true_pos, c.false_neg, c.false_pos, c.true_neg) == (40, 10, 5, 45)
    assert c.sensitivity == 0.8 and c.specificity == 0.9
    assert c.youden == pytest.approx(0.7)
    expected = sps.binomtest(40, 50).proportion_ci(0.95, method="exact")
    assert c.sensitivity_interval(0.95) == pytest.approx((expected.low, expected.high))
    expected = sps.binomtest(45, 50).proportion_ci(0.9, method="exact")
    assert c.specificity_interval(0.9) == pytest.approx((expected.low, expected.high))


def test_kappa_with_prevalence_and_bias_indices() -> None:
    """Byrt, Bishop and Carlin's indices, PABAK, and kappa equal to statsmodels'."""
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    c = Confusion(true_pos=80, false_neg=3, false_pos=12, true_neg=5)
    table = np.array([[80, 12], [3, 5]])  # judge rows, human columns
    assert c.agreement.kappa == pytest.approx(inter_rater.cohens_kappa(table).kappa, abs=1e-12)
    assert c.prevalence_index == pytest.approx((80 - 5) / 100)
    assert c.bias_index == pytest.approx((12 - 3) / 100)
    assert c.pabak == pytest.approx(2 * 0.85 - 1)
    # high prevalence: 85% agreement, yet a small kappa; PABAK says 0.7
    assert c.agreement.kappa is not None and c.agreement.kappa < 0.4
    data = c.to_json()
    assert data["kappa"]["kappa"] == pytest.approx(c.agreement.kappa)
    assert data["sensitivity_ci"]["method"] == "clopper-pearson"


def test_rogan_gladen_inverts_the_judge_exactly_in_expectation() -> None:
    """With the true rates and no calibration noise the estimate is the true accuracy."""
    se, sp, acc = 0.9, 0.8, 0.35
    q = acc * se + (1 - acc) * (1 - sp)
    big = 10**12
    estimate = rogan_gladen(np.float64(q * big), np.float64(big), np.float64(se * big),
                            np.float64(big), np.float64(sp * big), np.float64(big))
    assert float(estimate) == pytest.approx(acc, abs=1e-9)


def test_corrected_accuracy_moves_the_raw_one_and_widens_its_interval() -> None:
    calibration = Confusion(true_pos=45, false_neg=5, false_pos=10, true_neg=40)  # .9, .8
    result = corrected_accuracy(120, 200, calibration)
    assert result.raw == 0.6
    assert result.estimate is not None and result.low is not None and result.high is not None
    # (0.6 + 0.8 - 1) / 0.7 = 0.571, less a small second-order term
    assert result.estimate == pytest.approx(0.4 / 0.7, abs=0.01)
    assert 0 <= result.low < result.estimate < result.high <= 1
    assert result.high - result.low > result.raw_high - result.raw_low
    assert result.to_json()["corrected_ci"]["low"] == result.low


def test_estimates_and_intervals_stay_in_the_unit_interval() -> None:
    calibration = Confusion(true_pos=30, false_neg=0, false_pos=2, true_neg=68)
    low_end = corrected_accuracy(0, 200, calibration)
    assert low_end.estimate == 0.0 and low_end.low == 0.0
    high_end = corrected_accuracy(200, 200, calibration)
    assert high_end.estimate == 1.0 and high_end.high == 1.0


def test_a_judge_no_better_than_chance_is_not_corrected() -> None:
    coin = Confusion(true_pos=26, false_neg=24, false_pos=25, true_neg=25)
    result = corrected_accuracy(100, 200, coin)
    assert result.estimate is None and result.low is None
    assert result.undefined is not None and "too weak to correct" in result.undefined
    assert result.text().startswith("not corrected: the judge is too weak")
    worse = Confusion(true_pos=10, false_neg=40, false_pos=40, true_neg=10)
    assert "too weak" in (corrected_accuracy(100, 200, worse).undefined or "")


def test_an_empty_calibration_class_is_named() -> None:
    result = corrected_accuracy(50, 100, Confusion(20, 3, 0, 0))
    assert result.estimate is None and "labelled wrong" in (result.undefined or "")
    result = corrected_accuracy(50, 100, Confusion(0, 0, 4, 30))
    assert "labelled correct" in (result.undefined or "")
    with pytest.raises(ValueError):
        corrected_accuracy(0, 0, Confusion(1, 1, 1, 1))


def test_vectorized_and_scalar_paths_agree() -> None:
    calibration = Confusion(true_pos=35, false_neg=7, false_pos=6, true_neg=52)
    estimate, low, high, youden_low = adjusted_wald(
        np.array([30.0, 90.0, 170.0]), 200, calibration.true_pos, calibration.positives,
        calibration.true_neg, calibration.negatives)
    for i, judged in enumerate((30, 90, 170)):
        one = corrected_accuracy(judged, 200, calibration)
        assert (one.estimate, one.low, one.high) == pytest.approx(
            (estimate[i], low[i], high[i]))
    assert np.all(youden_low > 0)


def test_paired_difference_scales_by_the_shared_youden_index() -> None:
    calibration = Confusion(true_pos=90, false_neg=10, false_pos=20, true_neg=80)  # J = 0.7
    result = corrected_difference(a_only=10, b_only=24, n=200, calibration=calibration)
    assert result.raw == pytest.approx(0.07)
    assert result.estimate == pytest.approx(0.1)
    assert result.low is not None and result.high is not None
    assert result.low < 0.1 < result.high
    # the calibration's uncertainty widens the interval beyond the raw one scaled by 1/J
    var_dq = ((10 + 24) / 200 - 0.07**2) / 200
    assert result.high - 0.1 > 1.959 * math.sqrt(var_dq) / 0.7
    no_change = corrected_difference(12, 12, 200, calibration)
    assert no_change.estimate == 0.0
    weak = corrected_difference(1, 5, 100, Confusion(10, 10, 10, 10))
    assert weak.estimate is None and "too weak" in (weak.undefined or "")
