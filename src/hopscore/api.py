"""hopscore's Python API: the same scoring and comparison as the command line, for notebooks,
scripts and training loops (grading: :mod:`hopscore.api_grading`; the commands that run models:
:mod:`hopscore.api_commands`). Everything here is re-exported by ``hopscore`` itself
(``hopscore.score(...)``); docs/python-api.md lists it. The rest of the package is internal.

>>> import hopscore
>>> files = hopscore.sample_files(SAMPLE)
>>> report = hopscore.score(SAMPLE, files.gold, files.predictions)
>>> report.n_gold, round(report.metrics["em"], 2), report.missing_ids
(5, 0.6, [])

Every function takes plain paths and values and raises :class:`hopscore.HopscoreError` (or
its subclass :class:`hopscore.InputError`, naming the file, line and field) for bad input.

The examples read a benchmark's bundled sample, ``SAMPLE`` (the tests name one whose sample has
five questions; docs/python-api.md shows the same calls on named benchmarks).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from hopscore.errors import HopscoreError
from hopscore.scores.results import ScoreReport

if TYPE_CHECKING:
    from hopscore.analysis.compare_records import PairComparison
    from hopscore.benchmarks.base import Example, Predictions

__all__ = [
    "SampleFiles",
    "benchmark_names",
    "compare",
    "load_gold",
    "load_predictions",
    "sample_files",
    "score",
]

PathLike = str | os.PathLike[str]
#: predictions given in memory: {id: answer}, {id: record} or records with an "id"
InMemory = Mapping[str, Any] | Iterable[Mapping[str, Any]]


class SampleFiles(NamedTuple):
    """The files of a bundled sample: gold, predictions, and the aliases file where the sample's
    manifest names one (None otherwise)."""

    gold: Path
    predictions: Path
    aliases: Path | None


_samples = ExitStack()  # keeps extracted sample files alive (a zip install) until exit


def benchmark_names() -> list[str]:
    """The benchmarks hopscore scores, by the names every function takes.

    >>> SAMPLE in benchmark_names()
    True
    """
    from hopscore import benchmarks

    return benchmarks.names()


def sample_files(benchmark: str) -> SampleFiles:
    """The small invented sample that ships with hopscore for ``benchmark`` (gold and
    predictions in the official formats), for trying the API.

    >>> files = sample_files(SAMPLE)
    >>> files.gold.is_file(), files.predictions.is_file(), files.aliases
    (True, True, None)
    """
    from hopscore.benchmarks.sample_files import require

    sample = require(benchmark)
    gold, predictions, aliases = _samples.enter_context(sample.paths())
    return SampleFiles(gold, predictions, aliases)


def load_gold(benchmark: str, gold: PathLike, *, aliases: PathLike | None = None
              ) -> list[Example]:
    """Read a benchmark's gold file into its typed, frozen examples (``id``, ``question``,
    the gold fields, ``groups()``, ``gold_answers()``).

    ``gold`` is the official file, or a Hugging Face copy (``hf:NAME[:CONFIG][@SPLIT]``, a
    parquet or arrow file, a ``save_to_disk`` folder, a JSON Lines export), as ``--gold``
    takes it (docs/getting-the-data.md).

    >>> examples = load_gold(SAMPLE, sample_files(SAMPLE).gold)
    >>> len(examples), examples[0].id, examples[0].gold_answers()
    (5, '0', ('Jonas Arden',))
    """
    from hopscore import benchmarks
    from hopscore.hub import official_gold

    bench = benchmarks.get(benchmark)
    path = official_gold(bench.name, Path(gold)).path
    return bench.load_gold(path, aliases=None if aliases is None else Path(aliases))


def load_predictions(
    benchmark: str, predictions: PathLike | InMemory, *, harness: str | None = None,
    gold: PathLike | None = None, lm_filter: str | None = None,
) -> Predictions[Any]:
    """Read predictions into a :class:`~hopscore.benchmarks.base.Predictions` (``by_id``: the
    typed prediction of each id; ``warnings``: what the reader noticed).

    ``predictions`` is a file in the benchmark's official format or the universal JSON Lines
    format, or the same in memory: ``{id: answer}``, ``{id: {"answer": ..., "sp": ...}}`` or
    a list of ``{"id": ..., "answer": ...}`` records. ``harness="lm-eval"`` or ``"inspect"``
    reads another harness's output instead, joined to ``gold`` by id, else by question
    (docs/integrations.md).

    >>> predictions = load_predictions(SAMPLE, {"0": "Jonas Arden", "1": "1854"})
    >>> sorted(predictions.by_id), predictions.by_id["1"].answer
    (['0', '1'], '1854')
    """
    from hopscore import benchmarks

    bench = benchmarks.get(benchmark)
    if harness is not None:
        if gold is None:
            raise HopscoreError("harness predictions are joined to the gold: pass gold=")
        from hopscore.harness import harness_predictions

        examples = load_gold(bench.name, gold)
        return harness_predictions(bench, examples, Path(_path(predictions)), harness,
                                   lm_filter)[0]
    with _predictions_file(predictions) as (path, rename):
        return rename.predictions(bench.load_predictions(path))


def score(
    benchmark: str,
    gold: PathLike,
    predictions: PathLike | InMemory,
    *,
    aliases: PathLike | None = None,
    output_dir: PathLike | None = None,
    ci: str = "auto",
    ci_level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    cluster: str | None = None,
    cluster_file: PathLike | None = None,
    harness: str | None = None,
    lm_filter: str | None = None,
) -> ScoreReport:
    """Score predictions against a benchmark's gold, exactly as ``hopscore score`` does.

    Returns the :class:`~hopscore.scores.results.ScoreReport` that ``metrics.json`` holds:
    ``metrics`` (unrounded fractions), ``groups`` (each a ``GroupSummary`` with ``n``,
    ``metrics`` and ``ci``), ``ci`` (an interval per metric: ``low``, ``high``, ``method``,
    ``level``), ``missing_ids``, ``extra_ids`` and ``warnings``; ``to_json()`` gives the file.
    With ``output_dir`` it also writes ``metrics.json`` and ``scores.jsonl`` there.

    ``predictions`` is a file or in memory (see :func:`load_predictions`). A gold example
    without a prediction scores 0 and stays in the denominator; a prediction whose id is not
    in the gold is ignored; both are listed. ``ci``, ``ci_level``, ``resamples``, ``seed``,
    ``cluster`` and ``cluster_file`` are ``--ci`` and friends (docs/statistics.md);
    ``resamples=0`` or ``ci="none"`` skips the intervals.

    >>> files = sample_files(SAMPLE)
    >>> report = score(SAMPLE, files.gold, {"0": "Jonas Arden"}, ci="wilson")
    >>> report.metrics["em"], report.ci["em"].method, len(report.missing_ids)
    (0.2, 'wilson', 4)
    """
    from hopscore import benchmarks
    from hopscore.files.reruns import scored_from_soon
    from hopscore.hub import official_gold
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec
    from hopscore.scores.scoring import score_files

    bench = benchmarks.get(benchmark)
    gold_file = official_gold(bench.name, Path(gold))
    clusters = None
    if cluster is not None or cluster_file is not None:
        clusters = ClusterSpec(field=cluster,
                               file=None if cluster_file is None else Path(cluster_file))
    spec = IntervalSpec(method=ci.lower(), level=ci_level, resamples=resamples, seed=seed,
                        cluster=None if clusters is None else clusters.name)
    reader = None
    if harness is not None:
        from hopscore.harness import predictions_reader

        notes: list[str] = []
        reader = predictions_reader(bench, Path(_path(predictions)), harness, lm_filter,
                                    notes.append)
    with _predictions_file(predictions if harness is None else _path(predictions)) \
            as (path, rename):
        report = score_files(
            bench, gold_file.path, path, None if output_dir is None else Path(output_dir),
            aliases=None if aliases is None else Path(aliases), intervals=spec,
            clusters=clusters, read_predictions=reader, keep_examples=True,
            scored_from=None if output_dir is None else scored_from_soon(
                gold_file.path, gold_file.source, beside=True))
        report.warnings[:0] = list(gold_file.warnings)
        report.warnings = [rename.text(w) for w in report.warnings]
    return report


def compare(
    a: PathLike | ScoreReport,
    b: PathLike | ScoreReport,
    *,
    ci: str = "auto",
    ci_level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    correction: str = "holm",
    alpha: float = 0.05,
    power: float = 0.8,
    cluster: str | None = None,
    cluster_file: PathLike | None = None,
    flip_metric: str | None = None,
) -> PairComparison:
    """Paired comparison of two systems on the same examples, as ``hopscore compare``: for
    every common metric, overall and per group, ``B - A`` with its paired interval, one test
    (McNemar's exact test for 0/1 metrics, a paired permutation test for the others) with its
    p-value adjusted over every row (``correction``: holm, bh or none), and the minimum
    detectable effect (docs/statistics.md).

    ``a`` and ``b`` are :class:`ScoreReport` objects (``score(...)``, with their
    ``examples``), score or run directories (``score(..., output_dir=...)``, ``hopscore run``),
    ``scores.jsonl`` files, or ``hopscore judge`` / ``sql-match`` output.
    ``pair.metrics`` holds one row per metric (``a``, ``b``, ``delta``, ``interval``,
    ``test``, ``flips``, ``significant``); ``pair.groups`` the same per group.

    >>> import tempfile
    >>> files, out = sample_files(SAMPLE), tempfile.mkdtemp()
    >>> _ = score(SAMPLE, files.gold, files.predictions, output_dir=out + "/a")
    >>> _ = score(SAMPLE, files.gold, {"0": "Jonas Arden"}, output_dir=out + "/b")
    >>> pair = compare(out + "/a", out + "/b")
    >>> em = next(row for row in pair.metrics if row.metric == "em")
    >>> pair.n, em.a, em.b, em.flips.right_to_wrong, em.significant
    (5, 0.6, 0.2, 2, False)
    >>> same = compare(score(SAMPLE, files.gold, files.predictions),
    ...                score(SAMPLE, files.gold, {"0": "Jonas Arden"}))
    >>> next(row.delta for row in same.metrics if row.metric == "em") == em.delta
    True
    """
    from hopscore.analysis.compare import compare_to_baseline
    from hopscore.analysis.compare_records import CompareOptions
    from hopscore.analysis.scored import load_many
    from hopscore.inference.clusters import ClusterSpec

    clusters = None
    if cluster is not None or cluster_file is not None:
        clusters = ClusterSpec(field=cluster,
                               file=None if cluster_file is None else Path(cluster_file))
    options = CompareOptions(ci=ci.lower(), level=ci_level, resamples=resamples, seed=seed,
                             correction=correction.lower(), alpha=alpha, power=power,
                             clusters=clusters, flip_metric=flip_metric)
    with tempfile.TemporaryDirectory(prefix="hopscore-compare-") as folder:
        paths = [_report_dir(value, Path(folder) / name) for value, name in ((a, "a"), (b, "b"))]
        return compare_to_baseline(load_many(paths), 0, options)[0]


# --- helpers -------------------------------------------------------------------------------


def _report_dir(value: PathLike | ScoreReport, folder: Path) -> Path:
    """A path to compare: the one given, or a score directory written for a report."""
    if not isinstance(value, ScoreReport):
        return Path(value)
    if not value.examples:
        raise HopscoreError("this ScoreReport has no per-example scores (examples) to pair: "
                            "pass the one score() returns, or its output directory")
    from hopscore.files.atomic import write_json_atomic
    from hopscore.files.io import json_line

    folder.mkdir(parents=True)
    write_json_atomic(folder / "metrics.json", value.to_json())
    (folder / "scores.jsonl").write_text(
        "".join(json_line(e.to_json()) for e in value.examples), encoding="utf-8")
    return folder


def _path(value: Any) -> PathLike:
    if not isinstance(value, (str, os.PathLike)):
        raise HopscoreError("harness output is read from a file: pass its path")
    return value


def plain_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row given in memory as a dict (an error for anything but a mapping)."""
    if not isinstance(row, Mapping):
        raise HopscoreError(f"each row must be a mapping (a dict), got {type(row).__name__}")
    return dict(row)


class _Rename:
    """Says ``predictions[3]`` where a message names the temporary file of in-memory
    predictions."""

    def __init__(self, path: Path | None) -> None:
        self.pattern = None if path is None else re.compile(re.escape(str(path)) + r"(?::(\d+))?")

    def text(self, message: str) -> str:
        if self.pattern is None:
            return message

        def replace(match: re.Match[str]) -> str:
            line = match.group(1)
            return "predictions" if line is None else f"predictions[{int(line) - 1}]"

        return self.pattern.sub(replace, message)

    def predictions(self, predictions: Predictions[Any]) -> Predictions[Any]:
        predictions.warnings = [self.text(w) for w in predictions.warnings]
        if self.pattern is not None:
            predictions.source = "predictions"
        return predictions


class _predictions_file:
    """The path of the predictions: the file given, or a temporary universal JSON Lines file
    holding the in-memory ones (errors then name ``predictions[i]``)."""

    def __init__(self, predictions: PathLike | InMemory) -> None:
        self.given = predictions
        self.folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> tuple[Path, _Rename]:
        if isinstance(self.given, (str, os.PathLike)):
            return Path(self.given), _Rename(None)
        from hopscore.files.io import json_line

        self.folder = tempfile.TemporaryDirectory(prefix="hopscore-")
        path = Path(self.folder.name) / "predictions.jsonl"
        self.rename = _Rename(path)
        given = self.given
        if isinstance(given, Mapping):
            records: Iterable[Mapping[str, Any]] = (
                {"id": key, **value} if isinstance(value, Mapping) else {"id": key, "answer": value}
                for key, value in given.items())
        else:
            records = given
        with path.open("w", encoding="utf-8") as out:
            for record in records:
                out.write(json_line(plain_row(record)))
        return path, self.rename

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        if self.folder is not None:
            self.folder.cleanup()
            if isinstance(error, HopscoreError):
                error.args = (self.rename.text(str(error)),)
