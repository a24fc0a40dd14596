"""Per-example values kept while scoring, and the confidence intervals computed from them.

:class:`ExampleValues` stores every example's metric values, group labels and cluster in flat
typed arrays (8 bytes per value, 4 per label), not Python objects, so a million examples with a
dozen metrics cost about 100 MB. The scorer sums groups from it too.

:func:`set_intervals` makes the interval of every reported metric of one set of examples (all
of them, or a group) by the method :class:`IntervalSpec` asks for (see
:mod:`hopscore.inference.ci`): the defaults (Wilson for binary metrics, BCa from the sample's
cumulants for the others) run in pure Python over the stored columns, so a plain ``hopscore
score`` never imports numpy; Monte Carlo methods (``--ci bootstrap``, clusters resampled by
the bootstrap, metrics derived from means) use :mod:`hopscore.inference.resample`.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from hopscore.inference.ci import (
    Interval,
    analytic_interval,
    clopper_pearson,
    resolve_method,
    t_quantile,
    wilson,
)
from hopscore.inference.ci import intervals_to_json as intervals_to_json
from hopscore.inference.ci import moments as sample_moments
from hopscore.inference.clusters import totals_by_cluster
from hopscore.inference.spec import IntervalSpec as IntervalSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from numpy.typing import NDArray

    from hopscore.benchmarks.base import Benchmark
    from hopscore.results import ScoreReport

    Finalize = Callable[[Mapping[str, float]], Mapping[str, float]]

#: ``None``: every example; otherwise the row numbers of a group
Rows = Sequence[int] | None


class ExampleValues:
    """Metric values (examples x metrics), group codes and cluster codes, one example at a time."""

    __slots__ = ("_clusters", "_codes", "_labels", "_values", "cluster_labels", "n", "names",
                 "unclustered")

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.n = 0
        self._values = array("d")
        #: group key -> (label -> code), and key -> one code per example (-1: no label)
        self._labels: dict[str, dict[str, int]] = {}
        self._codes: dict[str, array[int]] = {}
        #: cluster code per example (None until a cluster is given); label -> code
        self._clusters: array[int] | None = None
        self.cluster_labels: dict[str, int] = {}
        self.unclustered = 0

    def add(self, values: Mapping[str, float], groups: Mapping[str, str]) -> None:
        self._values.extend(map(values.__getitem__, self.names))
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

    def add_cluster(self, cluster: str | None) -> None:
        """The cluster of the example just added (None: a cluster of its own)."""
        if self._clusters is None:
            self._clusters = array("i")
        if cluster is None:
            self.unclustered += 1
            cluster = f"\x00{self.n}"  # a label no real cluster has
        code = self.cluster_labels.get(cluster)
        if code is None:
            code = self.cluster_labels[cluster] = len(self.cluster_labels)
        self._clusters.append(code)

    @property
    def clustered(self) -> bool:
        return self._clusters is not None

    def column(self, j: int, rows: Rows = None) -> Sequence[float]:
        """The values of metric ``j`` (of the selected rows), without numpy."""
        col = self._values[j :: len(self.names)]
        return col if rows is None else select(col, rows)

    def cluster_codes(self, rows: Rows = None) -> Sequence[int] | None:
        if self._clusters is None:
            return None
        return self._clusters if rows is None else select(self._clusters, rows)

    def matrix(self) -> NDArray[np.float64]:
        """All values as an (examples x metrics) array, sharing memory with the store."""
        import numpy as np

        flat = np.frombuffer(self._values, dtype=np.float64) if self.n else np.empty(0)
        return flat.reshape(self.n, len(self.names))

    def group_columns(self) -> dict[str, tuple[list[str], array[int]]]:
        """Per group key: the labels in code order and one code per example (-1: none)."""
        return {key: (list(self._labels[key]), codes) for key, codes in self._codes.items()}

    def group_rows(self) -> dict[tuple[str, str], list[int]]:
        """Row numbers of every (group key, label), in one pass per key."""
        out: dict[tuple[str, str], list[int]] = {}
        for key, codes in self._codes.items():
            by_code: list[list[int]] = [[] for _ in self._labels[key]]
            for row, code in enumerate(codes):
                if code >= 0:
                    by_code[code].append(row)
            for label, code in self._labels[key].items():
                out[(key, label)] = by_code[code]
        return out


def select(values: Sequence[Any], rows: Sequence[int]) -> Sequence[Any]:
    """``values[rows]`` at C speed."""
    if not rows:
        return ()
    if len(rows) == 1:
        return (values[rows[0]],)
    picked: Sequence[Any] = itemgetter(*rows)(values)
    return picked


class MatrixValues:
    """:class:`ExampleValues`' reading interface over a numpy matrix (a loaded scores file)."""

    def __init__(self, values: NDArray[np.float64], names: Sequence[str],
                 clusters: Sequence[int] | None = None) -> None:
        self.values = values
        self.names = tuple(names)
        self.n = int(values.shape[0])
        self._clusters = clusters
        self.clustered = clusters is not None

    def column(self, j: int, rows: Rows = None) -> Sequence[float]:
        column = self.values[:, j] if rows is None else self.values[list(rows), j]
        out: list[float] = column.tolist()
        return out

    def cluster_codes(self, rows: Rows = None) -> Sequence[int] | None:
        if self._clusters is None:
            return None
        return self._clusters if rows is None else select(self._clusters, rows)

    def matrix(self) -> NDArray[np.float64]:
        return self.values


Source = ExampleValues | MatrixValues


def binary_columns(source: Source) -> set[str]:
    """Metrics whose every value is exactly 0 or 1 (Wilson's domain)."""
    return {name for j, name in enumerate(source.names) if set(source.column(j)) <= {0.0, 1.0}}


def custom_finalize(benchmark: Benchmark[Any, Any]) -> Finalize | None:
    """The benchmark's ``finalize`` when it derives metrics, else None (identity)."""
    from hopscore.benchmarks.base import Benchmark as Base

    if type(benchmark).finalize is Base.finalize:
        return None
    return benchmark.finalize


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def set_intervals(
    source: Source, spec: IntervalSpec, *, rows: Rows = None,
    reported: Mapping[str, float] | None = None, finalize: Finalize | None = None,
    binary: set[str] | None = None, cluster_name: str | None = None,
    means: Mapping[str, float] | None = None,
) -> dict[str, Interval | None]:
    """An interval for every reported metric of one set of examples (``rows`` of ``source``).

    A reported metric that is not the plain mean of a stored column is *derived*: it gets a
    Monte Carlo bootstrap interval with ``finalize`` recomputed on every replicate, or None
    when ``finalize`` is unknown or fails on some replicate (no interval rather than a wrong
    one). ``binary`` names the 0/1 metrics (decided once over all examples, so a group uses
    the method of the whole set); by default it is decided on these rows. ``means``: the plain
    means of the stored columns over these rows, when the caller has them.
    """
    names = source.names
    index = {name: j for j, name in enumerate(names)}
    n = source.n if rows is None else len(rows)
    if n == 0:
        return {}
    columns: dict[str, Sequence[float]] = {}

    def column(name: str) -> Sequence[float]:
        if name not in columns:
            columns[name] = source.column(index[name], rows)
        return columns[name]

    if means is None:
        means = {name: math.fsum(column(name)) / n for name in names}
    reported = dict(reported) if reported is not None else dict(means)
    if binary is None:
        binary = {name for name in names if set(column(name)) <= {0.0, 1.0}}
    codes = source.cluster_codes(rows)
    out: dict[str, Interval | None] = {}
    derived = [m for m, v in reported.items() if m not in index or not _same(v, means[m])]
    for metric in reported:
        if metric in derived:
            continue
        method, note = resolve_method(spec.method, binary=metric in binary)
        # every value 0 (or every value 1) in this set: Wilson's interval, never a point
        constant = means[metric] in (0.0, 1.0) and (
            metric in binary or set(column(metric)) == {means[metric]})
        if codes is not None:
            interval = _clustered(column(metric), codes, method, spec, metric in binary or constant)
            if interval is not None:
                interval = _with(interval, note, cluster_name)
        elif method == "bootstrap" and not constant:
            interval = _bootstrap_column(column(metric), spec)
        else:
            if method == "bootstrap":  # a binary metric all 0 or all 1: Wilson, not a point
                method = "wilson"
                note = f"wilson: bootstrap is a single point when every value is {means[metric]:g}"
            zero_one = metric in binary or constant
            m = _binary_moments(n, means[metric]) if zero_one else sample_moments(column(metric))
            interval = _with(analytic_interval(method, m, spec.level, binary=zero_one), note,
                             None)
        out[metric] = interval
    if derived:
        if finalize is None:
            out.update(dict.fromkeys(derived))
        else:
            from hopscore.inference.derived import derived_intervals

            out.update(derived_intervals(source, rows, names, derived, finalize, spec, codes,
                                         cluster_name))
    return {metric: out.get(metric) for metric in reported}


def _binary_moments(n: int, p: float) -> Any:
    from hopscore.inference.ci import Moments

    q = 1 - p
    return Moments(n, p, p * q, p * q * (q - p), p * q * (1 - 3 * p * q), 0.0, 1.0)


def _with(interval: Interval, note: str | None, cluster_name: str | None) -> Interval:
    if note is None and cluster_name is None:
        return interval
    details = dict(interval.details)
    if cluster_name is not None:
        details["cluster"] = cluster_name
    from dataclasses import replace

    return replace(interval, details=details, note=interval.note or note)


def _bootstrap_column(values: Sequence[float], spec: IntervalSpec) -> Interval:
    """Percentile bootstrap of one mean (Monte Carlo, seeded; identical values are pooled)."""
    import numpy as np

    from hopscore.inference.resample import percentile_bounds
    from hopscore.stats import bootstrap_means

    column = np.asarray(values, dtype=np.float64)[:, None]
    replicates = bootstrap_means(column, resamples=spec.resamples,
                                 rng=np.random.default_rng(spec.seed))[:, 0]
    low, high = percentile_bounds(replicates, spec.level)
    n = column.shape[0]
    se = float(column.std(ddof=1)) / math.sqrt(n) if n > 1 else None
    return Interval(low, high, spec.level, "bootstrap", se, n, spec.resamples, spec.seed)


def _clustered(values: Sequence[float], codes: Sequence[int], method: str, spec: IntervalSpec,
               binary: bool) -> Interval | None:
    """An interval of one mean whose examples come in clusters (see the module docstring)."""
    stats = totals_by_cluster(values, codes)
    g, n, mean = stats.count, int(stats.n), stats.mean
    if g < 2:
        return None
    variance = stats.robust_variance()
    se = math.sqrt(variance) if math.isfinite(variance) else None
    details: dict[str, Any] = {"clusters": g}
    note = None
    constant = binary and mean in (0.0, 1.0)
    if constant and method not in ("wilson", "clopper-pearson"):
        note = f"wilson: {method} is a single point when every value is {mean:g}"
        method = "wilson"
    if method in ("wilson", "clopper-pearson") and binary:
        effective = stats.effective_n()
        details["effective_n"] = effective
        rule = wilson if method == "wilson" else clopper_pearson
        low, high = rule(mean * effective, effective, spec.level)
        return Interval(low, high, spec.level, method, se, n, details=details, note=note)
    if method == "t":
        half = t_quantile(spec.level, g - 1) * (se or 0.0)
        return Interval(mean - half, mean + half, spec.level, "t", se, n, details=details)
    import numpy as np

    from hopscore.inference.resample import (
        bca_bounds,
        cluster_jackknife_acceleration,
        cluster_replicate_means,
        percentile_bounds,
    )

    totals = np.asarray(stats.totals, dtype=np.float64)[:, None]
    sizes = np.asarray(stats.sizes, dtype=np.float64)
    replicates = cluster_replicate_means(totals, sizes, spec.resamples,
                                         np.random.default_rng(spec.seed))[:, 0]
    bounds = None
    if method != "bootstrap":
        bounds = bca_bounds(replicates, mean, cluster_jackknife_acceleration(totals[:, 0], sizes),
                            spec.level)
        method = "bca"
        if bounds is None:
            note = "bootstrap: BCa is undefined when every replicate falls on one side"
            method = "bootstrap"
    if bounds is None:
        bounds = percentile_bounds(replicates, spec.level)
    return Interval(bounds[0], bounds[1], spec.level, method, se, n, spec.resamples, spec.seed,
                    details, note)


def attach_intervals(
    benchmark: Benchmark[Any, Any], report: ScoreReport, values: ExampleValues,
    spec: IntervalSpec, group_rows: Mapping[tuple[str, str], Sequence[int]] | None = None,
    means: Mapping[tuple[str, str] | None, Mapping[str, float]] | None = None,
) -> None:
    """Fill ``report.ci`` and each group's ``ci``.

    Derived metrics (``Benchmark.finalize``) are recomputed on every bootstrap replicate; one
    that cannot be (a division by zero on some replicate) gets no interval and a warning. The
    method of each metric is decided once over all examples; every set uses the same seed.
    ``means``: the plain means of every set (None: all examples; (key, label): a group).
    """
    finalize = custom_finalize(benchmark)
    binary = binary_columns(values)
    report.ci = set_intervals(values, spec, reported=report.metrics, finalize=finalize,
                              binary=binary, cluster_name=spec.cluster,
                              means=(means or {}).get(None))
    without = [name for name, interval in report.ci.items() if interval is None]
    rows_of = group_rows if group_rows is not None else values.group_rows()
    for name, group in report.groups.items():
        key = report.group_keys.get(name, "")
        label = group.value if group.value is not None else name
        rows = rows_of.get((key, label), [])
        if not rows:
            continue
        if len(rows) == values.n:  # a group of every example: the overall intervals
            group.ci = dict(report.ci)
            continue
        group.ci = set_intervals(values, spec, rows=rows, reported=group.metrics,
                                 finalize=finalize, binary=binary, cluster_name=spec.cluster,
                                 means=(means or {}).get((key, label)))
        without.extend(f"{metric} ({name})" for metric, iv in group.ci.items() if iv is None)
    if without:
        reason = ("fewer than 2 clusters, or a derived metric that cannot be recomputed on every "
                  "bootstrap replicate" if values.clustered else "a derived metric that cannot "
                  "be recomputed on every bootstrap replicate")
        report.warnings.append(f"no confidence interval for {', '.join(without[:10])} ({reason})")
    if values.clustered and values.unclustered:
        report.warnings.append(
            f"{values.unclustered} of {values.n} examples have no {spec.cluster} cluster; each "
            "is a cluster of its own")
