"""Short-answer error categories (Bamboogle, and any benchmark scored by exact match and F1):
the outcome, and how a wrong answer relates to the gold one (a longer answer holding it, a part
of it, some words in common, nothing in common)."""

from __future__ import annotations

from hopscore.analysis.categories import NO_PREDICTION, Dimension, Inputs, Sample, outcome
from hopscore.text.normalize import normalize_answer

OUTCOMES = ("right", "partial", "wrong", NO_PREDICTION)
FITS = (
    "holds the gold answer and more", "part of the gold answer", "some words in common",
    "no word in common", "empty answer", NO_PREDICTION,
)  # fmt: skip


def answer_outcome(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    return outcome(sample.metrics, "em", "f1")


def _padded(text: str) -> str:
    return f" {text} "


def fit(sample: Sample) -> str | None:
    """How a wrong answer relates to the nearest gold answer (None for right answers)."""
    if sample.missing or sample.prediction is None:
        return NO_PREDICTION
    if sample.metrics.get("em", 0.0) >= 1 or not sample.gold:
        return None
    predicted = normalize_answer(sample.prediction)
    if not predicted:
        return "empty answer"
    golds = [normalize_answer(g) for g in sample.gold]
    if any(g and _padded(g) in _padded(predicted) for g in golds):
        return FITS[0]
    if any(_padded(predicted) in _padded(g) for g in golds):
        return FITS[1]
    words = set(predicted.split())
    if any(words & set(g.split()) for g in golds):
        return FITS[2]
    return FITS[3]


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [
        Dimension("outcome", "Right = exact match, partial = F1 > 0, wrong = F1 0.",
                  answer_outcome, OUTCOMES),
        Dimension("wrong answer x gold answer",
                  "How each answer that is not an exact match relates to the gold answer, "
                  "after normalization (lower case, no punctuation or articles): a longer "
                  "answer holding it, a part of it, some words shared, none.", fit, FITS),
    ]
