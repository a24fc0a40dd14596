"""Error analysis: per-benchmark categories with counts and examples.

A *dimension* is one way of sorting examples into categories (HotpotQA's answer x
supporting-fact outcome, HybridQA's answer location x where the prediction occurs, ...). Each
benchmark's dimensions live in their own module, listed in :data:`REGISTRY` as
``"module:function"``; the function takes the :class:`Inputs` (gold file, tables folder) and
returns its dimensions. :data:`GENERIC` dimensions apply to every input and skip examples they
have nothing to say about (answer extraction of runs, judge vs exact match, SQL failure reasons).
Adding a benchmark's error analysis is one module plus one line here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.analysis.scored import ScoredSet

REGISTRY: dict[str, str] = {
    "hotpotqa": "hopscore.analysis.categories.hotpotqa:dimensions",
    "2wikimultihopqa": "hopscore.analysis.categories.twowiki:dimensions",
    "hybridqa": "hopscore.analysis.categories.hybridqa:dimensions",
    "fermi": "hopscore.analysis.categories.fermi:dimensions",
    "bamboogle": "hopscore.analysis.categories.answers:dimensions",
    "strategyqa": "hopscore.analysis.categories.strategyqa:dimensions",
    "quartz": "hopscore.analysis.categories.quartz:dimensions",
    "feverous": "hopscore.analysis.categories.feverous:dimensions",
}
#: Aliases of benchmark names, as other modules may register them.
ALIASES = {"2wiki": "2wikimultihopqa", "twowiki": "2wikimultihopqa", "realfp": "fermi"}
GENERIC: tuple[str, ...] = (
    "hopscore.analysis.categories.extraction:dimensions",
    "hopscore.analysis.categories.judge:dimensions",
    "hopscore.analysis.categories.sql:dimensions",
)

NO_PREDICTION = "no prediction"


@dataclass(frozen=True, slots=True)
class Inputs:
    """What error analysis may read besides the scores."""

    benchmark: str | None = None
    #: the benchmark's gold file (for context: HotpotQA paragraphs, HybridQA answer nodes)
    gold: Path | None = None
    #: HybridQA's WikiTables-WithLinks folder (tables_tok/, request_tok/)
    tables: Path | None = None


@dataclass(frozen=True, slots=True)
class Sample:
    """What a category function sees of one example."""

    id: str
    groups: Mapping[str, str]
    metrics: Mapping[str, float]
    missing: bool
    prediction: str | None
    gold: tuple[str, ...]
    #: the run's samples.jsonl row, or the judge / sql-match output row; {} when there is none
    record: Mapping[str, Any] = field(default_factory=dict)
    #: a judge verdict row for this id (``--judge``), when given
    judge: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Dimension:
    name: str
    description: str
    categorize: Callable[[Sample], str | None]
    #: display order of known categories (others follow by count)
    order: tuple[str, ...] = ()


@dataclass(slots=True)
class Category:
    name: str
    count: int
    examples: list[str]


@dataclass(slots=True)
class DimensionResult:
    name: str
    description: str
    total: int
    categories: list[Category]
    #: category of every example of the scored set, by row (None: not categorized)
    labels: list[str | None]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "total": self.total,
            "categories": [
                {"name": c.name, "count": c.count,
                 "share": c.count / self.total if self.total else 0, "examples": c.examples}
                for c in self.categories
            ],
        }  # fmt: skip


def _load(target: str) -> Callable[[Inputs], list[Dimension]]:
    module_name, function = target.split(":")
    loaded: Callable[[Inputs], list[Dimension]] = getattr(
        importlib.import_module(module_name), function
    )
    return loaded


def dimensions_for(inputs: Inputs) -> list[Dimension]:
    """The benchmark's own dimensions (if registered) followed by the generic ones."""
    out: list[Dimension] = []
    name = (inputs.benchmark or "").lower()
    name = ALIASES.get(name, name)
    if name in REGISTRY:
        out.extend(_load(REGISTRY[name])(inputs))
    for target in GENERIC:
        out.extend(_load(target)(inputs))
    return out


def samples_of(
    scored: ScoredSet,
    records: Mapping[str, Mapping[str, Any]] | None = None,
    judge: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Sample]:
    """One :class:`Sample` per example of ``scored``, joined with run records and judge rows."""
    records = records if records is not None else (scored.rows or {})
    out = []
    for row, example_id in enumerate(scored.ids):
        out.append(Sample(
            id=example_id, groups=scored.groups_of(row), metrics=scored.metrics_of(row),
            missing=bool(scored.missing[row]), prediction=scored.predictions[row],
            gold=scored.gold[row], record=records.get(example_id, {}),
            judge=None if judge is None else judge.get(example_id),
        ))  # fmt: skip
    return out


def analyze(
    samples: list[Sample], dimensions: list[Dimension], *, examples: int = 5
) -> list[DimensionResult]:
    """Count categories per dimension; dimensions that categorize nothing are left out."""
    results = []
    for dimension in dimensions:
        labels = [dimension.categorize(sample) for sample in samples]
        counts: dict[str, Category] = {}
        for sample, label in zip(samples, labels, strict=True):
            if label is None:
                continue
            category = counts.get(label)
            if category is None:
                category = counts[label] = Category(label, 0, [])
            category.count += 1
            if len(category.examples) < examples:
                category.examples.append(sample.id)
        if not counts:
            continue
        rank = {name: i for i, name in enumerate(dimension.order)}
        ordered = sorted(counts.values(),
                         key=lambda c: (rank.get(c.name, len(rank)), -c.count, c.name))
        results.append(DimensionResult(dimension.name, dimension.description,
                                       sum(c.count for c in ordered), ordered, labels))
    return results


def outcome(metrics: Mapping[str, float], exact: str, partial: str | None = None) -> str | None:
    """"right" / "partial" / "wrong" from an exact metric and, optionally, an F1-like one."""
    if exact not in metrics:
        return None
    if metrics[exact] >= 1:
        return "right"
    if partial is not None and metrics.get(partial, 0.0) > 0:
        return "partial"
    return "wrong"
