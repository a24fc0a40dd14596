"""MuSiQue's error categories: the short-answer ones (the outcome, and how a wrong answer
relates to the gold one), and how the cited support relates to the gold paragraphs."""

from __future__ import annotations

import dataclasses

from hopscore.benchmarks.error_categories import (
    FITS,
    NO_PREDICTION,
    OUTCOMES,
    Dimension,
    Inputs,
    Sample,
    fit,
    outcome,
)


def _outcome(sample: Sample) -> str | None:
    return NO_PREDICTION if sample.missing else outcome(sample.metrics, "answer_em", "answer_f1")


def _fit(sample: Sample) -> str | None:
    """How a wrong answer relates to the nearest of the gold answer and its aliases."""
    metrics = {**sample.metrics, "em": sample.metrics.get("answer_em", 0.0)}
    return fit(dataclasses.replace(sample, metrics=metrics))


def _support(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    f1 = sample.metrics.get("support_f1")
    if f1 is None:
        return None
    if sample.metrics.get("support_em") == 1.0:
        return "all supporting paragraphs, no other"
    recall, prec = sample.metrics.get("support_recall", 0.0), sample.metrics.get("support_prec",
                                                                                 0.0)
    if f1 == 0.0:
        return "no supporting paragraph cited"
    if recall == 1.0:
        return "all supporting paragraphs, and others"
    if prec == 1.0:
        return "some supporting paragraphs missing (a hop skipped)"
    return "some supporting paragraphs missing, others cited"


def _answer_by_support(sample: Sample) -> str | None:
    if sample.missing or "support_recall" not in sample.metrics:
        return None
    right = sample.metrics.get("answer_em") == 1.0
    complete = sample.metrics.get("support_recall") == 1.0
    if right:
        return "right, every hop's paragraph cited" if complete else \
            "right without citing every hop (shortcut or guess)"
    return "wrong though every hop's paragraph cited" if complete else \
        "wrong, a hop's paragraph not cited"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [
        Dimension("outcome", "Right = exact match with the answer or an alias, partial = "
                  "answer F1 > 0, wrong = F1 0.", _outcome, OUTCOMES),
        Dimension("wrong answer x gold answer",
                  "How each answer that is not an exact match relates to the nearest of the "
                  "gold answer and its aliases, after normalization: a longer answer holding "
                  "it, a part of it, some words shared, none.", _fit, FITS),
        Dimension("musique support", "The cited paragraphs against the gold supporting "
                  "paragraphs (predicted_support_idxs).", _support),
        Dimension("musique answer and hops", "Whether a right answer rests on every hop's "
                  "paragraph, and whether a wrong one had them all.", _answer_by_support),
    ]
