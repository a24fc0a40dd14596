"""How often a judge is right, measured on human labels, and an accuracy corrected for its
errors (pure; numpy only).

A *calibration* is the 2x2 table of a judge's verdicts against human labels on the same rows
(:class:`Confusion`). Its **sensitivity** Se is the share of the rows a human marked correct
that the judge also marked correct; its **specificity** Sp the share of the rows a human marked
wrong that the judge marked wrong. Each gets the exact (Clopper-Pearson) interval.

Agreement is Cohen's kappa (:mod:`hopscore.inference.agreement`) with the two indices of Byrt,
Bishop and Carlin (1993) that say why kappa may mislead: the *prevalence index*
``(tp - tn) / n`` (kappa shrinks as it nears +-1 even when the judge is nearly always right) and
the *bias index* ``(fp - fn) / n`` (how much more often the judge says "correct" than the
human), and PABAK ``2 * agreement - 1``, the kappa of a table with both indices at 0.

**Corrected accuracy** (Rogan and Gladen 1978): a judge that marks a share q of the evaluated
rows correct estimates the true accuracy as ``p = (q + Sp - 1) / (Se + Sp - 1)``, cut to
[0, 1]. ``J = Se + Sp - 1`` (Youden's index) is how much better than a coin the judge is; the
correction divides by it, so a J near 0 makes any estimate meaningless. The interval
(:func:`adjusted_wald`) is the adjusted Wald interval of Lang and Reiczigel (2014): the three
proportions q, Se and Sp are first moved towards 1/2 as Agresti and Coull do (z^2/2 successes
and z^2/2 failures added), the delta-method variance carries all three (evaluation sample *and*
calibration sample):

    var(p) = [q(1-q)/n + p^2 Se(1-Se)/n_pos + (1-p)^2 Sp(1-Sp)/n_neg] / J^2

and the centre is shifted by their second-order term
``2 z^2 [p Se(1-Se)/n_pos - (1-p) Sp(1-Sp)/n_neg]``; the interval is cut to [0, 1]. The
judge is called *too weak to correct* (:data:`WEAK`) when the lower confidence limit of J
from the adjusted calibration proportions is not above 0: the data do not show the judge to be
better than chance, and no interval is given. bench/judge_correction.py measures the coverage.

When the labelled rows are a random slice of the very rows being corrected (a calibration made
from this run's judge file), :func:`corrected_accuracy` with ``same_rows=True`` uses the
two-phase estimate of :mod:`hopscore.inference.two_phase` instead: unbiased, inside [0, 1], and
valid for any judge, but tied to this system's rows. Rogan-Gladen is what carries over to
other runs (``compare``, another system judged by the same judge).

A **paired difference** of two systems judged by the same judge over the same rows is
``(q_B - q_A) / J``: Sp cancels, and the shared calibration enters once, through J
(:func:`corrected_difference`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.inference.agreement import Agreement
from hopscore.inference.ci import clopper_pearson, wilson, z_quantile
from hopscore.inference.two_phase import two_phase

Floats = NDArray[np.float64]
TWO_PHASE, ROGAN_GLADEN = "two-phase", "rogan-gladen"
INTERVALS = {
    TWO_PHASE: "two-phase (judge verdict strata, labelled rows of each; delta method)",
    ROGAN_GLADEN: "adjusted wald (Lang-Reiczigel), evaluation and calibration samples",
}
WEAK = ("the judge is too weak to correct: the lower {level:.0%} limit of "
        "sensitivity + specificity - 1 is {low:.3f}, not above 0 (it is no better than chance "
        "on the calibration rows)")


@dataclass(frozen=True, slots=True)
class Confusion:
    """A judge's verdicts (correct / wrong) against human labels on the same rows."""

    true_pos: int  # human: correct, judge: correct
    false_neg: int  # human: correct, judge: wrong
    false_pos: int  # human: wrong, judge: correct
    true_neg: int  # human: wrong, judge: wrong

    @property
    def positives(self) -> int:
        return self.true_pos + self.false_neg

    @property
    def negatives(self) -> int:
        return self.false_pos + self.true_neg

    @property
    def n(self) -> int:
        return self.positives + self.negatives

    @property
    def sensitivity(self) -> float | None:
        return self.true_pos / self.positives if self.positives else None

    @property
    def specificity(self) -> float | None:
        return self.true_neg / self.negatives if self.negatives else None

    def sensitivity_interval(self, level: float) -> tuple[float, float] | None:
        return clopper_pearson(self.true_pos, self.positives, level) if self.positives else None

    def specificity_interval(self, level: float) -> tuple[float, float] | None:
        return clopper_pearson(self.true_neg, self.negatives, level) if self.negatives else None

    @property
    def youden(self) -> float | None:
        se, sp = self.sensitivity, self.specificity
        return None if se is None or sp is None else se + sp - 1

    @property
    def agreement(self) -> Agreement:
        """Cohen's kappa and raw agreement (judge as the first rater, human the second)."""
        return Agreement(self.true_pos, self.false_pos, self.false_neg, self.true_neg)

    @property
    def prevalence_index(self) -> float | None:
        return (self.true_pos - self.true_neg) / self.n if self.n else None

    @property
    def bias_index(self) -> float | None:
        return (self.false_pos - self.false_neg) / self.n if self.n else None

    @property
    def pabak(self) -> float | None:
        return 2 * (self.true_pos + self.true_neg) / self.n - 1 if self.n else None

    @property
    def undefined(self) -> str | None:
        """Why the judge's error rates cannot be estimated from these rows, or None."""
        if not self.positives and not self.negatives:
            return "no calibration rows"
        if not self.positives:
            return "no calibration row is labelled correct: sensitivity is unknown"
        if not self.negatives:
            return "no calibration row is labelled wrong: specificity is unknown"
        return None

    def to_json(self, level: float = 0.95) -> dict[str, Any]:
        def interval(bounds: tuple[float, float] | None) -> dict[str, Any] | None:
            return None if bounds is None else {
                "method": "clopper-pearson", "level": level, "low": bounds[0], "high": bounds[1]}

        kappa = Agreement(self.true_pos, self.false_pos, self.false_neg, self.true_neg, level)
        return {
            "true_pos": self.true_pos, "false_neg": self.false_neg,
            "false_pos": self.false_pos, "true_neg": self.true_neg, "n": self.n,
            "sensitivity": self.sensitivity,
            "sensitivity_ci": interval(self.sensitivity_interval(level)),
            "specificity": self.specificity,
            "specificity_ci": interval(self.specificity_interval(level)),
            "youden": self.youden, "undefined": self.undefined,
            "kappa": kappa.to_json() if self.n else None,
            "prevalence_index": self.prevalence_index, "bias_index": self.bias_index,
            "pabak": self.pabak,
        }  # fmt: skip


def confusion_of(pairs: list[tuple[bool, bool]]) -> Confusion:
    """From (human label, judge verdict) pairs."""
    counts = [0, 0, 0, 0]
    for human, judge in pairs:
        counts[(0 if human else 2) + (0 if judge == human else 1)] += 1
    true_pos, false_neg, true_neg, false_pos = counts
    return Confusion(true_pos, false_neg, false_pos, true_neg)


def _adjusted(successes: Floats, n: Floats, z: float) -> tuple[Floats, Floats]:
    """Agresti-Coull: the proportion with z^2/2 successes and failures added, and its n."""
    size = n + z * z
    return (successes + z * z / 2) / size, size


def rogan_gladen(judged_right: Floats, n: Floats, true_pos: Floats, positives: Floats,
                 true_neg: Floats, negatives: Floats) -> Floats:
    """The Rogan-Gladen estimate less its second-order bias, NOT cut to [0, 1] (NaN where the
    estimated J is not above 0), elementwise.

    With estimated Se and Sp the ratio is biased by about ``[p var(Se) - (1 - p) var(Sp)] / J^2``
    (the curvature of ``(q + Sp - 1) / J`` in Se and Sp); that term, with the unbiased binomial
    variances ``Se(1 - Se) / (n_pos - 1)``, is subtracted.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        se, sp = true_pos / positives, true_neg / negatives
        youden = se + sp - 1
        p = (judged_right / n + sp - 1) / youden
        var_se = se * (1 - se) / positives
        var_sp = sp * (1 - sp) / negatives
        corrected = p - (p * var_se - (1 - p) * var_sp) / youden**2
        return np.where(youden > 0, corrected, np.nan)


def adjusted_wald(judged_right: Floats | float, n: Floats | float, true_pos: Floats | float,
                  positives: Floats | float, true_neg: Floats | float,
                  negatives: Floats | float, level: float = 0.95
                  ) -> tuple[Floats, Floats, Floats, Floats]:
    """Corrected accuracy, its interval and the lower limit of J, elementwise over arrays.

    Returns ``(estimate, low, high, youden_low)``: the Rogan-Gladen estimate from the raw
    proportions (cut to [0, 1]; NaN where J <= 0), the adjusted Wald interval (cut to [0, 1])
    and the lower confidence limit of J; where ``youden_low <= 0`` the judge is too weak to
    correct and the interval means nothing (the caller says so).
    """
    z = z_quantile(level)
    x, m = np.asarray(judged_right, float), np.asarray(n, float)
    tp, pos = np.asarray(true_pos, float), np.asarray(positives, float)
    tn, neg = np.asarray(true_neg, float), np.asarray(negatives, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.clip(rogan_gladen(x, m, tp, pos, tn, neg), 0.0, 1.0)
        q, m_adj = _adjusted(x, m, z)
        se, pos_adj = _adjusted(tp, pos, z)
        sp, neg_adj = _adjusted(tn, neg, z)
        youden = se + sp - 1
        var_se, var_sp = se * (1 - se) / pos_adj, sp * (1 - sp) / neg_adj
        youden_low = youden - z * np.sqrt(var_se + var_sp)
        centre = np.clip((q + sp - 1) / youden, 0.0, 1.0)
        variance = (q * (1 - q) / m_adj + centre**2 * var_se + (1 - centre) ** 2 * var_sp
                    ) / youden**2
        shifted = centre + 2 * z * z * (centre * var_se - (1 - centre) * var_sp)
        half = z * np.sqrt(variance)
        low = np.clip(shifted - half, 0.0, 1.0)
        high = np.clip(shifted + half, 0.0, 1.0)
    return estimate, low, high, youden_low


@dataclass(frozen=True, slots=True)
class Corrected:
    """A judge's raw accuracy over evaluated rows and the accuracy corrected for its errors."""

    judged_right: int
    n: int
    level: float
    raw_low: float
    raw_high: float
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    #: why there is no corrected estimate (the judge is too weak, a calibration cell is empty)
    undefined: str | None = None
    #: TWO_PHASE (the labelled rows are a random slice of these rows) or ROGAN_GLADEN
    method: str = "rogan-gladen"
    #: why the two-phase estimate could not be used, when it was asked for
    note: str | None = None

    @property
    def raw(self) -> float:
        return self.judged_right / self.n

    def text(self) -> str:
        """``0.612 [0.540, 0.688]`` or ``not corrected: <why>``."""
        if self.estimate is None or self.low is None or self.high is None:
            return f"not corrected: {self.undefined}"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "judged_right": self.judged_right, "n": self.n, "raw": self.raw,
            "raw_ci": {"method": "wilson", "level": self.level, "low": self.raw_low,
                       "high": self.raw_high},
            "corrected": self.estimate, "undefined": self.undefined,
            "method": self.method, "note": self.note,
            "corrected_ci": None if self.low is None else {
                "method": INTERVALS[self.method], "level": self.level, "low": self.low,
                "high": self.high},
        }  # fmt: skip


def corrected_accuracy(judged_right: int, n: int, calibration: Confusion,
                       level: float = 0.95, *, same_rows: bool = False) -> Corrected:
    """Accuracy of ``judged_right`` of ``n`` rows the judge marked correct, corrected for the
    judge's errors: by two-phase sampling (:mod:`hopscore.inference.two_phase`) when
    ``same_rows`` says the calibration's labelled rows are a random slice of these ``n`` rows,
    else (or when a verdict class has no labelled row) by Rogan-Gladen."""
    if n <= 0:
        raise ValueError("corrected_accuracy needs at least one evaluated row")
    raw_low, raw_high = wilson(judged_right, n, level)
    base = Corrected(judged_right, n, level, raw_low, raw_high)
    if same_rows:
        c = calibration
        estimate, low, high = (float(v) for v in two_phase(
            judged_right, n, c.true_pos, c.false_neg, c.false_pos, c.true_neg, level))
        if not math.isnan(estimate):
            return _with(base, estimate=estimate, low=low, high=high, method=TWO_PHASE)
        said = "passed" if c.true_pos + c.false_pos == 0 else "failed"
        base = _with(base, note=f"no labelled row is one the judge {said}, so the two-phase "
                                "estimate is undefined; corrected by sensitivity and "
                                "specificity instead")
    if calibration.undefined is not None:
        return _with(base, undefined=calibration.undefined)
    c = calibration
    estimate, low, high, youden_low = (float(v) for v in adjusted_wald(
        judged_right, n, c.true_pos, c.positives, c.true_neg, c.negatives, level))
    if not youden_low > 0 or math.isnan(estimate):
        return _with(base, undefined=WEAK.format(level=level, low=youden_low))
    return _with(base, estimate=estimate, low=low, high=high)


def _with(base: Corrected, **changes: Any) -> Corrected:
    values = {name: getattr(base, name) for name in Corrected.__slots__}
    values.update(changes)
    return Corrected(**values)


@dataclass(frozen=True, slots=True)
class CorrectedDifference:
    """B - A of two corrected accuracies from one judge over the same rows."""

    raw: float
    estimate: float | None
    low: float | None
    high: float | None
    level: float
    undefined: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"raw_difference": self.raw, "corrected_difference": self.estimate,
                "undefined": self.undefined,
                "corrected_ci": None if self.low is None else {
                    "method": "delta (paired flips and the shared calibration's J)",
                    "level": self.level, "low": self.low, "high": self.high}}


def paired_wald(a_only: Floats | float, b_only: Floats | float, n: Floats | float,
                true_pos: Floats | float, positives: Floats | float, true_neg: Floats | float,
                negatives: Floats | float, level: float = 0.95
                ) -> tuple[Floats, Floats, Floats, Floats]:
    """Corrected B - A, its interval and the lower limit of J, elementwise over arrays.

    ``a_only`` / ``b_only``: rows the judge passed for A only / B only, of ``n`` paired rows.
    The estimate is ``(b_only - a_only) / n / J`` with the raw J (NaN where J <= 0), cut to
    [-1, 1]. Its delta-method variance is ``[var(dq) + d^2 var(J)] / J^2``: the paired variance
    of the raw difference ``var(dq) = [(b + c) / n - dq^2] / n`` with half a row added to each
    cell of the paired 2x2 table (Agresti and Min 2005; never 0), and ``var(J) = var(Se) +
    var(Sp)`` from the Agresti-Coull adjusted calibration proportions, as in
    :func:`adjusted_wald`. Where ``youden_low <= 0`` the judge is too weak to correct.
    """
    z = z_quantile(level)
    a, b, m = np.asarray(a_only, float), np.asarray(b_only, float), np.asarray(n, float)
    tp, pos = np.asarray(true_pos, float), np.asarray(positives, float)
    tn, neg = np.asarray(true_neg, float), np.asarray(negatives, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        youden_raw = tp / pos + tn / neg - 1
        estimate = np.where(youden_raw > 0, np.clip((b - a) / m / youden_raw, -1.0, 1.0),
                            np.nan)
        se, _ = _adjusted(tp, pos, z)
        sp, _ = _adjusted(tn, neg, z)
        var_j = se * (1 - se) / (pos + z * z) + sp * (1 - sp) / (neg + z * z)
        youden = se + sp - 1
        youden_low = youden - z * np.sqrt(var_j)
        size = m + 2
        shift = (b - a) / size
        var_dq = np.maximum(((a + b + 1) / size - shift**2) / size, 0.0)
        centre = np.where(np.isnan(estimate), 0.0, estimate)
        half = z * np.sqrt((var_dq + centre**2 * var_j) / youden**2)
        low = np.clip(centre - half, -1.0, 1.0)
        high = np.clip(centre + half, -1.0, 1.0)
    return estimate, low, high, youden_low


def corrected_difference(a_only: int, b_only: int, n: int, calibration: Confusion,
                         level: float = 0.95) -> CorrectedDifference:
    """Corrected B - A from the paired flips of the judge's verdicts.

    ``a_only``: rows the judge marked correct for A only; ``b_only``: for B only. The corrected
    difference is ``(b_only - a_only) / n / J``; its variance by the delta method is
    ``[var(dq) + d^2 var(J)] / J^2`` with the paired variance of the raw difference
    ``var(dq) = [(b + c) / n - dq^2] / n`` and ``var(J) = var(Se) + var(Sp)`` from the
    calibration (:func:`paired_wald`). The difference is cut to [-1, 1]. Whether the two
    differ at all is the raw paired test's question: J > 0 only rescales the difference, so
    its sign and p-value carry over.
    """
    if n <= 0:
        raise ValueError("corrected_difference needs at least one paired row")
    raw = (b_only - a_only) / n
    c = calibration
    if c.undefined is not None:
        return CorrectedDifference(raw, None, None, None, level, c.undefined)
    estimate, low, high, youden_low = (float(v) for v in paired_wald(
        a_only, b_only, n, c.true_pos, c.positives, c.true_neg, c.negatives, level))
    if not youden_low > 0 or math.isnan(estimate):
        return CorrectedDifference(raw, None, None, None, level,
                                   WEAK.format(level=level, low=youden_low))
    return CorrectedDifference(raw, estimate, low, high, level)
