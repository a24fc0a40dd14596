"""Fermi error categories: how many orders of magnitude the estimate is off.

The official score is ``max(0, 1 - |log10(y / y_hat)| / 3)`` for positive answers, so a score
above 0 tells how far off the estimate was: ``|log10 ratio| = 3 * (1 - score)``. A score of 0
means three or more orders off, a negative number, or an answer that did not evaluate to a
number. (The official one-zero branch, a 0 estimate or a 0 gold, scores on a different scale;
those rare examples land in the band their score implies.)
"""

from __future__ import annotations

from hopscore.analysis.categories import NO_PREDICTION, Dimension, Inputs, Sample

SCORE_NAMES = ("fp_score", "score", "fermi_score", "accuracy")
BANDS = (
    "exact (same value)",
    "within half an order (< 10^0.5 = 3.2x)",
    "0.5-1 order off (3.2x-10x)",
    "1-2 orders off (10x-100x)",
    "2-3 orders off (100x-1000x)",
    "3+ orders off, negative or no number",
)


def band(sample: Sample) -> str | None:
    name = next((n for n in SCORE_NAMES if n in sample.metrics), None)
    if name is None:
        return None
    if sample.missing:
        return NO_PREDICTION
    score = sample.metrics[name]
    if score <= 0:
        return BANDS[5]
    if score >= 1:
        return BANDS[0]
    orders = round(3 * (1 - score), 9)  # so that exactly 10x lands in "1-2 orders"
    if orders < 0.5:
        return BANDS[1]
    if orders < 1:
        return BANDS[2]
    if orders < 2:
        return BANDS[3]
    return BANDS[4]


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "order-of-magnitude error",
        "How far the estimate is from the gold answer, in orders of magnitude (from fp_score).",
        band, (*BANDS, NO_PREDICTION),
    )]  # fmt: skip
