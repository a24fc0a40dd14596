"""What was run: each run's model, endpoint and settings, side by side, differences marked.

A run directory's ``config.json`` (``hopscore run``, the agent) is flattened into dotted keys
(``request.max_tokens``, ``settings.temperature``, ``versions.openai``); a judge output file
gives the judge model, endpoint and prompt from its rows' ``judge`` objects; a directory of
scored predictions has no settings, and is left out of the comparison. A setting *differs*
when at least two of the runs that record settings have different values for it (a run
without the key counts as "not set"). Where each run's files live
(output, cache and gold paths, the command line, timestamps) is shown but never counted as a
difference: it differs between any two runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hopscore.analysis.scored import ScoredSet

#: keys shown first, in this order, when a run has them
LEADING = ("model.spec", "model.endpoint", "benchmark", "status", "protocol",
           "request.temperature", "request.max_tokens", "request.seed", "request.stop")
#: config sections that say nothing about how the answers were made
SKIPPED = ("summary", "batch", "requests", "grades", "updated", "command", "platform",
           "knowledge", "agent.system_prompt", "tool_protocol.notes",
           # a hash of the settings shown (hopscore merge compares it), where shards were, and
           # how the rows were executed
           "fingerprint", "merged_from", "executor")
#: where things live: shown, never a difference
LOCATIONS = ("settings.output_dir", "settings.cache_dir", "settings.gold", "settings.tasks",
             "settings.db_root", "settings.corpus", "settings.overlay", "gold.path",
             "tasks.path", "tasks.overlay.path", "context.corpus.path", "search.corpus",
             "settings.tables_dir", "context.tables_dir", "settings.prompt_template",
             "settings.aliases", "settings.judge_prompt_file", "source")
#: what every input has, set by hopscore: which input and of what kind (never a difference)
DESCRIBING = ("source", "kind", "config")
NOT_SET = "(not set)"
MAX_VALUE_CHARS = 300


def flatten(value: Any, prefix: str = "", out: dict[str, str] | None = None) -> dict[str, str]:
    """Dotted keys -> display text (lists and scalars as compact JSON, strings as they are)."""
    out = {} if out is None else out
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if name not in SKIPPED:
                flatten(item, name, out)
    elif prefix:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        out[prefix] = text if len(text) <= MAX_VALUE_CHARS else \
            text[:MAX_VALUE_CHARS] + f" [... {len(text) - MAX_VALUE_CHARS} more characters]"
    return out


def _uniform(rows: Iterable[Mapping[str, Any]], key: str) -> str | None:
    values = {str(row.get(key)) for row in rows if row.get(key) is not None}
    if not values:
        return None
    return values.pop() if len(values) == 1 else "mixed: " + ", ".join(sorted(values)[:5])


def run_settings(scored: ScoredSet) -> dict[str, str]:
    """The settings of one input, flattened."""
    settings: dict[str, str] = {"source": str(scored.source), "kind": scored.kind}
    if scored.config:
        settings.update(flatten(scored.config))
        return settings
    if scored.kind == "judge" and scored.rows:
        meta: list[Mapping[str, Any]] = [r["judge"] for r in scored.rows.values()
                                         if isinstance(r.get("judge"), dict)]
        for key in ("model", "endpoint", "prompt_sha256", "prompt_source"):
            value = _uniform(meta, key)
            if value is not None:
                settings[f"judge.{key}"] = value
        if "judge.model" in settings:
            settings["model.spec"] = settings["judge.model"]
        if "judge.endpoint" in settings:
            settings["model.endpoint"] = settings["judge.endpoint"]
        return settings
    settings["config"] = "no config.json: scored predictions"
    return settings


def settings_view(sets: list[ScoredSet]) -> dict[str, Any]:
    """Rows of the "Runs" table: key, one value per run, and whether the values differ.

    Only inputs that record settings are compared (``with_settings``): a directory of scored
    predictions beside a run has none, and what it lacks is not a difference (it would mark
    every setting of the run). Where an input lives and what kind it is never differ.
    """
    per_run = [run_settings(s) for s in sets]
    recorded = [any(k not in DESCRIBING for k in run) for run in per_run]
    keys: dict[str, None] = {k: None for k in LEADING if any(k in r for r in per_run)}
    for run in per_run:
        keys.update(dict.fromkeys(sorted(run)))
    rows = []
    for key in keys:
        values = [run.get(key, NOT_SET) for run in per_run]
        compared = {v for v, has in zip(values, recorded, strict=True) if has}
        differs = (sum(recorded) > 1 and key not in LOCATIONS and key not in DESCRIBING
                   and len(compared) > 1)
        rows.append({"key": key, "cells": values, "differs": differs,
                     "location": key in LOCATIONS})
    return {"labels": [s.label for s in sets], "rows": rows,
            "without": [s.label for s, has in zip(sets, recorded, strict=True) if not has],
            "differing": [r["key"] for r in rows if r["differs"]],
            "models": [run.get("model.spec", "") for run in per_run],
            "endpoints": [run.get("model.endpoint", "") for run in per_run]}
