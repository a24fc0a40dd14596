"""Open QA's error categories: the short-answer ones (the outcome, how a wrong answer relates
to the gold one), and why EM missed an answer another rule accepts: a verbose answer holding
the gold one, punctuation read apart, an alias or partial answer, a number off."""

from __future__ import annotations

import re

from hopscore.benchmarks.error_categories import (
    NO_PREDICTION,
    Dimension,
    Inputs,
    Sample,
    short_answer_dimensions,
)
from hopscore.text.normalize import normalize_answer

MISSES = (
    "exact match", "verbose: holds every gold word", "gold inside a word or number",
    "punctuation read apart", "shares words (alias or partial)", "another number",
    "yes/no swapped", "empty answer", "unrelated", NO_PREDICTION,
)  # fmt: skip

_DIGITS = re.compile(r"\d")
_YES_NO = frozenset({"yes", "no"})


def em_miss(sample: Sample) -> str | None:
    """Why EM missed this answer, read from the other rules' scores."""
    if sample.missing or sample.prediction is None:
        return NO_PREDICTION
    metrics = sample.metrics
    if metrics.get("em", 0.0) >= 1:
        return MISSES[0]
    predicted = normalize_answer(sample.prediction)
    if not predicted:
        return MISSES[7]
    if metrics.get("cover_em", 0.0) >= 1:
        return MISSES[1] if metrics.get("r1_em", 0.0) < 1 else MISSES[3]
    if metrics.get("sub_em", 0.0) >= 1:
        return MISSES[2]
    if metrics.get("r1_em", 0.0) >= 1:
        return MISSES[3]
    golds = [normalize_answer(g) for g in sample.gold]
    if predicted in _YES_NO and any(g in _YES_NO for g in golds):
        return MISSES[6]
    if metrics.get("f1", 0.0) > 0:
        return MISSES[4]
    if _DIGITS.search(predicted) and any(_DIGITS.search(g) for g in golds):
        return MISSES[5]
    return MISSES[8]


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [*short_answer_dimensions(inputs),
            Dimension("why EM missed", "What another rule says of an answer EM rejects: "
                      "cover-EM or sub-EM accept it (verbose, or inside a number), "
                      "R1-Searcher's punctuation rule accepts it, F1 finds shared words, "
                      "a number or yes/no that differs.", em_miss, MISSES)]
