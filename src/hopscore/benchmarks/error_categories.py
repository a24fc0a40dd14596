"""What a benchmark's error categories are made of, for ``hopscore analyze`` and the report.

A *dimension* is one way of sorting examples into categories (answer x supporting-fact outcome,
where the prediction occurs, ...). A benchmark declares the module of its own dimensions
(:attr:`hopscore.benchmarks.base.Benchmark.error_categories`, usually ``categories.py`` beside
its module): that module's ``dimensions(inputs)`` takes the :class:`Inputs` and returns its
dimensions. The analysis (:mod:`hopscore.analysis.categories`) adds the generic ones that apply
to every benchmark and counts. This module is neutral: the benchmark folders and the analysis
both import it, and it imports neither. It also holds the short-answer dimensions any benchmark
scored by exact match and F1 may declare (:func:`short_answer_dimensions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.text.normalize import normalize_answer

NO_PREDICTION = "no prediction"


def _no_examples() -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class Inputs:
    """What error analysis may read besides the scores."""

    benchmark: str | None = None
    #: the benchmark's gold file (for context: the paragraphs, the answer's place)
    gold: Path | None = None
    #: a folder of tables the questions are asked about (``--tables``)
    tables: Path | None = None
    #: the gold examples of :attr:`gold` by id, loaded once when first called (empty without
    #: a gold file); the analysis sets it for the benchmark it reads
    examples: Callable[[], Mapping[str, Any]] = _no_examples


@dataclass(frozen=True, slots=True)
class Sample:
    """What a category function sees of one example."""

    id: str
    groups: Mapping[str, str]
    metrics: Mapping[str, float]
    missing: bool
    prediction: str | None
    gold: tuple[str, ...]
    #: the run's samples.jsonl row, or the judge / sql-match output row; {} when there is none
    record: Mapping[str, Any] = field(default_factory=dict)
    #: a judge verdict row for this id (``--judge``), when given
    judge: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Dimension:
    name: str
    description: str
    categorize: Callable[[Sample], str | None]
    #: display order of known categories (others follow by count)
    order: tuple[str, ...] = ()


def outcome(metrics: Mapping[str, float], exact: str, partial: str | None = None) -> str | None:
    """"right" / "partial" / "wrong" from an exact metric and, optionally, an F1-like one."""
    if exact not in metrics:
        return None
    if metrics[exact] >= 1:
        return "right"
    if partial is not None and metrics.get(partial, 0.0) > 0:
        return "partial"
    return "wrong"


def contains(text: str, span: str) -> bool:
    """Whether the normalized ``span`` occurs as whole words in the normalized ``text``."""
    return f" {span} " in f" {text} "


def settled_or_span(sample: Sample) -> tuple[str | None, str]:
    """The opening of a category of where a wrong answer occurs: ``(NO_PREDICTION, "")``
    without a prediction, ``("correct", "")`` for an exact match (``em`` 1), else
    ``(None, span)``: the normalized prediction, to be placed (it may be empty)."""
    if sample.missing or sample.prediction is None:
        return NO_PREDICTION, ""
    if sample.metrics.get("em", 0.0) >= 1:
        return "correct", ""
    return None, normalize_answer(sample.prediction)


# --- short answers: the outcome, and how a wrong answer relates to the gold one ---------------

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


def short_answer_dimensions(inputs: Inputs) -> list[Dimension]:
    """The outcome (exact match, F1 > 0, neither) and how each wrong answer relates to the gold
    one: the error categories of a benchmark of short answers scored by ``em`` and ``f1``."""
    return [
        Dimension("outcome", "Right = exact match, partial = F1 > 0, wrong = F1 0.",
                  answer_outcome, OUTCOMES),
        Dimension("wrong answer x gold answer",
                  "How each answer that is not an exact match relates to the gold answer, "
                  "after normalization (lower case, no punctuation or articles): a longer "
                  "answer holding it, a part of it, some words shared, none.", fit, FITS),
    ]
