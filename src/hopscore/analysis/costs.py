"""What each compared run cost: in total, per correct answer and per point of a metric.

A run directory's cost is the one its ``metrics.json`` records (``run.cost``, written by
``hopscore run`` at the dated list prices of :mod:`hopscore.engine.prices`); a judge output
file's is priced here from its rows' usage ledgers and the judge model they name. A run
without a ledger (scored predictions, an older hopscore) has no cost (None); a model the
price table does not name costs ``"unknown"``, and so does everything divided from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hopscore.analysis.scored import ScoredSet
from hopscore.engine.ledger import JUDGE, Tally, from_json, row_usage, total
from hopscore.engine.prices import Price, ledger_cost, per


@dataclass(frozen=True, slots=True)
class RunCost:
    """One input's cost and what it bought on ``metric``."""

    label: str
    #: dollars, ``"unknown"`` (a model without a price), or None (no ledger recorded)
    cost: float | str | None
    metric: str | None
    #: examples with the metric at 1 (None for a metric that is not 0/1)
    correct: int | None
    #: the metric's mean in points (100 x the mean)
    points: float | None

    @property
    def per_correct(self) -> float | str | None:
        return per(self.cost, self.correct)

    @property
    def per_point(self) -> float | str | None:
        return per(self.cost, self.points)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "cost_usd": self.cost, "metric": self.metric,
                "correct": self.correct, "points": self.points,
                "per_correct_usd": self.per_correct, "per_point_usd": self.per_point}


def cost_of(scored: ScoredSet, prices: dict[str, Price]) -> float | str | None:
    """The input's cost: its run's recorded one, else its judge rows' priced now."""
    run = scored.summary.get("run") if isinstance(scored.summary, dict) else None
    recorded = run.get("cost") if isinstance(run, dict) else None
    if isinstance(recorded, dict) and "total" in recorded:
        value = recorded["total"]
        return value if isinstance(value, str) else float(value)
    if scored.rows is None:
        return None
    usage: list[dict[str, Tally]] = []
    model = None
    for row in scored.rows.values():
        meta = row.get("judge")
        if isinstance(meta, dict):
            usage.append(row_usage(meta))
            model = model or meta.get("model")
    summed = total(usage)
    if not summed:
        return None
    value = ledger_cost(summed, {JUDGE: str(model)} if model else {}, prices)["total"]
    return value if isinstance(value, str) else float(value)


def run_cost(scored: ScoredSet, metric: str | None, prices: dict[str, Price]) -> RunCost:
    correct = points = None
    if metric is not None and metric in scored.names and scored.n:
        column = scored.values[:, scored.names.index(metric)]
        points = float(column.mean()) * 100
        if all(v in (0.0, 1.0) for v in column.tolist()):
            correct = int(column.sum())
    return RunCost(scored.label, cost_of(scored, prices), metric, correct, points)


def dollars(value: float | str | None) -> str:
    """A cost cell: ``$0.0123``, ``unknown``, or ``-`` (none recorded)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"${value:.4f}" if value < 100 else f"${value:,.2f}"


def usage_of(scored: ScoredSet) -> dict[str, Tally]:
    """The input's usage ledger by role: its run's recorded one, else its judge rows' sum."""
    run = scored.summary.get("run") if isinstance(scored.summary, dict) else None
    recorded = run.get("usage") if isinstance(run, dict) else None
    if isinstance(recorded, dict) and recorded:
        return from_json(recorded)
    if scored.rows is None:
        return {}
    return total(row_usage(row["judge"]) for row in scored.rows.values()
                 if isinstance(row.get("judge"), dict))


def costs_view(sets: list[ScoredSet], metric: str | None, prices: dict[str, Price]
               ) -> dict[str, Any] | None:
    """The report's "Cost and usage" table: one row per figure, one cell per input; None
    when no input recorded a ledger."""
    usages = [usage_of(s) for s in sets]
    if not any(usages):
        return None
    costs = [run_cost(s, metric, prices) for s in sets]
    rows: list[dict[str, Any]] = [
        {"key": "cost (USD, list prices)", "cells": [dollars(c.cost) for c in costs]},
        {"key": "per correct answer", "cells": [dollars(c.per_correct) for c in costs]},
        {"key": f"per point of {metric or 'the metric'}",
         "cells": [dollars(c.per_point) for c in costs]}]
    roles = list(dict.fromkeys(role for usage in usages for role in usage))
    for role in roles:
        tallies = [usage.get(role) for usage in usages]
        for key in FIGURES:
            rows.append({"key": f"{role} {key}",
                         "cells": ["-" if t is None else _figure(key, t) for t in tallies]})
    return {"labels": [s.label for s in sets], "rows": rows}


#: the usage figures of the report's table, per role
FIGURES = ("tokens (prompt + completion)", "reasoning / cached tokens",
           "requests / retries / cache hits")


def _figure(key: str, t: Tally) -> str:
    if key == FIGURES[0]:
        return f"{t.prompt_tokens} + {t.completion_tokens}"
    if key == FIGURES[1]:
        return f"{t.reasoning_tokens} / {t.cached_tokens}"
    return f"{t.requests} / {t.retries} / {t.cache_hits}"
