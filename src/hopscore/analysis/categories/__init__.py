"""Error analysis: per-benchmark categories with counts and examples.

A *dimension* is one way of sorting examples into categories
(:mod:`hopscore.benchmarks.error_categories` defines what they are made of). A benchmark's own
dimensions are the ones it declares (:meth:`hopscore.benchmarks.base.Benchmark.error_dimensions`,
from the module named by its ``error_categories``); :data:`GENERIC` dimensions follow, which
apply to every input and skip examples they have nothing to say about (answer extraction of
runs, judge vs exact match, SQL failure reasons). Adding a benchmark's error analysis is a
module in its folder and one fact on its class.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from hopscore.analysis.gold import gold_index
from hopscore.analysis.scored import ScoredSet
from hopscore.benchmarks.base import Benchmark
from hopscore.benchmarks.error_categories import (
    NO_PREDICTION,
    Dimension,
    Inputs,
    Sample,
    outcome,
)
from hopscore.errors import HopscoreError

__all__ = [
    "GENERIC", "NO_PREDICTION", "Category", "Dimension", "DimensionResult", "Inputs", "Sample",
    "analyze", "benchmark_of", "dimensions_for", "outcome", "samples_of",
]  # fmt: skip

GENERIC: tuple[str, ...] = (
    "hopscore.analysis.categories.extraction:dimensions",
    "hopscore.analysis.categories.judge:dimensions",
    "hopscore.analysis.categories.sql:dimensions",
)


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


def benchmark_of(name: str | None) -> Benchmark[Any, Any] | None:
    """The benchmark a scored set records (its name, or one of the names it declares in
    ``recorded_as``); None for no name, or one no benchmark answers to."""
    from hopscore import benchmarks

    key = (name or "").lower()
    if not key:
        return None
    known = benchmarks.registry()
    if key in known:
        return benchmarks.get(key)
    for other in known:
        try:
            benchmark = benchmarks.get(other)
        except HopscoreError:  # a broken plugin does not stand in the way of the others
            continue
        if key in benchmark.recorded_as:
            return benchmark
    return None


def dimensions_for(inputs: Inputs) -> list[Dimension]:
    """The benchmark's own dimensions (if it declares any) followed by the generic ones."""
    out: list[Dimension] = []
    benchmark = benchmark_of(inputs.benchmark)
    if benchmark is not None:
        own = replace(inputs, examples=partial(gold_index, benchmark.name, inputs.gold))
        out.extend(benchmark.error_dimensions(own))
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

