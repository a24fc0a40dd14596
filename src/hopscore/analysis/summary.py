"""The ``metrics.json``-shaped summary of a scored set, with intervals everywhere.

Score directories written by this version already carry ``ci`` blocks; older ones (or files
scored with ``--resamples 0``), judge and sql-match files get them computed here from the
per-example values, with the benchmark's ``finalize`` for derived metrics when it is known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.analysis.scored import ScoredSet
from hopscore.errors import HopscoreError
from hopscore.inference.ci import intervals_to_json
from hopscore.inference.intervals import binary_columns, set_intervals
from hopscore.inference.resample import Finalize
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import MatrixValues


def finalize_for(benchmark: str | None) -> Finalize | None:
    """The registered benchmark's ``finalize`` when it derives metrics, else None."""
    if not benchmark:
        return None
    from hopscore import benchmarks
    from hopscore.scores.scoring import custom_finalize

    try:
        return custom_finalize(benchmarks.get(benchmark))
    except HopscoreError:
        return None


def group_label(name: str, key: str | None) -> str:
    """A group's label from its name in metrics.json (``"bridge"`` or ``"type=bridge"``)."""
    if key and name.startswith(f"{key}="):
        return name[len(key) + 1 :]
    return name


def group_rows(scored: ScoredSet, key: str, label: str) -> NDArray[np.intp]:
    column = scored.groups.get(key)
    if column is None or label not in column.labels:
        return np.empty(0, dtype=np.intp)
    return np.flatnonzero(column.codes == column.labels.index(label))


def group_names(scored: ScoredSet) -> list[tuple[str, str, str]]:
    """``(name, key, label)`` of every group, named as ``hopscore score`` names them."""
    summary_groups = scored.summary.get("groups")
    if isinstance(summary_groups, dict) and summary_groups:
        out = []
        for name, info in summary_groups.items():
            key = info.get("key") if isinstance(info, dict) else None
            key = key if isinstance(key, str) else _guess_key(scored, name)
            out.append((name, key, group_label(name, key)))
        return out
    pairs = [(key, label) for key, column in scored.groups.items() for label in column.labels]
    counts: dict[str, int] = {}
    for _, label in pairs:
        counts[label] = counts.get(label, 0) + 1
    return [(label if counts[label] == 1 else f"{key}={label}", key, label) for key, label in pairs]


def _guess_key(scored: ScoredSet, name: str) -> str:
    for key, column in scored.groups.items():
        if name in column.labels or name.startswith(f"{key}="):
            return key
    return ""


def _stale(ci: Any, spec: IntervalSpec) -> bool:
    """Whether stored intervals were made otherwise than ``spec`` asks (or by an older
    hopscore, whose intervals do not name their method)."""
    if not isinstance(ci, dict):
        return True
    for interval in ci.values():
        if interval is None:
            continue
        if not isinstance(interval, dict) or "method" not in interval:
            return True
        if interval.get("level") != spec.level or interval.get("cluster") != spec.cluster:
            return True
        if spec.method not in ("auto", interval["method"]) and not interval.get("note"):
            return True
    return False


def ensure_summary(
    scored: ScoredSet, spec: IntervalSpec | None = None,
    clusters: tuple[Sequence[int], str] | None = None,
) -> dict[str, Any]:
    """Fill ``scored.summary`` (metrics, ci, groups with ci) where parts are absent, and
    recompute intervals that were made by another method, level or clustering than ``spec``.
    ``clusters``: one cluster code per example and the clustering's name."""
    spec = replace(spec or IntervalSpec(), cluster=None if clusters is None else clusters[1])
    summary = scored.summary
    finalize = finalize_for(scored.benchmark)
    if "metrics" not in summary:
        means = dict(zip(scored.names, scored.values.mean(axis=0).tolist(), strict=True))
        summary["metrics"] = dict(finalize(means)) if finalize else means
        summary.setdefault("benchmark", scored.benchmark or scored.kind)
        summary.setdefault("n_gold", scored.n)
    source = MatrixValues(scored.values, scored.names, None if clusters is None else clusters[0])
    binary = binary_columns(source)
    options: dict[str, Any] = {"finalize": finalize, "binary": binary,
                               "cluster_name": spec.cluster}
    recompute = spec.enabled and _stale(summary.get("ci"), spec)
    if recompute:
        summary["ci"] = intervals_to_json(set_intervals(
            source, spec, reported=summary["metrics"], **options))
        summary["ci_settings"] = spec.to_json()
    groups = summary.get("groups")
    if not isinstance(groups, dict) or not groups:
        groups = summary["groups"] = {}
    for name, key, label in group_names(scored):
        rows = group_rows(scored, key, label)
        info = groups.setdefault(name, {"n": int(rows.size), "key": key})
        if rows.size == 0:
            continue
        if "metrics" not in info:
            means = dict(zip(scored.names, scored.values[rows].mean(axis=0).tolist(), strict=True))
            info["metrics"] = dict(finalize(means)) if finalize else means
        if spec.enabled and (recompute or "ci" not in info):
            info["ci"] = intervals_to_json(set_intervals(
                source, spec, rows=rows.tolist(), reported=info["metrics"], **options))
    return summary
