"""FRAMES's error categories: the short-answer ones (the outcome by exact match and F1, and how
a wrong answer relates to the gold one), and, when the rater's verdicts are given, how the
rater and the rule ``contains`` agree."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import (
    NO_PREDICTION,
    Dimension,
    Inputs,
    Sample,
    short_answer_dimensions,
)

__all__ = ["dimensions"]

RATER = ("TRUE, gold in answer", "TRUE, gold not found verbatim", "FALSE, gold in answer",
         "FALSE, gold not in answer", "no verdict", NO_PREDICTION)


def rater_vs_contains(sample: Sample) -> str | None:
    """The rater's decision beside whether the gold answer occurs in the response."""
    if sample.judge is None:
        return None
    if sample.missing or sample.prediction is None:
        return NO_PREDICTION
    verdict = sample.judge.get("correct")
    if verdict is None or not sample.judge.get("parse_ok", True):
        return RATER[4]
    found = sample.metrics.get("contains", 0.0) >= 1
    if verdict:
        return RATER[0] if found else RATER[1]
    return RATER[2] if found else RATER[3]


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [*short_answer_dimensions(inputs),
            Dimension("rater x contains",
                      "The rater's decision (score --judge) beside the rule: does the "
                      "normalized gold answer occur in the normalized response?",
                      rater_vs_contains, RATER)]
