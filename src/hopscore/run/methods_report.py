"""SA, SC, oracle and MCR side by side, from one chain-strategy run.

For every method a run's rows carry (:func:`hopscore.run.strategy.method_names`),
:func:`write_methods` writes ``methods/<method>/metrics.json`` + ``scores.jsonl`` exactly as
``hopscore score`` would for that method's answers (under ``--protocol mcr`` with MCR's
``mcr_all`` / ``answered`` / ``mcr_answered`` beside the benchmark's metrics), so ``hopscore
compare RUN/methods/sa RUN/methods/mcr`` and ``hopscore report`` work on them, and returns the
``methods`` block of the run's metrics.json:

* per method: ``n``, ``answered`` (a question counts as answered when the method gave an
  answer that was scored: no abstention, some chain answered), ``score_all`` (the mean over all
  questions, unanswered ones scoring 0: MCR's number for SA, SC and the oracle) and
  ``score_answered`` (the mean over answered questions: MCR's number for MCR, whose pandas mean
  skips abstentions), each with its bootstrap interval;
* ``pairs``: SC vs SA, MCR vs SA and MCR vs SC on the same questions, one row each of
  :func:`hopscore.analysis.compare.compare_pair` (as ``hopscore compare`` computes it: the paired
  interval of the difference of ``score_all``, McNemar's exact test for 0/1 scores, a sign-flip
  permutation test otherwise), the three p-values Holm-adjusted together.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hopscore.benchmarks.base import Benchmark, ModelAnswer, Predictions
from hopscore.files.atomic import write_json_atomic
from hopscore.run.methods import TITLES
from hopscore.run.strategy import answer_metric, method_names
from hopscore.scores.scoring import ScoresWriter, score_examples

if TYPE_CHECKING:
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec

METHODS_DIR = "methods"
#: The comparisons of MCR's table, (A, B): B - A.
PAIRS = (("sa", "sc"), ("sa", "mcr"), ("sc", "mcr"))


def _interval(values: np.ndarray, spec: IntervalSpec) -> dict[str, Any] | None:
    """The interval of a mean, by the run's --ci method and level (as metrics.json's)."""
    from hopscore.inference.intervals import set_intervals
    from hopscore.inference.values import MatrixValues

    if values.size == 0 or not spec.enabled:
        return None
    interval = set_intervals(MatrixValues(values[:, None], ["score"]), spec).get("score")
    return None if interval is None else interval.to_json()


def write_methods(prepared: Any, rows: dict[str, dict[str, Any]], output_dir: Path,
                  intervals: IntervalSpec, clusters: ClusterSpec | None) -> dict[str, Any]:
    """Write ``output_dir/methods/`` and return the ``methods`` block; the strategy and the
    protocol are the plan's (``prepared.plan``), the intervals those of the run's scores."""
    bench: Benchmark[Any, Any] = prepared.benchmark
    strategy, protocol = prepared.plan.strategy, prepared.plan.protocol
    names = method_names(strategy)
    block: dict[str, Any] = {"strategy": strategy,
                             "metric": answer_metric(bench, protocol),
                             "protocol": protocol,
                             "chains": prepared.plan.chains, "methods": {}}
    rounds = [len(row.get("rounds") or ()) for row in rows.values() if row.get("error") is None]
    block["retried"] = sum(1 for r in rounds if r > 1)
    root = output_dir / METHODS_DIR
    for name in names:
        block["methods"][name] = _write_one(prepared, rows, name, root / name, output_dir,
                                            intervals, clusters)
    metric = "mcr_all" if protocol == "mcr" else block["metric"]
    block["pairs"] = _pairs(root, [n for n in names if n != "oracle"], metric, intervals)
    return block


def _write_one(prepared: Any, rows: dict[str, dict[str, Any]], name: str, out: Path,
               output_dir: Path, intervals: IntervalSpec,
               clusters: ClusterSpec | None) -> dict[str, Any]:
    bench: Benchmark[Any, Any] = prepared.benchmark
    mcr = prepared.plan.protocol == "mcr"
    by_id: dict[str, Any] = {}
    values: list[float] = []
    answered: list[bool] = []
    for example in prepared.examples:
        row = rows.get(example.id) or {}
        method = (row.get("methods") or {}).get(name) or {}
        score = method.get("score") if method.get("answered") else None
        values.append(float(score) if score is not None else 0.0)
        answered.append(score is not None)
        if method.get("answer") is None or (method.get("abstained") and name == "mcr"):
            if mcr:
                from hopscore.run.mcr import McrPrediction

                by_id[example.id] = McrPrediction(id=example.id, inner=None, mcr=None)
            continue
        evidence = row.get("evidence_ids")
        prediction = bench.make_prediction(example, ModelAnswer(
            method["answer"], row.get("raw_output") or "", None,
            None if evidence is None else tuple(evidence)))
        if mcr:
            from hopscore.run.mcr import McrPrediction

            prediction = McrPrediction(id=example.id, inner=prediction,
                                       mcr=None if score is None else float(score))
        by_id[example.id] = prediction
    scorer: Benchmark[Any, Any] = bench
    if mcr:
        from hopscore.run.mcr import McrScoring

        scorer = McrScoring(bench)
    out.mkdir(parents=True, exist_ok=True)
    writer = ScoresWriter(out / "scores.jsonl")
    try:
        report = score_examples(scorer, prepared.examples,
                                Predictions(by_id, f"{output_dir} ({name})", "run"),
                                writer, intervals=intervals, clusters=clusters)
    except BaseException:
        writer.close(keep=False)
        raise
    writer.close()
    metrics = report.to_json()
    metrics["method"] = {"name": name, "title": TITLES[name], "run": str(output_dir)}
    write_json_atomic(out / "metrics.json", metrics)
    array = np.array(values, dtype=np.float64)
    mask = np.array(answered, dtype=bool)
    n_answered = int(mask.sum())
    return {
        "title": TITLES[name], "n": len(values), "answered": n_answered,
        "score_all": float(array.mean()) if values else None,
        "score_answered": float(array[mask].mean()) if n_answered else None,
        "ci_all": _interval(array, intervals),
        "ci_answered": _interval(array[mask], intervals),
        "dir": str(Path(METHODS_DIR) / name),
    }


def _pairs(root: Path, names: list[str], metric: str,
           intervals: IntervalSpec) -> list[dict[str, Any]]:
    """SC vs SA, MCR vs SA, MCR vs SC on ``metric``, by ``hopscore compare``'s row machinery
    (its interval and test per row); the three p-values are adjusted together (Holm)."""
    from hopscore.analysis.compare import compare_pair
    from hopscore.analysis.compare_records import CompareOptions
    from hopscore.analysis.scored import load_scored
    from hopscore.inference.multiplicity import adjust
    from hopscore.inference.paired import TestResult

    ci = intervals.method
    options = CompareOptions(ci="auto" if ci == "none" else ci, level=intervals.level,
                             resamples=max(intervals.resamples, 100))
    rows: list[tuple[str, str, Any]] = []
    for a, b in PAIRS:
        if a not in names or b not in names:
            continue
        comparison = compare_pair(load_scored(root / a, TITLES[a]),
                                  load_scored(root / b, TITLES[b]), options)
        row = comparison.row(metric)
        if row is not None:
            rows.append((a, b, row))
    tested = [row for _, _, row in rows if row.test is not None]
    for row, p in zip(tested, adjust([row.test.p for row in tested], options.correction),
                      strict=True):
        row.test = TestResult(row.test.name, row.test.p, p, row.test.permutations)
        row.significant = p < options.alpha
    return [{**row.to_json(), "a": a, "b": b, "score_a": row.a, "score_b": row.b}
            for a, b, row in rows]
