"""``hopscore score --judge``: an LLM-judge accuracy beside a benchmark's own metrics.

Works for every benchmark through what the scoring core already knows about an example: its
question, the prediction as text and the gold answers as text. The judge sees each gold example
once (a missing prediction is graded incorrect without a call, like an empty one); the result
is ``judge_accuracy`` overall and per group, the examples where the judge and the benchmark's
exact-match metric disagree, and the judge's rows for audit.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from hopscore.analysis.disagreement_kinds import (
    disagreement_kind,
    kinds_by_frequency,
    order_by_frequency,
)
from hopscore.analysis.judging import AgreementTable
from hopscore.benchmarks.base import Benchmark, E, P
from hopscore.defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.engine import ChatBackend, run_sync
from hopscore.errors import HopscoreError, Location
from hopscore.files.atomic import write_json_atomic
from hopscore.files.digest import file_sha256
from hopscore.files.reruns import REFUSE
from hopscore.inference.agreement import agreement_of
from hopscore.inference.clusters import ClusterSpec
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import ExampleValues
from hopscore.judge.calibration import (
    Calibration,
    CorrectedJudge,
    JudgeIdentity,
    check_bound_to,
    correct_rows,
)
from hopscore.judge.judge_config import JudgeConfig
from hopscore.judge.judge_job import judge_items
from hopscore.judge.judge_summary import JudgeSummary
from hopscore.judge.rows import JudgeItem, item_key, key_of
from hopscore.scores.display import print_table
from hopscore.scores.scoring import (
    ExampleScore,
    ScoreReport,
    ScoresWriter,
    add_summary_notes,
    attach_intervals,
    note_no_overlap,
    score_examples,
)
from hopscore.text.words import counted

METRIC = "judge_accuracy"
#: The benchmark metric the judge is compared with: the first of these that it reports.
MATCH_METRICS = ("em", "accuracy", "label_accuracy", "exact_match")
NO_QUESTION = "(the question is not available)"


@dataclass(frozen=True, slots=True)
class Disagreement:
    id: str
    prediction: str | None
    gold: tuple[str, ...]
    metric: str
    metric_value: float
    judge_correct: bool
    judge_reasoning: str | None

    @property
    def kind(self) -> str:
        """Why they disagree (:mod:`hopscore.analysis.disagreement_kinds`)."""
        return disagreement_kind(self.prediction, self.gold)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "prediction": self.prediction, "gold": list(self.gold),
                "metric": self.metric, "metric_value": self.metric_value,
                "judge_correct": self.judge_correct, "kind": self.kind,
                "judge_reasoning": self.judge_reasoning}


@dataclass(slots=True)
class JudgedReport:
    report: ScoreReport
    summary: JudgeSummary
    match_metric: str
    disagreements: list[Disagreement]
    #: judge vs the match metric: raw agreement and Cohen's kappa, overall and per group
    agreement: AgreementTable | None = None
    #: sha256 of the predictions file the judge graded
    predictions_sha256: str | None = None
    #: the judge's accuracy corrected for its error rates (score --judge-calibration)
    corrected: CorrectedJudge | None = None

    def to_json(self) -> dict[str, Any]:
        """What ``metrics.json`` holds: the report and a ``judge`` block."""
        data = self.report.to_json()
        data["judge"] = {
            "model": self.summary.model, "prompt_sha256": self.summary.prompt_sha256,
            "preset": self.summary.preset, "prompt_source": self.summary.prompt_source,
            "compared_with": self.match_metric, "disagreements": len(self.disagreements),
            "parse_failures": self.summary.parse_failures, "truncated": self.summary.truncated,
            "truncated_unscored": self.summary.truncated_unscored,
            "errors": self.summary.errors, "empty_responses": self.summary.empty_responses,
            "predictions_sha256": self.predictions_sha256,
            "agreement": None if self.agreement is None else self.agreement.to_json(),
            "disagreement_kinds": [
                {"kind": k.kind, "judge_right": k.judge_right, "count": k.count}
                for k in kinds_by_frequency([(d.kind, d.judge_correct)
                                             for d in self.disagreements])],
            "corrected": None if self.corrected is None else self.corrected.to_json(),
        }  # fmt: skip
        return data


def match_metric(metrics: tuple[str, ...] | list[str]) -> str:
    """The exact-match-like metric to compare with; else the first metric (1.0 = a match)."""
    for name in MATCH_METRICS:
        if name in metrics:
            return name
    return metrics[0]


def expected_answer(gold: tuple[str, ...]) -> str:
    """Gold answers as one text for the prompt: the answer, or "any of: a | b" for aliases."""
    answers = [g for g in gold if g.strip()]
    if len(answers) <= 1:
        return answers[0] if answers else ""
    return "any of: " + " | ".join(answers)


def judge_item(score: ExampleScore, question: str, source: str) -> JudgeItem:
    row = {"id": score.id, "question": question or NO_QUESTION,
           "response": score.prediction or "", "correct_answer": expected_answer(score.gold)}
    return JudgeItem(Location(source, key=score.id), row, row["question"], row["response"],
                     row["correct_answer"], 0)


def score_files_with_judge(
    benchmark: Benchmark[E, P],
    gold_path: Path,
    predictions_path: Path,
    output_dir: Path | None,
    config: JudgeConfig,
    *,
    aliases: Path | None = None,
    console: Console | None = None,
    warn: Console | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    intervals: IntervalSpec | None = None,
    rerun: str = REFUSE,
    clusters: ClusterSpec | None = None,
    scored_from: Mapping[str, Any] | None = None,
    backend: ChatBackend | None = None,
    calibration: tuple[Calibration, Path] | None = None,
) -> JudgedReport:
    """Score as ``hopscore score`` does, then judge every example and merge the results.

    With ``output_dir``: metrics.json (with ``judge_accuracy`` and a ``judge`` block),
    scores.jsonl (``judge_accuracy`` per example), judge.jsonl (the judge's rows; a re-run
    resumes from it) and judge_disagreements.jsonl.
    """
    notes = [] if calibration is None else check_bound_to(
        calibration, JudgeIdentity(config.model, config.endpoint(), config.prompt.sha256),
        "score --judge")  # before any request: a calibration of another judge is refused
    examples = benchmark.load_gold(gold_path, aliases=aliases)
    predictions = benchmark.load_predictions(predictions_path)
    questions = {example.id: example.question for example in examples}
    scores: list[ExampleScore] = []
    report = score_examples(benchmark, examples, predictions, scores.append, resamples=0,
                            clusters=clusters)
    note_no_overlap(report, predictions_path)
    items = [judge_item(score, questions.get(score.id, ""), str(gold_path)) for score in scores]
    with tempfile.TemporaryDirectory(prefix="hopscore-judge-") as scratch:
        judge_path = (output_dir or Path(scratch)) / "judge.jsonl"
        summary = run_sync(judge_items(items, judge_path, config, backend=backend,
                                       console=console, warn=warn, rerun=rerun))
        by_key = {key_of(row): row for row in _rows(judge_path)}  # the latest row of each key
    if summary.aborted:
        raise HopscoreError(
            f"the judge stopped early: {summary.aborted}. Fix the judge model, endpoint or key "
            "and re-run; finished verdicts are kept in judge.jsonl when --output-dir is given."
        )
    fingerprint = config.fingerprint(config.endpoint())
    rows = [by_key.get(item_key(item, fingerprint)) for item in items]
    check_bound(scores, rows, judge_path.name)
    metric = match_metric(list(report.metrics))
    disagreements = merge(report, scores, rows, metric)
    add_summary_notes(benchmark, report)
    spec = intervals or IntervalSpec(resamples=resamples, seed=seed,
                                     cluster=None if clusters is None else clusters.name)
    if spec.enabled:
        _attach_intervals(benchmark, report, scores, rows, spec)
    agreement = judge_agreement(report, scores, rows, metric, spec.level)
    if summary.errors:
        report.warnings.append(
            f"the judge failed on {counted(summary.errors, 'example')} (no verdict; counted as "
            "wrong in "
            f"{METRIC}); re-run the same command to retry only them"
        )
    if disagreements:
        report.warnings.append(
            f"the judge and {metric} disagree on {len(disagreements)} of "
            f"{counted(report.n_gold, 'example')}"
            + (" (judge_disagreements.jsonl lists them)" if output_dir else "")
        )
    judged = JudgedReport(report, summary, metric, disagreements, agreement,
                          file_sha256(predictions_path))
    if calibration is not None:
        judged.corrected = correct_rows(rows, calibration[0], spec.level, notes,
                                        ids=[score.id for score in scores])
        report.warnings.extend(notes)
    if output_dir is not None:
        # the gold that made the score directory (hopscore.files.reruns)
        if scored_from is not None:
            report.scored_from = dict(scored_from)
        _write(output_dir, judged, scores, rows)
    return judged



def check_bound(scores: list[ExampleScore], rows: list[dict[str, Any] | None], name: str) -> None:
    """Every verdict used must be of this run's prediction (its resume key says so; this
    checks the rows themselves, so a tampered or mixed file cannot slip in)."""
    differing = [score.id for score, row in zip(scores, rows, strict=True) if row is not None
                 and str(row.get("response") or "").strip() != (score.prediction or "").strip()]
    if differing:
        raise HopscoreError(f"{name}: {len(differing)} judge rows judged another response than "
                            f"the prediction (first: {', '.join(differing[:5])})")


def judge_agreement(report: ScoreReport, scores: list[ExampleScore],
                    rows: list[dict[str, Any] | None], metric: str, level: float
                    ) -> AgreementTable | None:
    """Raw agreement and kappa of the judge's decided verdicts with ``metric``."""
    pairs: list[tuple[bool, bool]] = []
    by_group: dict[tuple[str, str], list[tuple[bool, bool]]] = {}
    undecided = 0
    for score, row in zip(scores, rows, strict=True):
        decided = row is not None and isinstance(row.get("correct"), bool) \
            and not row.get("error") and row.get("parse_ok") is not False
        if not decided:
            undecided += 1
            continue
        assert row is not None
        pair = (bool(row["correct"]), score.metrics.get(metric, 0.0) >= 1.0)
        pairs.append(pair)
        for key, value in score.groups.items():
            by_group.setdefault((key, value), []).append(pair)
    if not pairs:
        return None
    table = AgreementTable(metric, agreement_of(pairs, level), undecided=undecided)
    for name, group in report.groups.items():
        key = report.group_keys.get(name, "")
        found = by_group.get((key, group.value if group.value is not None else name))
        if found:
            table.groups[name] = agreement_of(found, level)
    return table


def _attach_intervals(
    benchmark: Benchmark[E, P], report: ScoreReport, scores: list[ExampleScore],
    rows: list[dict[str, Any] | None], spec: IntervalSpec,
) -> None:
    """Intervals for every metric, judge_accuracy included."""
    names = [name for name in scores[0].metrics if name != METRIC] if scores else []
    values = ExampleValues([*names, METRIC])
    for score, row in zip(scores, rows, strict=True):
        judged = 1.0 if row is not None and row.get("correct") is True else 0.0
        values.add({**score.metrics, METRIC: judged}, score.groups)
        if spec.cluster is not None:
            values.add_cluster(score.cluster)
    attach_intervals(benchmark, report, values, spec)
    report.interval_spec = spec


def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def merge(
    report: ScoreReport, scores: list[ExampleScore], rows: list[dict[str, Any] | None],
    metric: str,
) -> list[Disagreement]:
    """Add judge_accuracy overall and per group; return where judge and ``metric`` disagree."""
    totals: dict[tuple[str, str], list[int]] = {}
    correct_all = 0
    disagreements: list[Disagreement] = []
    for score, row in zip(scores, rows, strict=True):
        correct = row is not None and row.get("correct") is True
        correct_all += correct
        for key, value in score.groups.items():
            pair = totals.setdefault((key, value), [0, 0])
            pair[0] += correct
            pair[1] += 1
        decided = row is not None and isinstance(row.get("correct"), bool)
        matched = score.metrics.get(metric, 0.0) >= 1.0
        if decided and correct != matched:
            disagreements.append(Disagreement(
                score.id, score.prediction, score.gold, metric, score.metrics.get(metric, 0.0),
                correct, row.get("reasoning") if row else None,
            ))
    order = order_by_frequency([(d.kind, d.judge_correct) for d in disagreements])
    disagreements[:] = [disagreements[i] for i in order]  # the most frequent kind first
    report.metrics[METRIC] = correct_all / len(scores) if scores else 0.0
    for name, group in report.groups.items():
        key = report.group_keys.get(name, "")
        value = name[len(key) + 1:] if name.startswith(f"{key}=") else name
        hit = totals.get((key, value))
        if hit:
            group.metrics[METRIC] = hit[0] / hit[1]
    return disagreements


def _write(output_dir: Path, judged: JudgedReport, scores: list[ExampleScore],
           rows: list[dict[str, Any] | None]) -> None:
    writer = ScoresWriter(output_dir / "scores.jsonl")
    try:
        for score, row in zip(scores, rows, strict=True):
            value = 1.0 if row is not None and row.get("correct") is True else 0.0
            writer(replace(score, metrics={**score.metrics, METRIC: value}))
    except BaseException:
        writer.close(keep=False)
        raise
    writer.close()
    write_json_atomic(output_dir / "metrics.json", judged.to_json())
    path = output_dir / "judge_disagreements.jsonl"
    with path.open("w", encoding="utf-8") as handle:
        for item in judged.disagreements:
            handle.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")


def print_disagreements(judged: JudgedReport, console: Console, limit: int = 20) -> None:
    """A table of the first examples where the judge and the match metric disagree."""
    if not judged.disagreements:
        return
    table = Table(
        title=f"judge vs {judged.match_metric}: {len(judged.disagreements)} disagreements"
        + (f" (first {limit})" if len(judged.disagreements) > limit else "")
        + ", the most frequent kind first",
        title_justify="left",
        caption="by kind: " + "; ".join(
            f"{k.label} {k.count}" for k in kinds_by_frequency(
                [(d.kind, d.judge_correct) for d in judged.disagreements])),
        caption_justify="left",
    )
    for column in ("id", "prediction", "gold", judged.match_metric, "judge", "kind"):
        table.add_column(column, overflow="fold")
    for item in judged.disagreements[:limit]:
        table.add_row(item.id, item.prediction or "", " | ".join(item.gold),
                      f"{item.metric_value:g}", "correct" if item.judge_correct else "wrong",
                      item.kind)
    print_table(console, table)
