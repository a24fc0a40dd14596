"""What a benchmark module declares, and the typed records it works with.

A benchmark is one small module with one :class:`Benchmark` subclass. It says how to load the
official gold and prediction files into typed records, which metrics and groups it reports, and
how to score one example (:meth:`Benchmark.score`, a pure function). Joining, the missing-id
policy, aggregation and output live in :mod:`hopscore.scoring`, shared by all benchmarks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from hopscore.errors import InputError, Location
from hopscore.io import Fields, iter_jsonl


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One gold example. Benchmarks subclass this with their own gold fields."""

    id: str
    question: str = ""

    def groups(self) -> dict[str, str]:
        """Group labels of this example, e.g. ``{"type": "bridge", "level": "hard"}``."""
        return {}

    def gold_answers(self) -> tuple[str, ...]:
        """The gold answer(s) as text, for display, judging and error analysis."""
        return ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """One system prediction. Benchmarks subclass this with their own predicted fields."""

    id: str
    answer: str | None = None

    def answer_text(self) -> str | None:
        """The predicted answer as text, for display and judging."""
        return self.answer


E = TypeVar("E", bound=Example)
P = TypeVar("P", bound=Prediction)


@dataclass(slots=True)
class Predictions(Generic[P]):
    """Predictions keyed by example id, with what the loader noticed on the way."""

    by_id: dict[str, P]
    source: str
    format: str
    warnings: list[str] = field(default_factory=list)


class Benchmark(ABC, Generic[E, P]):
    """Declares one benchmark: files, metrics, groups, and how to score one example."""

    name: ClassVar[str]
    title: ClassVar[str]
    #: Metrics reported in ``metrics.json``, in display order.
    metrics: ClassVar[tuple[str, ...]]
    #: The few metrics a one-line summary shows (``hopscore demo``); empty means the first three.
    headline: ClassVar[tuple[str, ...]] = ()
    #: Group keys that :meth:`Example.groups` may return, in display order.
    group_keys: ClassVar[tuple[str, ...]] = ()
    #: Human descriptions of accepted files, for ``--help`` and the README.
    gold_formats: ClassVar[str] = ""
    prediction_formats: ClassVar[str] = ""

    @abstractmethod
    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[E]:
        """Load an official gold file."""

    @abstractmethod
    def load_predictions(self, path: Path) -> Predictions[P]:
        """Load predictions in the official format or the universal JSON Lines format."""

    @abstractmethod
    def score(self, example: E, prediction: P | None) -> dict[str, float]:
        """Score one example; ``prediction`` is None when the id was not predicted.

        Pure: no I/O. Returns every metric of :meth:`active_metrics` that is a per-example mean.
        """

    def active_metrics(self, predictions: Predictions[P]) -> tuple[str, ...]:
        """Metrics to report for these predictions (some only exist when a field was predicted)."""
        return self.metrics

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        """Turn per-example means into the reported metrics (override for derived metrics)."""
        return dict(means)

    def is_missing(self, example: E, prediction: P | None) -> bool:
        """Whether this example counts as unpredicted (listed in ``missing_ids``)."""
        return prediction is None


def load_universal(
    path: Path, parse: Callable[[Fields, str], P], *, id_field: str = "id"
) -> dict[str, P]:
    """Read the universal JSON Lines prediction format, one ``{"id", "answer", ...}`` per line.

    ``parse`` turns one located record into the benchmark's prediction type; ids must be unique.
    """
    seen: dict[str, Location] = {}
    out: dict[str, P] = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        example_id = record.id(id_field)
        if example_id in seen:
            raise InputError(
                where,
                f"duplicate id {example_id!r} (first seen at {seen[example_id]})",
                field=id_field,
            )
        seen[example_id] = where
        out[example_id] = parse(record, example_id)
    return out


def check_unique_ids(examples: list[E], path: Path) -> list[E]:
    """Raise on duplicate gold ids, naming both records."""
    first: dict[str, int] = {}
    for index, example in enumerate(examples):
        if example.id in first:
            raise InputError(
                path,
                f"duplicate gold id {example.id!r} in records [{first[example.id]}] and [{index}]",
            )
        first[example.id] = index
    return examples
