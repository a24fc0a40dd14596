"""Score a benchmark: join gold and predictions, apply the id policy, aggregate, write results.

The id policy is the same for every benchmark, whatever its official script did:

* a gold id with no prediction scores 0, stays in the denominator and is listed in ``missing_ids``;
* a predicted id that is not in the gold is listed in ``extra_ids`` and ignored.

Scores are streamed: each example's scores go to ``on_score`` as soon as they exist, and only the
running sums are kept, so a million-example file needs little memory. For the confidence
intervals (:mod:`hopscore.intervals`) the per-example metric values are also kept, as flat
numpy-backed arrays (8 bytes per value), not as Python objects.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopscore.benchmarks.base import Benchmark, E, P, Predictions
from hopscore.defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.errors import HopscoreError
from hopscore.io import bulk_load, json_line, write_json_atomic
from hopscore.records import fast_init

if TYPE_CHECKING:
    from hopscore.stats import Interval

# hopscore.intervals (numpy) is imported where intervals are made: without them numpy never loads.


@fast_init
@dataclass(frozen=True, slots=True)
class ExampleScore:
    """The scores of one gold example, as written to ``scores.jsonl``."""

    id: str
    groups: dict[str, str]
    metrics: dict[str, float]
    missing: bool
    prediction: str | None
    gold: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "groups": self.groups,
            "metrics": self.metrics,
            "missing": self.missing,
            "prediction": self.prediction,
            "gold": list(self.gold),
        }


@dataclass(slots=True)
class GroupSummary:
    n: int
    metrics: dict[str, float]
    #: the group label (``"bridge"``); the group's name is ``"key=value"`` where labels collide
    value: str | None = None
    ci: dict[str, Interval | None] | None = None


@dataclass(slots=True)
class ScoreReport:
    """What ``metrics.json`` holds."""

    benchmark: str
    n_gold: int
    n_predictions: int
    missing_ids: list[str]
    extra_ids: list[str]
    metrics: dict[str, float]
    groups: dict[str, GroupSummary]
    group_keys: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: bootstrap interval per metric (None: a derived metric without one); None: not computed
    ci: dict[str, Interval | None] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "n_gold": self.n_gold,
            "n_predictions": self.n_predictions,
            "missing_ids": self.missing_ids,
            "extra_ids": self.extra_ids,
            "metrics": self.metrics,
        }
        if self.ci is not None:
            from hopscore.intervals import intervals_to_json

            out["ci"] = intervals_to_json(self.ci)
        groups: dict[str, Any] = {}
        for name, g in self.groups.items():
            groups[name] = {"n": g.n, "key": self.group_keys.get(name), "metrics": g.metrics}
            if g.ci is not None:
                from hopscore.intervals import intervals_to_json

                groups[name]["ci"] = intervals_to_json(g.ci)
        out["groups"] = groups
        out["warnings"] = self.warnings
        return out


class _Sums:
    __slots__ = ("n", "totals")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.n = 0
        self.totals = dict.fromkeys(names, 0.0)

    def add(self, values: dict[str, float]) -> None:
        self.n += 1
        totals = self.totals
        for name in totals:
            totals[name] += values[name]

    def means(self) -> dict[str, float]:
        return {name: total / self.n for name, total in self.totals.items()} if self.n else {}


def score_examples(
    benchmark: Benchmark[E, P],
    examples: Iterable[E],
    predictions: Predictions[P],
    on_score: Callable[[ExampleScore], None] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> ScoreReport:
    """Score every gold example (in gold order) and aggregate overall and per group.

    With ``resamples`` > 0 every metric also gets a seeded percentile bootstrap interval.
    """
    names = benchmark.active_metrics(predictions)
    overall = _Sums(names)
    kept = None
    if resamples > 0:
        from hopscore.intervals import ExampleValues

        kept = ExampleValues(names)
    groups: dict[tuple[str, str], _Sums] = {}
    missing: list[str] = []
    gold_ids: set[str] = set()
    by_id = predictions.by_id
    by_position = predictions.by_position
    for index, example in enumerate(examples):
        key = str(index) if by_position else example.id
        gold_ids.add(key)
        prediction = by_id.get(key)
        values = benchmark.score(example, prediction)
        is_missing = benchmark.is_missing(example, prediction)
        if is_missing:
            missing.append(example.id)
        overall.add(values)
        labels = example.groups()
        if kept is not None:
            kept.add(values, labels)
        for key, value in labels.items():
            sums = groups.get((key, value))
            if sums is None:
                sums = groups[(key, value)] = _Sums(names)
            sums.add(values)
        if on_score is not None:
            on_score(
                ExampleScore(
                    id=example.id,
                    groups=labels,
                    metrics={name: values[name] for name in names},
                    missing=is_missing,
                    prediction=None if prediction is None else prediction.answer_text(),
                    gold=example.gold_answers(),
                )
            )
    if overall.n == 0:
        raise HopscoreError("the gold file holds no examples")
    extra = [pid for pid in by_id if pid not in gold_ids]
    report = ScoreReport(
        benchmark=benchmark.name,
        n_gold=overall.n,
        n_predictions=len(by_id),
        missing_ids=missing,
        extra_ids=extra,
        metrics=benchmark.finalize(overall.means()),
        groups={},
        warnings=list(predictions.warnings),
    )
    _fill_groups(benchmark, report, groups)
    if kept is not None:
        from hopscore.intervals import attach_intervals

        attach_intervals(benchmark, report, kept, resamples=resamples, seed=seed)
    if missing:
        report.warnings.append(
            f"{len(missing)} of {overall.n} gold examples have no prediction; they score 0 and "
            f"stay in the denominator (first: {', '.join(missing[:5])})"
        )
    if extra and by_position:
        report.warnings.append(
            f"{predictions.source} has no ids and is matched to the gold by position; its "
            f"{len(extra)} records after the gold's {overall.n} were ignored"
        )
        report.extra_ids = [f"position {pid}" for pid in extra]
    elif extra:
        report.warnings.append(
            f"{len(extra)} predicted ids are not in the gold and were ignored "
            f"(first: {', '.join(extra[:5])})"
        )
    return report


def _fill_groups(
    benchmark: Benchmark[E, P], report: ScoreReport, groups: dict[tuple[str, str], _Sums]
) -> None:
    """Name groups by their value ("bridge"), or "key=value" where two keys share a value."""
    order = {key: i for i, key in enumerate(benchmark.group_keys)}
    values_seen: dict[str, int] = {}
    for _, value in groups:
        values_seen[value] = values_seen.get(value, 0) + 1
    for key, value in sorted(groups, key=lambda kv: (order.get(kv[0], len(order)), kv[0], kv[1])):
        name = value if values_seen[value] == 1 else f"{key}={value}"
        sums = groups[(key, value)]
        report.groups[name] = GroupSummary(
            n=sums.n, metrics=benchmark.finalize(sums.means()), value=value
        )
        report.group_keys[name] = key


class ScoresWriter:
    """Streams :class:`ExampleScore` lines to ``scores.jsonl``; renamed into place on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        self._handle = os.fdopen(fd, "w", encoding="utf-8")

    def __call__(self, score: ExampleScore) -> None:
        self._handle.write(json_line(score.to_json()))

    def close(self, *, keep: bool = True) -> None:
        self._handle.close()
        if keep:
            os.replace(self._tmp, self.path)
        else:
            Path(self._tmp).unlink(missing_ok=True)


def score_files(
    benchmark: Benchmark[E, P],
    gold_path: Path,
    predictions_path: Path,
    output_dir: Path | None,
    *,
    aliases: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    read_predictions: Callable[[Sequence[E]], Predictions[P]] | None = None,
) -> ScoreReport:
    """Load and score; with ``output_dir``, write ``metrics.json`` and ``scores.jsonl``.

    ``read_predictions``, when given, makes the predictions from the gold examples instead of
    ``benchmark.load_predictions(predictions_path)`` (another harness's output, joined to the
    gold: :mod:`hopscore.harness`).
    """
    with bulk_load():
        if read_predictions is None:
            examples: Iterable[E] = benchmark.iter_gold(gold_path, aliases=aliases)
            predictions = benchmark.load_predictions(predictions_path)
        else:  # replies are read against whole examples (HotpotQA citations need the titles)
            examples = benchmark.load_gold(gold_path, aliases=aliases)
            predictions = read_predictions(examples)
    if output_dir is None:
        return score_examples(benchmark, examples, predictions, resamples=resamples, seed=seed)
    writer = ScoresWriter(output_dir / "scores.jsonl")
    try:
        report = score_examples(
            benchmark, examples, predictions, writer, resamples=resamples, seed=seed
        )
    except BaseException:
        writer.close(keep=False)
        raise
    writer.close()
    write_json_atomic(output_dir / "metrics.json", report.to_json())
    return report
