"""Plain view models of the report's tables (numbers formatted, nothing escaped here: the
template escapes every string)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hopscore.analysis.categories import DimensionResult
from hopscore.analysis.compare_records import PairComparison, Row
from hopscore.analysis.scored import ScoredSet
from hopscore.report.charts import Bar

if TYPE_CHECKING:
    from hopscore.analysis.judging import AgreementTable

#: the tests as the comparison table names them (short: the table fits 1,280 px)
TEST_NAMES = {"mcnemar-exact": "McNemar", "mcnemar-mid-p": "McNemar mid-p",
              "permutation": "permutation", "cluster-permutation": "cluster perm.",
              "paired-bootstrap": "bootstrap"}


@dataclasses.dataclass(slots=True)
class RunAnalysis:
    """One input of the report with what was read for it: its samples' records, its error
    categories and the metric that says whether an example is right."""

    scored: ScoredSet
    records: dict[str, dict[str, Any]]
    dimensions: list[DimensionResult]
    ok_metric: str | None
    #: judge rows by id: the judge file itself, ``--judge``, or an agent run's judge.jsonl
    judge_rows: Mapping[str, Any] | None = None
    #: judge vs exact match (raw agreement, kappa), when the run has judge verdicts
    agreement: AgreementTable | None = None


def pct(value: float | None) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def cell(metric: str, value: float | None, ci: Mapping[str, Any] | None) -> dict[str, Any]:
    """One metric cell: the exact value (for ``data-value``), its text and its interval (``±
    half`` when symmetric, else ``[low, high]``), with the method and level for the tooltip."""
    bounds = ""
    if value is not None and ci and ci.get("low") is not None and ci.get("high") is not None:
        from hopscore.scores.display import bounds_text

        bounds = bounds_text(value, float(ci["low"]), float(ci["high"]))
    return {
        "metric": metric,
        "value": value,
        "text": pct(value),
        "half": bounds,
        "low": None if not bounds else pct(float(ci["low"])),  # type: ignore[index]
        "high": None if not bounds else pct(float(ci["high"])),  # type: ignore[index]
        "method": (ci or {}).get("method") or "bootstrap",
        "level": f"{100 * float((ci or {}).get('level') or 0.95):g}%",
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
            # the benchmark's footnotes (Benchmark.notes, summary_notes)
            "notes": list(summary.get("notes") or []),
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


def delta(row: Row | None) -> dict[str, Any]:
    """One difference cell: text, interval, and significance as a symbol and a word."""
    if row is None:
        return {"text": "n/a", "ci": "", "significant": False, "sign": 0, "symbol": "",
                "verdict": "", "half": "", "p": "", "p_adjusted": ""}
    from hopscore.scores.display import bounds_text

    sign = (row.delta > 0) - (row.delta < 0)
    if row.significant:
        symbol, verdict = (("▲", "significantly better") if sign > 0
                           else ("▼", "significantly worse"))
    elif row.underpowered:
        symbol, verdict = "○", "not significant, underpowered"
    else:
        symbol, verdict = "", "not significant"
    interval = row.interval
    return {
        "a": pct(row.a), "b": pct(row.b), "text": f"{100 * row.delta:+.2f}",
        "ci": "" if interval is None else bounds_text(row.delta, interval.low, interval.high,
                                                      bounded=False, signed=True),
        "half": "",
        "significant": row.significant, "sign": sign, "symbol": symbol, "verdict": verdict,
        "p": "" if row.test is None else p_value(row.test.p),
        "p_adjusted": "" if row.test is None or row.test.p_adjusted is None
        else p_value(row.test.p_adjusted),
        "test": "" if row.test is None else TEST_NAMES.get(row.test.name, row.test.name),
        "mde": "∞" if row.mde_unreachable else ("" if row.mde is None else pct(row.mde)),
    }  # fmt: skip


def p_value(p: float) -> str:
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def comparison_view(pair: PairComparison, flip_limit: int) -> dict[str, Any]:
    names = [r.metric for r in pair.metrics]
    flip_rows = []
    flip = pair.flip_metric
    rows = [("all", pair.n, pair.row(flip) if flip else None)] + [
        (g.name, g.n, g.rows.get(flip) if flip else None) for g in pair.groups]
    for name, n, row in rows:
        if row is not None and row.flips is not None:
            f = row.flips
            flip_rows.append({"group": name, "n": n, "both_right": f.both_right,
                              "both_wrong": f.both_wrong, "rw": f.right_to_wrong,
                              "wr": f.wrong_to_right, **delta(row)})
    options = pair.options
    return {
        "a": pair.a.label, "b": pair.b.label, "n": pair.n,
        "only_a": len(pair.alignment.only_a), "only_b": len(pair.alignment.only_b),
        "missing_a": pair.missing_a, "missing_b": pair.missing_b,
        "level": f"{100 * options.level:g}%", "alpha": f"{options.alpha:g}",
        "correction": {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no"}[
            options.correction],
        "metrics": [
            {"metric": r.metric, "binary": r.binary, **delta(r),
             "rw": "" if r.flips is None else r.flips.right_to_wrong,
             "wr": "" if r.flips is None else r.flips.wrong_to_right}
            for r in pair.metrics
        ],
        "group_metrics": names[:6],
        "groups": [{"name": g.name, "n": g.n,
                    "cells": [delta(g.rows.get(name)) for name in names[:6]]}
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


def agreement_view(label: str, table: AgreementTable) -> dict[str, Any]:
    """Judge vs exact match of one run: raw agreement and kappa with intervals, per group."""
    from hopscore.scores.display import bounds_text

    rows = []
    for name, agreement in [("all", table.overall), *table.groups.items()]:
        low, high = agreement.agreement_interval()
        rows.append({
            "group": name, "n": agreement.n,
            "agreement": f"{100 * agreement.observed:.2f} "
                         f"{bounds_text(agreement.observed, low, high)}",
            "kappa": agreement.kappa_text(),
            "judge_only": agreement.judge_only, "match_only": agreement.match_only,
        })  # fmt: skip
    return {"label": label, "metric": table.metric, "undecided": table.undecided,
            "level": f"{100 * table.overall.level:g}%", "rows": rows}


def corrected_view(label: str, summary: Mapping[str, Any]) -> dict[str, Any] | None:
    """The judge accuracy corrected for its errors that ``score --judge --judge-calibration``
    wrote into metrics.json (None when it did not)."""
    judge = summary.get("judge") if isinstance(summary, Mapping) else None
    block = judge.get("corrected") if isinstance(judge, Mapping) else None
    if not isinstance(block, Mapping):
        return None

    def share(value: Any, low: Any, high: Any) -> str:
        if not isinstance(value, (int, float)):
            return "-"
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            return f"{value:.3f} [{low:.3f}, {high:.3f}]"
        return f"{value:.3f}"

    raw_ci = block.get("raw_ci") or {}
    ci = block.get("corrected_ci") or {}
    calibration = block.get("calibration") or {}
    return {
        "label": label, "n": block.get("n"),
        "level": f"{100 * float(raw_ci.get('level') or 0.95):g}%",
        "raw": share(block.get("raw"), raw_ci.get("low"), raw_ci.get("high")),
        "corrected": share(block.get("corrected"), ci.get("low"), ci.get("high")),
        "undefined": block.get("undefined"),
        "method": block.get("method") or "rogan-gladen", "note": block.get("note"),
        "sensitivity": share(calibration.get("sensitivity"), None, None),
        "specificity": share(calibration.get("specificity"), None, None),
        "calibration_n": calibration.get("n"),
    }  # fmt: skip
