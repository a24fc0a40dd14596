"""Accuracy from a judge's verdicts on every row and human labels on a random slice of the same
rows (two-phase sampling; pure, numpy only).

When the labelled rows are a random sample of the rows being scored, the judge's verdict splits
the rows into two strata, *judge passed* and *judge failed*, and the accuracy is p = q *
P(correct | passed) + (1 - q) * P(correct | failed) with ``q`` the share of rows the judge
passed (from every judged row) and the two conditional shares from the labelled rows of each
stratum (Tenenbein 1970; double sampling for stratification, Cochran 1977, 12.2). Given how many
labelled rows fall in each stratum, each conditional share is an unbiased proportion, and ``q``
is unbiased and does not enter them, so the estimate is exactly unbiased given that both strata
hold a labelled row (tests/inference/test_two_phase.py sums over every data set). A stratum
without a labelled row is allowed only when the judge put no row in it; otherwise the estimate
is undefined. Unlike the Rogan-Gladen correction (:mod:`hopscore.inference.judge_error`) it has
no ratio, needs no judge better than chance, and cannot leave [0, 1]; but the two conditional
shares belong to this system's rows: they do not carry over to another system's run, which the
sensitivity and specificity do.

The variance (the delta method; exact for ``m = n``, where it is ``p(1 - p) / n``) is

    var(p) = q^2 v1 (1 - v1) / m1 + (1 - q)^2 v0 (1 - v0) / m0 + q (1 - q) (v1 - v0)^2 / n

with ``v1, v0`` the conditional shares and ``m1, m0`` the labelled rows of each stratum. The
interval is centred on the estimate with one success and one failure added to each stratum and
``z^2 / 2`` of each to ``q`` (as Agresti and Coull do for one proportion), and cut to [0, 1];
with 5-10 labelled rows in a stratum the plain Wald interval would be too short.
bench/judge_correction.py measures its bias and coverage.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from hopscore.inference.ci import z_quantile

Floats = NDArray[np.float64]
ADDED = 1.0  # successes and failures added to each stratum for the interval


def two_phase(judged_right: Floats | float, n: Floats | float, true_pos: Floats | float,
              false_neg: Floats | float, false_pos: Floats | float, true_neg: Floats | float,
              level: float = 0.95) -> tuple[Floats, Floats, Floats]:
    """``(estimate, low, high)`` elementwise; NaN where a stratum the judge used holds no
    labelled row.

    ``judged_right`` of ``n`` rows were passed by the judge; on the labelled rows, ``true_pos``
    passed and labelled correct, ``false_pos`` passed and labelled wrong, ``false_neg`` failed
    and labelled correct, ``true_neg`` failed and labelled wrong.
    """
    z = z_quantile(level)
    x, m = np.asarray(judged_right, float), np.asarray(n, float)
    tp, fn = np.asarray(true_pos, float), np.asarray(false_neg, float)
    fp, tn = np.asarray(false_pos, float), np.asarray(true_neg, float)
    passed, failed = tp + fp, fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        q = x / m
        v1 = np.where(passed > 0, tp / np.maximum(passed, 1), 0.0)
        v0 = np.where(failed > 0, fn / np.maximum(failed, 1), 0.0)
        defined = ((passed > 0) | (x == 0)) & ((failed > 0) | (x == m))
        estimate = np.where(defined, q * v1 + (1 - q) * v0, np.nan)
        size1, size0 = passed + 2 * ADDED, failed + 2 * ADDED
        a1, a0 = (tp + ADDED) / size1, (fn + ADDED) / size0
        qa = (x + z * z / 2) / (m + z * z)
        centre = qa * a1 + (1 - qa) * a0
        variance = (qa**2 * a1 * (1 - a1) / size1 + (1 - qa) ** 2 * a0 * (1 - a0) / size0
                    + qa * (1 - qa) * (a1 - a0) ** 2 / (m + z * z))
        half = z * np.sqrt(variance)
        low = np.where(defined, np.clip(centre - half, 0.0, 1.0), np.nan)
        high = np.where(defined, np.clip(centre + half, 0.0, 1.0), np.nan)
    return estimate, low, high


def sample_check(labelled_passed: int, labelled: int, judged_right: int, n: int) -> float:
    """Two-sided p-value that the labelled rows' pass share is the run's (an exact binomial
    test): a very small one says the slice was not drawn at random from the judged rows."""
    from scipy.stats import binomtest

    if labelled == 0 or n == 0:
        return 1.0
    return float(binomtest(labelled_passed, labelled, min(max(judged_right / n, 0.0), 1.0)
                           ).pvalue)
