"""Merging the shards of ``hopscore run`` and ``hopscore suite mcr``.

The run is prepared again without a shard (gold, prompts, retrieval: what an unsharded run
prepares), so every example's resume key is known; each shard's ``samples.jsonl`` must hold
rows only of keys of its own shard. The merged directory is then written by the run's own
finishing code (:func:`~hopscore.run.finish.finish_run`, :func:`~hopscore.run.finish.
write_config`) from the merged rows: predictions, ``scores.jsonl`` and ``metrics.json`` are
those of an unsharded run, and ``samples.jsonl`` holds the shards' rows byte for byte, in gold
order. ``config.json`` adds ``merged_from``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.engine import BatchOutcome, EngineStats, run_key_of
from hopscore.files.atomic import write_json_atomic, write_text_atomic
from hopscore.files.digest import file_sha256
from hopscore.files.io import load_json
from hopscore.files.shard import differences, shard_of
from hopscore.merge.common import (
    MergeError,
    ShardOutput,
    check_output,
    check_set,
    collect,
    join_lines,
    locate,
    merged_from,
    refuse_missing,
    settings_from_json,
)


@dataclass(slots=True)
class MergedRun:
    output: Path
    shards: int
    rows: int
    #: the run's counts (the ``run`` block of metrics.json)
    summary: dict[str, Any]
    metrics: dict[str, Any] | None
    report: Any = None


def settings_differences(a: ShardOutput, b: ShardOutput) -> list[str]:
    from hopscore.run.settings import EXECUTION_FIELDS

    names = differences(a.record.get("settings") or {}, b.record.get("settings") or {},
                        EXECUTION_FIELDS)
    for block in ("gold", "prompt", "context"):
        if a.record.get(block) != b.record.get(block) and block not in names:
            names.append(f"{block} (content)")
    return names


def batch_totals(outputs: Sequence[ShardOutput]) -> tuple[BatchOutcome, EngineStats]:
    """The ``batch`` and ``requests`` blocks of a merged config: the shards' sums (their wall
    time: the longest shard's)."""
    outcome = BatchOutcome(total=0, already_done=0)
    stats = EngineStats()
    for output in outputs:
        batch = output.record.get("batch") or {}
        outcome.already_done += int(batch.get("already_done") or 0)
        outcome.processed += int(batch.get("processed") or 0)
        outcome.failed += int(batch.get("failed") or 0)
        outcome.wall_s = max(outcome.wall_s, float(batch.get("wall_s") or 0.0))
        requests = output.record.get("requests") or {}
        stats.requests_sent += int(requests.get("sent") or 0)
        stats.retries += int(requests.get("retries") or 0)
        stats.cache_hits += int(requests.get("cache_hits") or 0)
        stats.failures += int(requests.get("failures") or 0)
    outcome.total = outcome.already_done + outcome.processed
    return outcome, stats


def add_merged_from(config_path: Path, outputs: Sequence[ShardOutput]) -> None:
    config = load_json(config_path)
    config["merged_from"] = merged_from(outputs)
    write_json_atomic(config_path, config)


def merge_run(outputs: Sequence[ShardOutput], out: Path, warn: Callable[[str], None], *,
              gold: Path | None = None, ready: Callable[[], None] = lambda: None) -> MergedRun:
    """Join the shards of one ``hopscore run`` into ``out`` (see the module docstring)."""
    from hopscore.run.finish import finish_run, write_config
    from hopscore.run.repeats import split_rows
    from hopscore.run.run_job import is_done
    from hopscore.run.settings import RunSettings
    from hopscore.run.tasks import prepare

    count = check_set(outputs, settings_differences)
    check_output(out, outputs)
    first = outputs[0]
    overrides: dict[str, Any] = {"output_dir": out, "shard": None}
    if gold is not None:
        overrides["gold"] = gold
    settings = settings_from_json(RunSettings, first.record.get("settings") or {}, **overrides)
    prepared = prepare(settings)
    keys = [task.key for task in prepared.tasks]
    owner = {task.key: shard_of(task.example.id, count) for task in prepared.tasks}
    found = collect(outputs, lambda o: o.path / "samples.jsonl", run_key_of, owner, warn)
    missing: dict[int, list[str]] = {}
    for task in prepared.tasks:
        if task.key not in found.rows:
            missing.setdefault(owner[task.key], []).append(task.example.id)
    refuse_missing(missing, count, outputs, "examples")
    ready()
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "samples.jsonl", join_lines(found.raw[key] for key in keys))
    rows, attempts = split_rows(prepared.tasks, found.rows, settings.repeats)
    failed = sum(1 for key in keys if not is_done(found.rows[key]))
    report, metrics, summary = finish_run(settings.scoring(), prepared, rows, attempts)
    outcome, stats = batch_totals(outputs)
    outcome.failed = failed
    status = "complete" if not summary["errors"] else "incomplete"
    write_config(settings, prepared, status=status, rows=rows, outcome=outcome, stats=stats,
                 attempts=attempts)
    add_merged_from(out / "config.json", outputs)
    return MergedRun(out, count, len(keys), summary, metrics, report)


def _gold_built_by_suite(run: ShardOutput, suite_dir: Path) -> Path | None:
    """The gold file a suite wrote into its own directory for this run (joined from several
    files of the data folder), found by name beside ``suite.json`` and the sha256 the run
    recorded; None when the run read its gold from the data folder."""
    recorded = run.record.get("gold") or {}
    path, sha256 = recorded.get("path"), recorded.get("sha256")
    if not isinstance(path, str) or not isinstance(sha256, str):
        return None
    candidate = suite_dir / Path(path).name
    if candidate.is_file() and file_sha256(candidate) == sha256:
        return candidate
    return None


def merge_suite(outputs: Sequence[ShardOutput], out: Path, warn: Callable[[str], None], *,
                ready: Callable[[], None] = lambda: None
                ) -> list[tuple[str, MergedRun | None, dict[str, Any]]]:
    """Join the shards of one ``hopscore suite mcr``: every dataset's run directories, then
    ``suite.json``. Returns (dataset, merged run or None, its suite.json row)."""
    from hopscore.run.suite import SuiteRow

    check_set(outputs, lambda a, b: [])
    check_output(out, outputs)
    models = {str(o.record.get("model")) for o in outputs}
    if len(models) > 1:
        raise MergeError("the suites were run with different models: " + ", ".join(sorted(models)))
    ready()
    out.mkdir(parents=True, exist_ok=True)
    first = outputs[0]
    results: list[tuple[str, MergedRun | None, dict[str, Any]]] = []
    for entry in first.record.get("datasets") or []:
        name = str(entry.get("benchmark"))
        if entry.get("status") not in ("ok", "incomplete"):
            results.append((name, None, entry))
            continue
        runs = []
        for output in outputs:
            directory = output.path / name
            if not (directory / "config.json").is_file():
                raise MergeError(f"{output.path}: no run of {name} in it ({directory}); re-run "
                                 f"that shard of the suite, then merge again")
            runs.append(locate(directory))
        gold = None
        built = _gold_built_by_suite(runs[0], first.path)
        if built is not None:  # the suite built this gold from several files itself
            gold = out / built.name
            shutil.copyfile(built, gold)
        merged = merge_run(runs, out / name, warn, gold=gold)
        mcr = (merged.metrics or {}).get("mcr")
        status = "ok" if not merged.summary.get("errors") else "incomplete"
        row = SuiteRow(name, status, mcr, merged.summary,
                       methods=(merged.metrics or {}).get("methods"))
        results.append((name, merged, row.to_json()))
    suite = {key: value for key, value in first.record.items()
             if key not in ("datasets", "shard")}
    suite["datasets"] = [row for _, _, row in results]
    suite["merged_from"] = merged_from(outputs)
    write_json_atomic(out / "suite.json", suite)
    return results
