"""Fermi error categories: how many orders of magnitude the estimate is off.

The prediction and the gold answer are evaluated the way the scorer evaluates them
(:func:`hopscore.benchmarks.fermi.quantities.answer_quantity`: pint, Fermi's units, base units)
and banded by ``|log10(gold / prediction)|``. The official score is ``max(0, 1 - |log10 ratio| /
3)``, so the bands line up with it: 10x off scores 2/3, 100x 1/3, 1000x or more 0. Answers that
do not evaluate to a number, negative values and the official one-zero branch (a 0 estimate or a
0 gold, scored on a different scale) get categories of their own. Without parseable text (a
score file from elsewhere) the band is read back from ``fp_score``, which is exact for positive
values.
"""

from __future__ import annotations

import math

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample

SCORE_NAMES = ("fp_score", "score", "fermi_score")
BANDS = (
    "exact (same value)",
    "within half an order (< 10^0.5 = 3.2x)",
    "0.5-1 order off (3.2x-10x)",
    "1-2 orders off (10x-100x)",
    "2-3 orders off (100x-1000x)",
    "3+ orders off",
)
NO_NUMBER = "answer did not evaluate to a number"
NEGATIVE = "negative value"
ZERO = "zero estimate or zero gold"
ZERO_SCORE = "scored 0 (3+ orders off, negative or no number)"


def orders_band(orders: float) -> str:
    orders = round(orders, 9)  # so that exactly 10x lands in "1-2 orders"
    if orders == 0:
        return BANDS[0]
    for limit, name in ((0.5, BANDS[1]), (1, BANDS[2]), (2, BANDS[3]), (3, BANDS[4])):
        if orders < limit:
            return name
    return BANDS[5]


def _magnitude(text: str | None) -> float | None:
    if text is None:
        return None
    from hopscore.benchmarks.fermi.quantities import answer_quantity

    value = answer_quantity(text).magnitude
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def band(sample: Sample) -> str | None:
    name = next((n for n in SCORE_NAMES if n in sample.metrics), None)
    if name is None:
        return None
    if sample.missing:
        return NO_PREDICTION
    predicted = _magnitude(sample.prediction)
    gold = _magnitude(sample.gold[0]) if sample.gold else None
    if gold is not None:
        if predicted is None:
            return NO_NUMBER
        if predicted < 0 or gold < 0:
            return NEGATIVE
        if predicted == 0 and gold == 0:
            return BANDS[0]
        if predicted == 0 or gold == 0:
            return ZERO
        return orders_band(abs(math.log10(gold / predicted)))
    score = sample.metrics[name]
    if score <= 0:
        return ZERO_SCORE
    return orders_band(3 * (1 - score))


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "order-of-magnitude error",
        "How far the estimate is from the gold answer, in orders of magnitude "
        "(|log10(gold / estimate)|, both in base units).",
        band, (*BANDS, ZERO, NEGATIVE, NO_NUMBER, ZERO_SCORE, NO_PREDICTION),
    )]  # fmt: skip
