"""The end of an agent run: submission files, metrics.json / scores.jsonl, counts, config.json."""

from __future__ import annotations

import platform
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hopscore.agent.benchmark import agent_benchmark, agent_key
from hopscore.agent.grade import GRADES, GradeSummary
from hopscore.benchmarks.agent_tasks import FAMILIES, HdrTask, family_counts, tasks_sha256
from hopscore.engine.failures import rerun_advice, tally
from hopscore.engine.ledger import Tally, row_usage
from hopscore.engine.ledger import to_json as ledger_json
from hopscore.engine.ledger import total as ledger_total
from hopscore.files.atomic import write_json_atomic, write_jsonl_atomic
from hopscore.inference.spec import IntervalSpec
from hopscore.run.finish import versions
from hopscore.scores.scoring import ScoreReport, ScoresWriter, score_examples
from hopscore.sql.sandbox import sqlite_version
from hopscore.text.words import counted
from hopscore.version import __version__

if TYPE_CHECKING:
    from hopscore.agent.prepared import PreparedAgentRun
    from hopscore.engine import BatchOutcome, EngineStats

PREDICTIONS = "predictions.jsonl"
KeyOf = Callable[["PreparedAgentRun", HdrTask, int], str]


def predictions_name(attempt: int) -> str:
    return PREDICTIONS if attempt == 0 else f"predictions.attempt-{attempt}.jsonl"


def write_predictions(prepared: PreparedAgentRun, rows: dict[str, dict[str, Any]],
                      key: KeyOf) -> None:
    """The submission file of each attempt: answered tasks only, in task order."""
    for attempt in range(prepared.settings.repeats):
        lines = []
        for task in prepared.tasks:
            row = rows.get(key(prepared, task, attempt))
            answer = None if row is None or cut_unscored(prepared, row) else \
                row.get("final_answer")
            if isinstance(answer, str) and answer.strip():
                lines.append({"instance_id": task.id, "final_answer": answer})
        write_jsonl_atomic(prepared.settings.output_dir / predictions_name(attempt), lines)


def cut_unscored(prepared: PreparedAgentRun, row: dict[str, Any]) -> bool:
    """An attempt with a reply cut at max_tokens, under --on-truncation error: not graded."""
    return prepared.settings.on_truncation == "error" and bool(row.get("truncated"))


def truncation_warning(summary: dict[str, Any], max_tokens: int | None) -> str | None:
    """The warning of a run whose model replies were cut at the completion budget."""
    count = summary.get("truncated") or 0
    if not count:
        return None
    budget = f"--max-tokens {max_tokens}" if max_tokens else "the endpoint's completion limit"
    handled = ("not graded (--on-truncation error; they count as failures)"
               if summary.get("truncated_unscored") else
               "graded as they are (--on-truncation score)")
    return (f"{counted(count, 'attempt')} had model replies cut at {budget} (finish_reason "
            f"length; {summary.get('truncated_replies', 0)} replies): {handled}; raise "
            "--max-tokens to let them finish")


def attempt_summary(prepared: PreparedAgentRun, rows: dict[str, dict[str, Any]], key: KeyOf
                    ) -> dict[str, Any]:
    """Counts over the attempts: statuses, turns, tokens, tool calls per tool."""
    statuses: Counter[str] = Counter()
    tools: dict[str, dict[str, float]] = {}
    turns = prompt = completion = calls = errors = 0
    done = truncated = truncated_replies = 0
    failed: list[dict[str, Any]] = []
    usage: list[dict[str, Tally]] = []
    for task in prepared.tasks:
        for attempt in range(prepared.settings.repeats):
            row = rows.get(key(prepared, task, attempt))
            if row is None:
                statuses["not_run"] += 1
                continue
            statuses[str(row.get("status"))] += 1
            if row.get("status") == "model_error" and isinstance(row.get("error"), dict):
                failed.append(row["error"])
            done += 1
            usage.append(row_usage(row))
            truncated += bool(row.get("truncated"))
            truncated_replies += len(row.get("truncated_turns") or ())
            turns += int(row.get("turns") or 0)
            prompt += int(row.get("prompt_tokens") or 0)
            completion += int(row.get("completion_tokens") or 0)
            for call in row.get("tool_calls") or []:
                entry = tools.setdefault(str(call.get("name")), {
                    "calls": 0, "errors": 0, "latency_s": 0.0, "result_chars": 0})
                entry["calls"] += 1
                entry["errors"] += bool(call.get("error"))
                entry["latency_s"] += float(call.get("latency_s") or 0.0)
                entry["result_chars"] += int(call.get("result_chars") or 0)
                calls += 1
                errors += bool(call.get("error"))
    per_tool = {name: {"calls": int(e["calls"]), "errors": int(e["errors"]),
                       "mean_latency_s": round(e["latency_s"] / e["calls"], 4),
                       "mean_result_chars": round(e["result_chars"] / e["calls"], 1)}
                for name, e in sorted(tools.items())}
    return {
        "tasks": len(prepared.tasks), "repeats": prepared.settings.repeats,
        "attempts": len(prepared.tasks) * prepared.settings.repeats,
        "families": family_counts(prepared.tasks), "statuses": dict(statuses),
        "model_errors": statuses["model_error"], "not_run": statuses["not_run"],
        "failures": tally(failed),
        "mean_turns": round(turns / done, 2) if done else None,
        "prompt_tokens": prompt, "completion_tokens": completion,
        "tool_calls": calls, "tool_errors": errors, "tools": per_tool,
        "truncated": truncated, "truncated_replies": truncated_replies,
        "truncated_unscored": truncated if prepared.settings.on_truncation == "error" else 0,
        "on_truncation": prepared.settings.on_truncation,
        "usage": ledger_json(ledger_total(usage)),
    }


def finish_metrics(prepared: PreparedAgentRun, rows: dict[str, dict[str, Any]],
                   grades: GradeSummary,
                   key: KeyOf) -> tuple[ScoreReport, dict[str, Any], dict[str, Any]]:
    """Score grades.jsonl over the tasks; write scores.jsonl and metrics.json."""
    bench = agent_benchmark()
    out = prepared.settings.output_dir
    examples = [bench.task_example(t) for t in prepared.tasks]
    predictions = bench.load_predictions(out / GRADES)
    writer = ScoresWriter(out / "scores.jsonl")
    try:
        settings = prepared.settings
        report = score_examples(bench, examples, predictions, writer, intervals=IntervalSpec(
            method=settings.ci, level=settings.ci_level, resamples=settings.resamples))
    except BaseException:
        writer.close(keep=False)
        raise
    writer.close()
    summary = attempt_summary(prepared, rows, key)
    summary["grades"] = grades.to_json()
    # attempts without a verdict: model errors and attempts not run (status not_graded) and
    # grading errors
    summary["problems"] = grades.problems
    if summary["problems"]:
        report.warnings.append(
            f"{summary['problems']} attempts have no verdict (model errors, attempts not run, "
            f"grading errors); they count as failures here; {rerun_advice(summary['failures'])}")
    cut = truncation_warning(summary, prepared.settings.max_tokens)
    if cut is not None:
        report.warnings.append(cut)
    if grades.statuses.get("gold_error"):
        report.warnings.append(f"{grades.statuses['gold_error']} S2SQL attempts hit a gold "
                               "failure (gold SQL error or database missing); see sql_match.jsonl")
    metrics = report.to_json()
    k = prepared.settings.repeats
    summary["k"] = k
    summary["overall"] = {"avg_at_k": report.metrics.get("accuracy"),
                          "pass_at_k": report.metrics.get("pass_at_k", report.metrics.get(
                              "accuracy"))}
    summary["by_family"] = {
        family.label: {"n": group.n, "avg_at_k": group.metrics.get("accuracy"),
                       "pass_at_k": group.metrics.get("pass_at_k", group.metrics.get("accuracy"))}
        for family in FAMILIES if (group := report.groups.get(family.label)) is not None}
    metrics[agent_key()] = summary
    write_json_atomic(out / "metrics.json", metrics)
    return report, metrics, summary


def write_config(prepared: PreparedAgentRun, *, status: str,
                 rows: dict[str, dict[str, Any]] | None = None,
                 outcome: BatchOutcome | None = None, stats: EngineStats | None = None,
                 grades: GradeSummary | None = None) -> dict[str, Any]:
    """config.json: :func:`config_record` with the counts; returns the attempts' summary."""
    from hopscore.agent.prepared import attempt_key

    settings = prepared.settings
    summary = attempt_summary(prepared, rows, attempt_key) if rows is not None else {}
    config = config_record(prepared, status)
    if summary:
        config["summary"] = summary
    if grades is not None:
        config["grades"] = grades.to_json()
    if outcome is not None:
        config["batch"] = outcome.to_json()
    if stats is not None:
        config["requests"] = stats.to_json()
    write_json_atomic(settings.output_dir / "config.json", config)
    return summary


def config_record(prepared: PreparedAgentRun, status: str) -> dict[str, Any]:
    """config.json without the counts: every setting, hashes, versions and the status."""
    from hopscore.agent.loop import SYSTEM_PROMPT, prompt_sha256
    from hopscore.agent.tools import SCHEMAS, openai_tools

    settings = prepared.settings
    overlay = prepared.overlay
    config: dict[str, Any] = {
        "hopscore_version": __version__, "benchmark": agent_benchmark().name, "status": status,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command": sys.argv if sys.argv and sys.argv[0] else None,
        "tasks": {"path": str(settings.tasks), "overlay": None if overlay is None else {
            "path": str(settings.overlay), "overrides": overlay.overrides},
            "count": len(prepared.tasks), "families": family_counts(prepared.tasks),
            "sha256": tasks_sha256(prepared.tasks)},
        "model": {"spec": str(prepared.spec), "endpoint": prepared.endpoint},
        "agent": {"system_prompt": SYSTEM_PROMPT, "system_prompt_sha256": prompt_sha256(),
                  "tools": [t["function"]["name"] for t in openai_tools(tuple(SCHEMAS))],
                  "fingerprint": prepared.fingerprint},
        "knowledge": {db: None if kb is None else str(kb.path)
                      for db, kb in prepared.knowledge.items()},
        "tool_protocol": {"notes": prepared.protocol.notes, **prepared.protocol.to_json(),
                          "content": prepared.content_style},
        "search": prepared.search.describe(),
        "sqlite_version": sqlite_version(),
        "settings": settings.to_json(),
        "versions": versions(prepared.spec.is_local),
        "platform": platform.platform(),
        "fingerprint": settings.fingerprint(prepared.fingerprint),
    }
    if settings.shard is not None:
        config["shard"] = {**settings.shard.to_json(), "tasks": len(prepared.tasks)}
    return config


def _comparable(config: dict[str, Any]) -> dict[str, Any]:
    """What of a config.json decides the attempts: the settings (not the operational ones),
    the task set's hash, the endpoint, the system prompt, the tools and the search backend."""
    from hopscore.agent.settings import OPERATIONAL
    from hopscore.files.reruns import comparable_config

    return comparable_config(config, OPERATIONAL, {
        "tasks sha256": ("tasks", "sha256"), "endpoint": ("model", "endpoint"),
        "system prompt sha256": ("agent", "system_prompt_sha256"),
        "tools": ("agent", "tools"), "search": ("search",)})


def run_differences(prepared: PreparedAgentRun) -> list[str]:
    """``setting: old -> new`` between the run directory's config.json and this run."""
    from hopscore.errors import HopscoreError
    from hopscore.files.io import load_json
    from hopscore.files.reruns import settings_diff

    try:
        old = load_json(prepared.settings.output_dir / "config.json")
    except HopscoreError:
        return []
    if not isinstance(old, dict):
        return []
    return settings_diff(_comparable(old), _comparable(config_record(prepared, "")))
