"""The confidence interval of every reported metric of a set of examples.

:func:`set_intervals` makes the interval of every reported metric of one set of examples (all
of them, or a group) from its per-example values (:mod:`hopscore.inference.values`) by the
method :class:`~hopscore.inference.spec.IntervalSpec` asks for (see
:mod:`hopscore.inference.ci`): the defaults (Wilson for binary metrics, BCa from the sample's
cumulants for the others) run in pure Python over the stored columns, so a plain ``hopscore
score`` never imports numpy; Monte Carlo methods (``--ci bootstrap``, clusters resampled by
the bootstrap, metrics derived from means) use :mod:`hopscore.inference.resample`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hopscore.inference.ci import (
    Interval,
    analytic_interval,
    clopper_pearson,
    is_binary,
    moments_of_distinct,
    resolve_method,
    t_quantile,
    wilson,
)
from hopscore.inference.ci import moments as sample_moments
from hopscore.inference.clusters import totals_by_cluster

if TYPE_CHECKING:
    from hopscore.inference.resample import Finalize
    from hopscore.inference.spec import IntervalSpec
    from hopscore.inference.values import Rows, Source


def binary_columns(source: Source, counts: Sequence[Counter[float] | None] | None = None
                   ) -> set[str]:
    """Metrics whose every value is exactly 0 or 1 (Wilson's domain); ``counts``: each
    column's distinct values counted, where the caller has them (None: read the column)."""
    out = set()
    for j, name in enumerate(source.names):
        kept = None if counts is None else counts[j]
        if is_binary(source.column(j) if kept is None else kept):
            out.add(name)
    return out


def _same(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def set_intervals(
    source: Source, spec: IntervalSpec, *, rows: Rows = None,
    reported: Mapping[str, float] | None = None, finalize: Finalize | None = None,
    binary: set[str] | None = None, cluster_name: str | None = None,
    means: Mapping[str, float] | None = None,
    counts: Mapping[str, Counter[float] | None] | None = None,
) -> dict[str, Interval | None]:
    """An interval for every reported metric of one set of examples (``rows`` of ``source``).

    A reported metric that is not the plain mean of a stored column is *derived*: it gets a
    Monte Carlo bootstrap interval with ``finalize`` recomputed on every replicate, or None
    when ``finalize`` is unknown or fails on some replicate (no interval rather than a wrong
    one). ``binary`` names the 0/1 metrics (decided once over all examples, so a group uses
    the method of the whole set); by default it is decided on these rows. ``means``: the plain
    means of the stored columns over these rows, and ``counts``: each column's distinct values
    counted over these rows (None where there were too many to keep), when the caller has them.
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
        binary = {name for name in names if is_binary(column(name))}
    codes = source.cluster_codes(rows)
    counted = counts or {}
    out: dict[str, Interval | None] = {}
    derived = [m for m, v in reported.items() if m not in index or not _same(v, means[m])]
    for metric in reported:
        if metric in derived:
            continue
        method, note = resolve_method(spec.method, binary=metric in binary)
        # every value 0 (or every value 1) in this set: Wilson's interval, never a point
        kept = counted.get(metric)
        constant = means[metric] in (0.0, 1.0) and (metric in binary or (
            set(column(metric)) if kept is None else kept.keys()) == {means[metric]})
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
            m = _binary_moments(n, means[metric]) if zero_one else (
                moments_of_distinct(kept, n) if kept is not None else None) or sample_moments(
                    column(metric))
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

    from hopscore.inference.resample import bootstrap_means, percentile_bounds

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
