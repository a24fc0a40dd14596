"""``hopscore run ... --repeats k``: k attempts at every question, scored as Avg@k and pass@k.

Attempt 0 is the run's usual request (the same resume key and cache entry as a run without
``--repeats``, so raising k keeps what was asked); attempt j > 0 is the same prompt sent again
with the cache tag ``repeat=j`` (and ``--seed`` + j when a seed is set), so each attempt is its
own request, cached and resumed on its own. Each attempt's predictions are written in the
official format (``predictions.json`` for attempt 0, ``predictions.attempt-<j>.json`` for the
others) and read back, so every attempt's score is the official scorer's on its file.

``scores.jsonl`` and ``metrics.json`` then hold one row per question:

* every metric is the question's mean over its k attempts, so the reported score is Avg@k,
  the mean over all k x N attempts (an attempt whose request failed scores 0, as a failed
  request does without repeats);
* ``pass@1`` ... ``pass@k`` are the unbiased estimates of :mod:`hopscore.inference.passk`,
  counted with the run's right/wrong metric (the first 0/1 metric of the benchmark's headline:
  ``em``, ``accuracy``, ...; none for a graded metric, such as a score of closeness).

Their intervals are those of any score (``--ci``), over questions: clustered by question by
construction, and by ``--cluster`` above that. The ``repeats`` block of metrics.json says which
metric pass@k counts and holds each attempt's own scores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Benchmark, Example, Prediction, Predictions
from hopscore.benchmarks.fast_init import fast_init
from hopscore.errors import HopscoreError
from hopscore.inference.passk import pass_curve, pass_names, right_wrong_metric

#: (scorer, predictions, extra block such as MCR's) of one attempt's predictions file
AttemptScoring = tuple[Benchmark[Any, Any], Predictions[Any], dict[str, Any] | None]


def attempt_file(name: str, attempt: int) -> str:
    """``predictions.json`` for attempt 0, ``predictions.attempt-2.json`` for attempt 2."""
    if attempt == 0:
        return name
    path = Path(name)
    return f"{path.stem}.attempt-{attempt}{path.suffix}"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Attempts(Prediction):
    """One question's k attempts, already scored: its mean metrics and pass@1..k."""

    values: dict[str, float] = field(default_factory=dict)
    #: no attempt has a prediction
    missing: bool = False


class RepeatedScoring(Benchmark[Example, Attempts]):
    """A benchmark's metrics as means over each question's attempts, plus pass@1..k."""

    def __init__(self, inner: Benchmark[Any, Any], names: Sequence[str], passes: Sequence[str]
                 ) -> None:
        self.inner = inner
        self.names = tuple(names)
        self.passes = tuple(passes)
        self.name = inner.name  # type: ignore[misc]
        self.title = inner.title  # type: ignore[misc]
        self.metrics = (*self.names, *self.passes)  # type: ignore[misc]
        self.headline = inner.headline  # type: ignore[misc]
        self.group_keys = inner.group_keys  # type: ignore[misc]

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[Example]:
        return self.inner.load_gold(path, aliases=aliases)

    def load_predictions(self, path: Path) -> Predictions[Attempts]:
        raise HopscoreError("repeated attempts are scored from a run's samples")

    def score(self, example: Example, prediction: Attempts | None) -> dict[str, float]:
        if prediction is None:
            return dict.fromkeys(self.metrics, 0.0)
        return prediction.values

    def is_missing(self, example: Example, prediction: Attempts | None) -> bool:
        return prediction is None or prediction.missing

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        out = self.inner.finalize({name: means[name] for name in self.names if name in means})
        out.update({name: means[name] for name in self.passes if name in means})
        return out


@dataclass(slots=True)
class Repeated:
    """What scoring a run's attempts made: the wrapped predictions and the ``repeats`` block."""

    scorer: RepeatedScoring
    predictions: Predictions[Attempts]
    block: dict[str, Any]


def score_attempts(
    examples: Sequence[Example], scorings: Sequence[AttemptScoring], files: Sequence[str],
) -> Repeated:
    """Score every question's attempts (one :data:`AttemptScoring` per attempt, in order)."""
    k = len(scorings)
    names: list[str] = []
    for scorer, predictions, _ in scorings:
        names.extend(m for m in scorer.active_metrics(predictions) if m not in names)
    per_attempt: list[list[dict[str, float]]] = []  # [attempt][example] -> metrics
    missing = [[False] * len(examples) for _ in range(k)]
    for j, (scorer, predictions, _) in enumerate(scorings):
        rows = []
        for index, example in enumerate(examples):
            key = str(index) if predictions.by_position else example.id
            prediction = predictions.by_id.get(key)
            values = scorer.score(example, prediction)
            rows.append({name: float(values.get(name, 0.0)) for name in names})
            missing[j][index] = scorer.is_missing(example, prediction)
        per_attempt.append(rows)
    columns = {name: [row[name] for rows in per_attempt for row in rows] for name in names}
    base = scorings[0][0]
    metric = right_wrong_metric(base.headline, names, columns)
    passes = pass_names(k) if metric is not None else []
    by_id: dict[str, Attempts] = {}
    answers = scorings[0][1]
    for index, example in enumerate(examples):
        values = {name: sum(per_attempt[j][index][name] for j in range(k)) / k for name in names}
        if metric is not None:
            right = sum(per_attempt[j][index][metric] >= 1.0 for j in range(k))
            values.update(zip(passes, pass_curve(k, right), strict=True))
        key = str(index) if answers.by_position else example.id
        first = answers.by_id.get(key)
        by_id[example.id] = Attempts(
            id=example.id, answer=None if first is None else first.answer_text(),
            values=values, missing=all(missing[j][index] for j in range(k)))
    attempts = []
    for j, (scorer, _, extra) in enumerate(scorings):
        means = {name: sum(row[name] for row in per_attempt[j]) / max(1, len(examples))
                 for name in names}
        entry: dict[str, Any] = {"attempt": j, "predictions": files[j],
                                 "missing": sum(missing[j]), "metrics": scorer.finalize(means)}
        if extra is not None:
            entry.update(extra)
        attempts.append(entry)
    block = {
        "k": k, "pass_metric": metric,
        "metrics": "each question's mean over its k attempts (Avg@k)",
        "pass_at": passes,
        "attempts": attempts,
    }  # fmt: skip
    if metric is None:
        block["note"] = ("no metric is right/wrong (0 or 1) on every attempt, so there is no "
                         "pass@k; the metrics are Avg@k")
    scorer = RepeatedScoring(base, names, passes)
    source = answers.source
    return Repeated(scorer, Predictions(by_id, source, "repeats"), block)


def split_rows(tasks: Sequence[Any], by_key: Mapping[str, dict[str, Any]], repeats: int
               ) -> tuple[dict[str, dict[str, Any]], dict[str, list[dict[str, Any] | None]] | None]:
    """A run's rows by example id (attempt 0), and with ``repeats`` > 1 every example's
    attempts in order (None: not run yet)."""
    rows: dict[str, dict[str, Any]] = {}
    attempts: dict[str, list[dict[str, Any] | None]] | None = None if repeats == 1 else {}
    for task in tasks:
        row = by_key.get(task.key)
        if task.attempt == 0 and row is not None:
            rows[task.example.id] = row
        if attempts is not None:
            attempts.setdefault(task.example.id, [None] * repeats)[task.attempt] = row
    return rows, attempts


def attempt_rows(attempts: Mapping[str, Sequence[dict[str, Any] | None]], attempt: int
                 ) -> dict[str, dict[str, Any]]:
    """One attempt's rows by example id."""
    return {i: rows[attempt] for i, rows in attempts.items()  # type: ignore[misc]
            if rows[attempt] is not None}


def each_attempt(attempts: Mapping[str, Sequence[dict[str, Any] | None]],
                 ids: Sequence[str]) -> list[tuple[str, dict[str, Any] | None]]:
    """``(label, row)`` of every attempt of every example: the id for attempt 0, ``id#j``
    for the others (the labels of the run's counts)."""
    out: list[tuple[str, dict[str, Any] | None]] = []
    for example_id in ids:
        for j, row in enumerate(attempts.get(example_id, ())):
            out.append((example_id if j == 0 else f"{example_id}#{j}", row))
    return out


ScoreAttempt = Callable[[int, dict[str, dict[str, Any]]], AttemptScoring]
