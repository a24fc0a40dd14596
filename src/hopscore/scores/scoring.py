"""Score a benchmark: join gold and predictions, apply the id policy, aggregate, write results.

The id policy is the same for every benchmark, whatever its official script did:

* a gold id with no prediction scores 0, stays in the denominator and is listed in ``missing_ids``;
* a predicted id that is not in the gold is listed in ``extra_ids`` and ignored.

Scores are streamed: each example's scores go to ``on_score`` as soon as they exist, and only the
running sums are kept, so a million-example file needs little memory. For the confidence
intervals (:mod:`hopscore.inference.intervals`, filled in by :func:`attach_intervals`) the
per-example metric values are also kept (:mod:`hopscore.inference.values`), as flat typed
arrays (8 bytes per value), not as Python objects.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from hopscore.benchmarks.base import Benchmark, E, P, Predictions
from hopscore.defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.errors import HopscoreError
from hopscore.files.atomic import temp_beside, write_json_atomic
from hopscore.files.io import bulk_load, json_bytes

# the result records live in hopscore.scores.results (below the intervals); imported from here too
from hopscore.scores.results import ExampleScore as ExampleScore
from hopscore.scores.results import GroupSummary as GroupSummary
from hopscore.scores.results import ScoreReport as ScoreReport
from hopscore.scores.results import score_row
from hopscore.scores.summaries import Counts, SetKey, column_stats, fill_groups
from hopscore.scores.summaries import attach_intervals as attach_intervals
from hopscore.scores.summaries import custom_finalize as custom_finalize
from hopscore.text.words import agree, counted

#: encodes a line of scores.jsonl (:func:`json_bytes`'s bytes, without its Python call)
_LINE = msgspec.json.Encoder()

if TYPE_CHECKING:
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec


def score_examples(
    benchmark: Benchmark[E, P],
    examples: Iterable[E],
    predictions: Predictions[P],
    on_score: Callable[[ExampleScore], None] | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    intervals: IntervalSpec | None = None,
    clusters: ClusterSpec | None = None,
) -> ScoreReport:
    """Score every gold example (in gold order) and aggregate overall and per group.

    ``intervals`` (default: Wilson / BCa at 95%, ``resamples`` and ``seed`` for the methods
    that resample; ``resamples=0`` turns them off) gives every metric a confidence interval;
    ``clusters`` makes them cluster-aware and records each example's cluster.
    """
    from hopscore.inference.spec import IntervalSpec
    from hopscore.inference.values import ExampleValues

    spec = intervals or IntervalSpec(resamples=resamples, seed=seed,
                                     cluster=None if clusters is None else clusters.name)
    mapping = None
    if clusters is not None:
        from hopscore.inference.clusters import cluster_of

        mapping = clusters.mapping()
    names = tuple(benchmark.active_metrics(predictions))
    kept = ExampleValues(names)
    row_of = kept.row_of  # the values of ``names`` from a metrics dict, as one tuple
    add_row = kept.add_row
    missing: list[str] = []
    gold_ids: set[str] = set()
    by_id = predictions.by_id
    by_position = predictions.by_position
    stream = predictions.stream
    take = None if stream is None else stream.take
    noting = type(benchmark).notes is not Benchmark.notes
    noted: dict[str, int] = {}
    figuring = type(benchmark).run_figures is not Benchmark.run_figures
    seen: tuple[list[E], list[P | None]] = ([], [])
    # a scores.jsonl writer takes the line's dict without the ExampleScore record
    write_row = getattr(on_score, "write_row", None)
    score, is_missing_of = benchmark.score, benchmark.is_missing
    paused = PausedCollector()
    try:
        for index, example in enumerate(examples):
            if not index & 0xFFFF:
                paused.tick()
            key = str(index) if by_position else example.id
            if take is None:
                gold_ids.add(key)
                prediction = by_id.get(key)
            else:  # each gold id once: a repeated one is an error of the gold reader
                prediction = take(key)
            values = score(example, prediction)
            if figuring:
                seen[0].append(example)
                seen[1].append(prediction)
            if noting:
                for note in benchmark.notes(values):
                    noted[note] = noted.get(note, 0) + 1
            is_missing = is_missing_of(example, prediction)
            if is_missing:
                missing.append(example.id)
            labels = example.groups()
            row = row_of(values)
            add_row(row, labels)
            cluster = None
            if clusters is not None:
                cluster = cluster_of(example, clusters, mapping)
                kept.add_cluster(cluster)
            if write_row is not None:
                # the benchmark's own dict when it holds just these metrics, in this order
                metrics = values if tuple(values) == names else dict(zip(names, row, strict=True))
                write_row(score_row(example.id, labels, metrics,
                                    is_missing,
                                    None if prediction is None else prediction.answer_text(),
                                    example.gold_answers(), cluster))
            elif on_score is not None:
                on_score(
                    ExampleScore(
                        id=example.id,
                        groups=labels,
                        metrics={name: values[name] for name in names},
                        missing=is_missing,
                        prediction=None if prediction is None else prediction.answer_text(),
                        gold=example.gold_answers(),
                        cluster=cluster,
                    )
                )
    finally:
        paused.end()
    if kept.n == 0:
        raise HopscoreError("the gold file holds no examples")
    if clusters is not None and kept.unclustered == kept.n:
        raise HopscoreError(
            f"no example has a {clusters.name!r} cluster: --cluster takes a group key or a field "
            "of the gold records (one this gold file holds: a benchmark's gold formats may "
            "differ in the fields they keep); or map ids with --cluster-file")
    extra = [pid for pid in by_id if pid not in gold_ids] if stream is None else stream.unmatched()
    # each column read once for its sum and, for the intervals, its distinct values
    count = [True] * len(names) if spec.enabled and clusters is None else None
    sums, overall = column_stats(kept, None, count, benchmark.adds_one_by_one)
    plain: dict[tuple[str, str] | None, dict[str, float]] = {
        None: {name: sums[j] / kept.n for j, name in enumerate(names)}}
    counts: dict[SetKey, Counts] | None = None if count is None else {None: overall}
    report = ScoreReport(
        benchmark=benchmark.name,
        n_gold=kept.n,
        n_predictions=len(by_id) if stream is None else len(stream),
        missing_ids=missing,
        extra_ids=extra,
        metrics=benchmark.finalize(dict(plain[None])),
        groups={},
        warnings=list(predictions.warnings),
    )
    report.notes = [f"{benchmark.note_texts[note]} ({count} of {counted(kept.n, 'example')}; "
                    "docs/scoring.md)" for note, count in noted.items()]
    add_summary_notes(benchmark, report)
    if figuring:
        add_run_figures(benchmark, report, *seen)
    group_rows = kept.group_rows()
    fill_groups(benchmark, report, kept, group_rows, plain, counts)
    if spec.enabled:
        attach_intervals(benchmark, report, kept, spec, group_rows, plain, counts)
        report.interval_spec = spec
    if missing:
        report.warnings.append(
            f"{len(missing)} of {counted(kept.n, 'gold example')} "
            f"{agree(len(missing), 'has', 'have')} no prediction; "
            f"{agree(len(missing), 'it scores', 'they score')} 0 and "
            f"{agree(len(missing), 'stays', 'stay')} in the denominator "
            f"(first: {', '.join(missing[:5])})"
        )
    if extra and by_position:
        report.warnings.append(
            f"{predictions.source} has no ids and is matched to the gold by position; its "
            f"{counted(len(extra), 'record')} after the gold's {kept.n} "
            f"{agree(len(extra), 'was', 'were')} ignored"
        )
        report.extra_ids = [f"position {pid}" for pid in extra]
    elif extra:
        report.warnings.append(
            f"{counted(len(extra), 'predicted id')} {agree(len(extra), 'is', 'are')} not in the "
            f"gold and {agree(len(extra), 'was', 'were')} ignored (first: {', '.join(extra[:5])})"
        )
    return report


def add_summary_notes(benchmark: Benchmark[E, P], report: ScoreReport) -> None:
    """The footnotes the overall metrics call for (:meth:`Benchmark.summary_notes`), each
    once: called again once a judge has added its accuracy."""
    for note in benchmark.summary_notes(report.metrics):
        text = benchmark.note_texts[note]
        if text not in report.notes:
            report.notes.append(text)


def add_run_figures(benchmark: Benchmark[E, P], report: ScoreReport, examples: list[E],
                    predictions: list[P | None]) -> None:
    """The benchmark's run figures (:meth:`Benchmark.run_figures`) into the report, each with
    a note line saying what it is."""
    report.figures = dict(benchmark.run_figures(examples, predictions))
    for name, value in report.figures.items():
        shown = "undefined" if value is None else f"{value:.2f}"
        text = benchmark.figure_texts.get(name)
        report.notes.append(f"{name} = {shown}" + (f": {text}" if text else ""))


class PausedCollector:
    """The cyclic garbage collector paused while examples are scored: the predictions' index
    and the kept values are millions of objects that each collection of the oldest generation
    walks, and scoring makes no reference cycles, so collections only cost time (a fifth of the
    scoring time). :meth:`tick` (every 65,536 examples) collects the young generations, so
    a cycle made now and then is still freed; :meth:`end` restarts the collector. Nothing is
    done when the collector was already off."""

    def __init__(self) -> None:
        self.active = gc.isenabled()
        if self.active:
            gc.disable()

    def tick(self) -> None:
        if self.active:
            gc.collect(1)

    def end(self) -> None:
        if self.active:
            self.active = False
            gc.enable()


class ScoresWriter:
    """Streams :class:`ExampleScore` lines to ``scores.jsonl``; renamed into place on close.

    Lines are written in blocks of :attr:`BLOCK` (the file grows as scoring goes); the scorer
    hands it each line's dict (:meth:`write_row`), other callers the record (``writer(score)``).
    """

    BLOCK = 1024

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, self._tmp = temp_beside(path)
        self._handle = os.fdopen(fd, "wb")
        self._lines: list[bytes] = []

    def __call__(self, score: ExampleScore) -> None:
        self.write_row(score.to_json())

    def write_row(self, row: dict[str, Any]) -> None:
        """One line, from :meth:`ExampleScore.to_json`'s dict, encoded at once (while the dict
        is fresh in the cache: a block of dicts encoded later is slower)."""
        try:
            line = _LINE.encode(row)
        except (TypeError, UnicodeEncodeError):  # json_bytes falls back to the standard library
            line = json_bytes(row)
        lines = self._lines
        lines.append(line)
        if len(lines) >= self.BLOCK:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            self._lines.append(b"")
            self._handle.write(b"\n".join(self._lines))
            self._lines = []

    def close(self, *, keep: bool = True) -> None:
        """Put the file in place (``keep``) or remove it; a failed write (a full disk when the
        last lines are flushed) leaves no temporary file behind."""
        try:
            if keep:
                self.flush()
            self._handle.close()
            if keep:
                os.replace(self._tmp, self.path)
        finally:
            Path(self._tmp).unlink(missing_ok=True)


def note_no_overlap(report: ScoreReport, predictions_path: Path) -> bool:
    """Add a warning when no prediction matches a gold id; return whether none does.

    Every example then scores 0: almost always the wrong predictions file for this gold file
    (or ids of another form), which the scoring commands report with exit status 1.
    """
    if report.matched > 0:
        return False
    if report.n_predictions == 0:
        report.warnings.insert(0, f"{predictions_path} holds no predictions: every one of the "
                               f"{report.n_gold} gold examples scores 0")
    else:
        first = ", ".join(report.extra_ids[:3])
        report.warnings.insert(0, (
            f"none of the {report.n_predictions} predicted ids in {predictions_path} is a gold "
            f"id (first: {first}): every one of the {report.n_gold} gold examples scores 0; "
            "is this the predictions file of this gold file?"))
    return True


def _gold_examples(benchmark: Benchmark[E, P], gold_path: Path,
                   aliases: Path | None) -> Iterable[E]:
    """The gold examples for scoring, remembered between runs when the benchmark allows it
    (:attr:`~hopscore.benchmarks.base.Loading.gold_examples_kept`) and no aliases join them
    (:mod:`hopscore.files.goldcache`)."""
    if aliases is not None or not benchmark.gold_examples_kept:
        return benchmark.iter_gold(gold_path, aliases=aliases)
    from hopscore.files.goldcache import remembered_examples

    return remembered_examples(benchmark.name, gold_path,
                               lambda: benchmark.iter_gold(gold_path, aliases=None))


def score_files(
    benchmark: Benchmark[E, P],
    gold_path: Path,
    predictions_path: Path,
    output_dir: Path | None,
    *,
    aliases: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    intervals: IntervalSpec | None = None,
    clusters: ClusterSpec | None = None,
    read_predictions: Callable[[Sequence[E]], Predictions[P]] | None = None,
    scored_from: Callable[[], Mapping[str, Any]] | None = None,
    keep_examples: bool = False,
) -> ScoreReport:
    """Load and score; with ``output_dir``, write ``metrics.json`` and ``scores.jsonl``
    (``scored_from``: a call that gives the gold that made them when scoring is done,
    :func:`hopscore.files.reruns.scored_from_soon`, recorded in ``metrics.json`` and the
    report);
    ``keep_examples``: also keep each example's scores in ``report.examples`` (the Python
    API).

    ``read_predictions``, when given, makes the predictions from the gold examples instead of
    ``benchmark.load_predictions(predictions_path)`` (another harness's output, joined to the
    gold: :mod:`hopscore.harness`).
    """
    with bulk_load():
        if read_predictions is None:
            examples: Iterable[E] = _gold_examples(benchmark, gold_path, aliases)
            predictions = benchmark.predictions_for_scoring(predictions_path)
        else:  # replies are read against whole examples (citations name the context's titles)
            examples = benchmark.load_gold(gold_path, aliases=aliases)
            predictions = read_predictions(examples)
    options: dict[str, Any] = {"resamples": resamples, "seed": seed, "intervals": intervals,
                               "clusters": clusters}
    kept: list[ExampleScore] = []
    if output_dir is None:
        report = score_examples(benchmark, examples, predictions,
                                kept.append if keep_examples else None, **options)
        report.examples = kept
        note_no_overlap(report, predictions_path)
        return report
    writer = ScoresWriter(output_dir / "scores.jsonl")

    def both(score: ExampleScore) -> None:
        writer(score)
        kept.append(score)

    try:
        report = score_examples(benchmark, examples, predictions,
                                both if keep_examples else writer, **options)
        # the gold's digest (hashed beside the reading) before scores.jsonl is put in place,
        # so that metrics.json follows it at once
        if scored_from is not None:
            report.scored_from = dict(scored_from())
    except BaseException:
        writer.close(keep=False)
        raise
    report.examples = kept
    note_no_overlap(report, predictions_path)
    writer.close()
    write_json_atomic(output_dir / "metrics.json", report.to_json())
    return report
