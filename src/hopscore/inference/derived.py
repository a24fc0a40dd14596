"""Intervals of metrics derived from means (a benchmark's ``finalize``), by the bootstrap.

All metric means are resampled jointly (whole examples, or whole clusters), the derived metric
is recomputed on every replicate, and the interval is BCa (the acceleration from the empirical
influence values: the numerical gradient of ``finalize`` times each example's or cluster's
deviation) or, with ``--ci bootstrap``, the percentile interval. A metric that ``finalize``
cannot compute on some replicate (a division by zero) gets no interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hopscore.inference.ci import Interval, t_quantile
from hopscore.inference.resample import (
    Finalize,
    acceleration,
    bca_bounds,
    cluster_replicate_means,
    gradient,
    percentile_bounds,
)

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from hopscore.inference.spec import IntervalSpec


class Source(Protocol):
    """Where the per-example values come from (:class:`hopscore.inference.values.ExampleValues` or
    ``MatrixValues``): all of them as one (examples x metrics) array."""

    def matrix(self) -> NDArray[np.float64]: ...


def derived_intervals(source: Source, rows: Sequence[int] | None, names: Sequence[str],
                      derived: Sequence[str], finalize: Finalize, spec: IntervalSpec,
                      codes: Sequence[int] | None, cluster_name: str | None
                      ) -> dict[str, Interval | None]:
    matrix = source.matrix()
    values = matrix if rows is None else matrix[np.asarray(rows, dtype=np.intp)]
    n = values.shape[0]
    means = values.mean(axis=0)
    rng = np.random.default_rng(spec.seed)
    details: dict[str, Any] = {}
    if codes is not None:
        inverse = np.unique(np.asarray(codes), return_inverse=True)[1]
        g = int(inverse.max()) + 1
        sizes = np.bincount(inverse, minlength=g).astype(np.float64)
        totals = np.stack([np.bincount(inverse, weights=values[:, j], minlength=g)
                           for j in range(values.shape[1])], axis=1).astype(np.float64)
        replicates = cluster_replicate_means(totals, sizes, spec.resamples, rng)
        units = totals - sizes[:, None] * means[None, :]  # each cluster's deviation
        details = {"clusters": g}
        if cluster_name is not None:
            details["cluster"] = cluster_name
    else:
        from hopscore.inference.resample import bootstrap_means

        replicates = bootstrap_means(values, resamples=spec.resamples, rng=rng, joint=True)
        units = values - means[None, :]
    try:
        whole = finalize(dict(zip(names, means.tolist(), strict=True)))
    except (ArithmeticError, ValueError):
        return dict.fromkeys(derived)
    from hopscore.inference.resample import apply_finalize

    recomputed = apply_finalize(finalize, names, replicates, derived)
    out: dict[str, Interval | None] = {}
    for column, metric in enumerate(derived):
        series = recomputed[:, column]
        if metric not in whole or not np.isfinite(series).all():
            out[metric] = None
            continue
        estimate = float(whole[metric])
        spread = float(series.std(ddof=1)) if series.size > 1 else None
        method, bounds, note = spec.method, None, None
        if method == "t" and spread is not None:
            df = (details["clusters"] if codes is not None else n) - 1
            half = t_quantile(spec.level, max(1, df)) * spread
            bounds = (estimate - half, estimate + half)
        elif method != "bootstrap":
            method = "bca"
            slope = gradient(finalize, names, means, metric)
            accel = 0.0 if slope is None else acceleration(units @ slope)
            bounds = bca_bounds(series, estimate, accel, spec.level)
            if bounds is None:
                method, note = "bootstrap", "bootstrap: BCa is undefined here (z0 infinite)"
        if bounds is None:
            method = "bootstrap"
            bounds = percentile_bounds(series, spec.level)
        if spec.method in ("wilson", "clopper-pearson"):
            note = f"bca: {spec.method} applies to binary (0/1) metrics only"
        out[metric] = Interval(bounds[0], bounds[1], spec.level, method, spread, n,
                               spec.resamples, spec.seed, dict(details, derived=True), note)
    return out
