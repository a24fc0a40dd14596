"""Per-example values kept while scoring, and the confidence intervals computed from them.

:class:`ExampleValues` stores every example's metric values and group labels in flat typed
arrays (8 bytes per value, 4 per group label), not Python objects, so a million examples with a
dozen metrics cost about 100 MB. :func:`attach_intervals` adds a bootstrap interval to every
metric of a :class:`~hopscore.scoring.ScoreReport`, overall and per group.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from hopscore.stats import Finalize, Interval, mean_intervals

if TYPE_CHECKING:
    from hopscore.benchmarks.base import Benchmark
    from hopscore.scoring import ScoreReport


class ExampleValues:
    """Metric values (examples x metrics) and group codes, appended one example at a time."""

    __slots__ = ("_codes", "_labels", "_values", "n", "names")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.n = 0
        self._values = array("d")
        #: group key -> (label -> code), and key -> one code per example (-1: no label)
        self._labels: dict[str, dict[str, int]] = {}
        self._codes: dict[str, array[int]] = {}

    def add(self, values: Mapping[str, float], groups: Mapping[str, str]) -> None:
        self._values.extend([values[name] for name in self.names])
        for key, label in groups.items():
            codes = self._codes.get(key)
            if codes is None:
                codes = self._codes[key] = array("i", [-1]) * self.n
                self._labels[key] = {}
            labels = self._labels[key]
            code = labels.get(label)
            if code is None:
                code = labels[label] = len(labels)
            codes.append(code)
        self.n += 1
        for codes in self._codes.values():
            if len(codes) < self.n:
                codes.append(-1)

    def matrix(self) -> NDArray[np.float64]:
        """All values as an (examples x metrics) array, sharing memory with the store."""
        flat = np.frombuffer(self._values, dtype=np.float64) if self.n else np.empty(0)
        return flat.reshape(self.n, len(self.names))

    def group_columns(self) -> dict[str, tuple[list[str], array[int]]]:
        """Per group key: the labels in code order and one code per example (-1: none)."""
        return {key: (list(self._labels[key]), codes) for key, codes in self._codes.items()}

    def rows_of(self, key: str, label: str) -> NDArray[np.intp]:
        """Row numbers of the examples whose group ``key`` is ``label``."""
        code = self._labels.get(key, {}).get(label)
        if code is None:
            return np.empty(0, dtype=np.intp)
        codes = np.frombuffer(self._codes[key], dtype=np.int32)
        return np.flatnonzero(codes == code)


def custom_finalize(benchmark: Benchmark[Any, Any]) -> Finalize | None:
    """The benchmark's ``finalize`` when it derives metrics, else None (identity)."""
    from hopscore.benchmarks.base import Benchmark as Base

    if type(benchmark).finalize is Base.finalize:
        return None
    return benchmark.finalize


def attach_intervals(
    benchmark: Benchmark[Any, Any],
    report: ScoreReport,
    values: ExampleValues,
    *,
    resamples: int,
    seed: int,
) -> None:
    """Fill ``report.ci`` and each group's ``ci`` with percentile bootstrap intervals.

    Derived metrics (``Benchmark.finalize``) are recomputed on every replicate; one that
    cannot be (a division by zero on some replicate) gets no interval and a warning. Every set
    uses the same seed, so a group holding all examples gets exactly the overall interval.
    """
    finalize = custom_finalize(benchmark)
    matrix = values.matrix()
    report.ci = mean_intervals(
        matrix, values.names, reported=report.metrics, finalize=finalize,
        resamples=resamples, seed=seed,
    )  # fmt: skip
    without = [name for name, interval in report.ci.items() if interval is None]
    for name, group in report.groups.items():
        key = report.group_keys.get(name, "")
        label = group.value if group.value is not None else name
        rows = values.rows_of(key, label)
        if rows.size == 0:
            continue
        group.ci = mean_intervals(
            matrix, values.names, reported=group.metrics, finalize=finalize,
            resamples=resamples, seed=seed, rows=rows,
        )  # fmt: skip
        without.extend(f"{metric} ({name})" for metric, iv in group.ci.items() if iv is None)
    if without:
        report.warnings.append(
            "no confidence interval for derived metric(s) that cannot be recomputed on every "
            f"bootstrap replicate: {', '.join(without[:10])}"
        )


def intervals_to_json(ci: Mapping[str, Interval | None]) -> dict[str, Any]:
    return {name: None if iv is None else iv.to_json() for name, iv in ci.items()}
