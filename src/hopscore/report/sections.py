"""Plain view models of the report's tables (numbers formatted, nothing escaped here: the
template escapes every string)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from hopscore.analysis.categories import DimensionResult
from hopscore.analysis.compare import PairComparison
from hopscore.analysis.scored import ScoredSet
from hopscore.report.charts import Bar
from hopscore.stats import Difference


@dataclasses.dataclass(slots=True)
class RunAnalysis:
    """One input of the report with what was read for it: its samples' records, its error
    categories and the metric that says whether an example is right."""

    scored: ScoredSet
    records: dict[str, dict[str, Any]]
    dimensions: list[DimensionResult]
    ok_metric: str | None


def pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def cell(metric: str, value: float | None, ci: Mapping[str, Any] | None) -> dict[str, Any]:
    """One metric cell: the exact value (for ``data-value``), its text and the half-width."""
    half = None
    if ci and ci.get("low") is not None and ci.get("high") is not None:
        half = (float(ci["high"]) - float(ci["low"])) / 2
    return {
        "metric": metric,
        "value": value,
        "text": pct(value),
        "half": "" if half is None else f"{100 * half:.2f}",
        "low": None if half is None else pct(float(ci["low"])),  # type: ignore[index]
        "high": None if half is None else pct(float(ci["high"])),  # type: ignore[index]
    }


def summary_view(runs: list[RunAnalysis]) -> dict[str, Any]:
    metrics: dict[str, None] = {}
    for run in runs:
        metrics.update(dict.fromkeys(run.scored.reported))
    rows = []
    for run in runs:
        summary = run.scored.summary
        ci = summary.get("ci") or {}
        reported = run.scored.reported
        rows.append({
            "label": run.scored.label, "source": str(run.scored.source), "kind": run.scored.kind,
            "benchmark": run.scored.benchmark or run.scored.kind,
            "n": summary.get("n_gold", run.scored.n),
            "missing": len(summary.get("missing_ids") or []),
            "cells": [cell(m, reported.get(m), ci.get(m)) for m in metrics],
            "groups": [
                {"name": name, "key": info.get("key") or "", "n": info.get("n"),
                 "cells": [cell(m, (info.get("metrics") or {}).get(m),
                                (info.get("ci") or {}).get(m)) for m in metrics]}
                for name, info in (summary.get("groups") or {}).items()
            ],
            "warnings": list(dict.fromkeys([*summary.get("warnings", []),
                                            *run.scored.warnings])),
        })  # fmt: skip
    return {"metrics": list(metrics), "rows": rows}


def group_rows_view(runs: list[RunAnalysis], metric: str) -> dict[str, tuple[str, list[Bar]]]:
    """Per group name: its key and one bar per run that has the group and the metric."""
    out: dict[str, tuple[str, list[Bar]]] = {}
    for run in runs:
        for name, info in (run.scored.summary.get("groups") or {}).items():
            value = (info.get("metrics") or {}).get(metric)
            if value is None:
                continue
            ci = (info.get("ci") or {}).get(metric) or {}
            key = info.get("key") or ""
            bars = out.setdefault(name, (key, []))[1]
            bars.append(Bar(run.scored.label, float(value), ci.get("low"), ci.get("high"),
                            info.get("n")))
    return out


def delta(diff: Difference | None) -> dict[str, Any]:
    if diff is None:
        return {"text": "n/a", "ci": "", "significant": False, "sign": 0}
    significant = diff.low > 0 or diff.high < 0
    return {
        "a": pct(diff.a), "b": pct(diff.b),
        "text": f"{100 * diff.delta:+.2f}", "half": f"{100 * diff.half_width:.2f}",
        "ci": f"[{100 * diff.low:+.2f}, {100 * diff.high:+.2f}]",
        "significant": significant, "sign": (diff.delta > 0) - (diff.delta < 0),
    }  # fmt: skip


def p_value(p: float) -> str:
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def comparison_view(pair: PairComparison, flip_limit: int) -> dict[str, Any]:
    names = [m.metric for m in pair.metrics]
    overall = next((m.mcnemar for m in pair.metrics if m.metric == pair.flip_metric), None)
    flip_rows = []
    for name, n, mc in [("all", pair.n, overall)] + [(g.name, g.n, g.flips) for g in pair.groups]:
        if mc is not None:
            flip_rows.append({"group": name, "n": n, "both_right": mc.both_right,
                              "both_wrong": mc.both_wrong, "rw": mc.right_to_wrong,
                              "wr": mc.wrong_to_right, "p": p_value(mc.p_value)})
    return {
        "a": pair.a.label, "b": pair.b.label, "n": pair.n,
        "only_a": len(pair.alignment.only_a), "only_b": len(pair.alignment.only_b),
        "metrics": [
            {"metric": m.metric, "binary": m.binary, **delta(m.difference),
             "p": "" if m.mcnemar is None else p_value(m.mcnemar.p_value),
             "rw": "" if m.mcnemar is None else m.mcnemar.right_to_wrong,
             "wr": "" if m.mcnemar is None else m.mcnemar.wrong_to_right}
            for m in pair.metrics
        ],
        "group_metrics": names[:6],
        "groups": [{"name": g.name, "n": g.n,
                    "cells": [delta(g.metrics.get(name)) for name in names[:6]]}
                   for g in pair.groups],
        "flip_metric": pair.flip_metric,
        "flip_rows": flip_rows,
        "flips": [
            {"id": f.id, "direction": f.direction, "groups": ", ".join(f.groups.values()),
             "a": f.prediction_a or "", "b": f.prediction_b or "", "gold": " | ".join(f.gold)}
            for f in pair.flips(flip_limit)
        ],
        "flips_total": int(pair.right_to_wrong.size + pair.wrong_to_right.size),
        "flip_limit": flip_limit,
        "warnings": pair.warnings,
    }  # fmt: skip
