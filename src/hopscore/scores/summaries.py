"""The summaries of a scored set: each group's means and every set's confidence intervals,
from the kept per-example values (:mod:`hopscore.inference.values`).

Each column of a set (all examples, or a group) is read once (:func:`column_stats`): its
plain sum (in example order, as the official scripts add) and, when intervals are wanted,
its distinct values counted, from which the intervals' moments and the 0/1 test come.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import reduce
from operator import add
from typing import TYPE_CHECKING, Any

from hopscore.benchmarks.base import Benchmark, E, P
from hopscore.inference.values import NUMPY_ROWS
from hopscore.scores.results import GroupSummary, ScoreReport

if TYPE_CHECKING:
    from hopscore.inference.resample import Finalize
    from hopscore.inference.spec import IntervalSpec
    from hopscore.inference.values import ExampleValues

#: a set's kept counts of each column's distinct values (None: too many distinct values)
Counts = list[Counter[float] | None]
#: which set: None for all examples, else (group key, label)
SetKey = tuple[str, str] | None
#: with numpy already imported, a set of this many rows is read with it (fewer cost more in
#: numpy's calls than they save)
NUMPY_LOADED_ROWS = 2_000


def column_stats(values: ExampleValues, rows: Sequence[int] | None,
                 count: Sequence[bool] | None, one_by_one: bool | Collection[str] = False
                 ) -> tuple[list[float], Counts]:
    """Each column's plain sum over ``rows`` (None: every example), and, for the columns
    ``count`` marks, its distinct values counted (kept when at most a quarter of the values
    are distinct, as :func:`~hopscore.inference.ci.moments` would use them).

    The sum is the official scorer's (:func:`plain_sum`): the values added one by one in
    example order for the metrics ``one_by_one`` names (True: all), else Python's ``sum``
    (:attr:`~hopscore.benchmarks.base.Scoring.adds_one_by_one`). A large set
    (:data:`NUMPY_ROWS` rows, or numpy already loaded) is read with numpy, with the same sums."""
    size = values.n if rows is None else len(rows)
    looped = one_by_one_columns(values.names, one_by_one)
    if size >= NUMPY_ROWS or (size >= NUMPY_LOADED_ROWS and "numpy" in sys.modules):
        return _column_stats_numpy(values, rows, count, looped)
    sums: list[float] = []
    counts: Counts = []
    for j in range(len(values.names)):
        column = values.column(j, rows)
        sums.append(plain_sum(column, looped[j]))
        kept = None
        if count is not None and count[j]:
            kept = Counter(column)
            if len(kept) * 4 > len(column):
                kept = None
        counts.append(kept)
    return sums, counts


#: Python's ``sum`` of floats compensates its rounding from 3.12 on; before, it adds one by one
_SUM_COMPENSATES = sys.version_info >= (3, 12)


def one_by_one_columns(names: Sequence[str], one_by_one: bool | Collection[str]) -> list[bool]:
    """For each metric of ``names``, whether its official scorer adds its values one by one
    (``one_by_one``: True for all, False for none, else the names of those that are)."""
    if isinstance(one_by_one, bool):
        return [one_by_one] * len(names)
    return [name in one_by_one for name in names]


def plain_sum(values: Iterable[float], one_by_one: bool) -> float:
    """The sum an official scorer computes: the values added one by one from 0, as its
    ``total += value`` loop does (``one_by_one``), or Python's ``sum`` (``sum(scores)``),
    which differ in the last digits from Python 3.12 on."""
    if one_by_one and _SUM_COMPENSATES:
        return reduce(add, values, 0)
    return sum(values)


def _column_stats_numpy(values: ExampleValues, rows: Sequence[int] | None,
                        count: Sequence[bool] | None, looped: Sequence[bool] | None = None
                        ) -> tuple[list[float], Counts]:
    """:func:`column_stats` of a large set at C speed, with the same results (``looped``: which
    columns are summed one by one): a one-by-one sum is ``np.cumsum``'s last element (a running
    sum, not numpy's pairwise ``sum``), Python's ``sum`` is itself; a 0/1 column's counts are
    two comparisons, any other's ``np.unique``; a column holding a NaN is counted by Python's
    Counter (to which every NaN is a value of its own)."""
    import numpy as np

    matrix = values.matrix()
    picked = None if rows is None else np.asarray(rows, dtype=np.intp)
    sums: list[float] = []
    counts: Counts = []
    for j in range(len(values.names)):  # a column at a time: one column's copy in memory
        column = np.ascontiguousarray(matrix[:, j]) if picked is None else matrix[picked, j]
        n = len(column)
        if _SUM_COMPENSATES and not (looped is not None and looped[j]):
            sums.append(sum(column.tolist()))
        elif n:
            # + 0.0: an all -0.0 column sums to 0.0, as ``0 + -0.0`` does; an overflow gives
            # inf, as Python's addition does, without numpy's warning
            with np.errstate(over="ignore", invalid="ignore"):
                sums.append(float(np.cumsum(column)[-1]) + 0.0)
        else:
            sums.append(0)
        kept = None
        if count is not None and count[j]:
            zeros = int(np.count_nonzero(column == 0.0))
            ones = int(np.count_nonzero(column == 1.0))
            if zeros + ones == n:
                kept = Counter({value: c for value, c in ((0.0, zeros), (1.0, ones)) if c})
            elif np.isnan(column).any():
                kept = Counter(column.tolist())
            else:
                distinct, times = np.unique(column, return_counts=True)
                if len(distinct) * 4 <= n:
                    kept = Counter(dict(zip(distinct.tolist(), times.tolist(), strict=True)))
            if kept is not None and len(kept) * 4 > n:
                kept = None
        counts.append(kept)
    return sums, counts


def fill_groups(
    benchmark: Benchmark[E, P], report: ScoreReport, kept: ExampleValues,
    group_rows: Mapping[tuple[str, str], Sequence[int]],
    plain: dict[SetKey, dict[str, float]], counts: dict[SetKey, Counts] | None = None,
) -> None:
    """Each group's means (into ``plain``, and, with ``counts``, each non-binary column's
    distinct values counted, for the intervals); a group is named by its value ("bridge"), or
    "key=value" where two keys share a value."""
    order = {key: i for i, key in enumerate(benchmark.group_keys)}
    values_seen: dict[str, int] = {}
    for _, value in group_rows:
        values_seen[value] = values_seen.get(value, 0) + 1
    names = kept.names
    count = None
    remainders: dict[tuple[str, str], list[tuple[str, str]]] = {}
    if counts is not None:  # the 0/1 columns (all examples') need no moments
        count = [c is None or not set(c) <= {0.0, 1.0} for c in counts[None]]
        remainders = _remainders(group_rows, kept.n)
    for key, value in sorted(group_rows,
                             key=lambda kv: (order.get(kv[0], len(order)), kv[0], kv[1])):
        rows = group_rows[(key, value)]
        if not rows:
            continue
        name = value if values_seen[value] == 1 else f"{key}={value}"
        if len(rows) == kept.n and None in plain:  # every example: the same sums
            means = plain[(key, value)] = dict(plain[None])
            if counts is not None:
                counts[(key, value)] = counts[None]
        else:
            sums, kept_counts = column_stats(
                kept, rows, None if (key, value) in remainders else count,
                benchmark.adds_one_by_one)
            means = plain[(key, value)] = {
                metric: sums[j] / len(rows) for j, metric in enumerate(names)}
            if counts is not None:
                counts[(key, value)] = kept_counts
        report.groups[name] = GroupSummary(n=len(rows), metrics=benchmark.finalize(means),
                                           value=value)
        report.group_keys[name] = key
    if counts is not None and count is not None:
        for (key, value), others in remainders.items():
            counts[(key, value)] = _remainder_counts(
                counts, others, count, len(group_rows[(key, value)]))


def _remainders(group_rows: Mapping[tuple[str, str], Sequence[int]], n: int
                ) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Per group key whose labels split every example (each in exactly one group): its
    largest group, whose counts are all examples' less the other groups' (not counted
    again), and those other groups."""
    by_key: dict[str, list[tuple[str, str]]] = {}
    for key, value in group_rows:
        if group_rows[(key, value)]:
            by_key.setdefault(key, []).append((key, value))
    out = {}
    for sets in by_key.values():
        if len(sets) > 1 and sum(len(group_rows[s]) for s in sets) == n:
            largest = max(sets, key=lambda s: len(group_rows[s]))
            out[largest] = [s for s in sets if s != largest]
    return out


def _remainder_counts(counts: Mapping[SetKey, Counts], others: Sequence[tuple[str, str]],
                      count: Sequence[bool], size: int) -> Counts:
    """A group's counts as all examples' less the other groups' (None where one is
    unknown, or where more than a quarter of the group's values are distinct)."""
    out: Counts = []
    for j, wanted in enumerate(count):
        total = counts[None][j]
        parts = [counts[other][j] for other in others]
        if not wanted or total is None or any(part is None for part in parts):
            out.append(None)
            continue
        left = total.copy()
        for part in parts:
            left.subtract(part)
        kept = +left  # the values this group holds (a count above 0)
        out.append(kept if len(kept) * 4 <= size else None)
    return out


def custom_finalize(benchmark: Benchmark[Any, Any]) -> Finalize | None:
    """The benchmark's ``finalize`` when it derives metrics, else None (identity)."""
    if type(benchmark).finalize is Benchmark.finalize:
        return None
    return benchmark.finalize


def attach_intervals(
    benchmark: Benchmark[Any, Any], report: ScoreReport, values: ExampleValues,
    spec: IntervalSpec, group_rows: Mapping[tuple[str, str], Sequence[int]] | None = None,
    means: Mapping[SetKey, Mapping[str, float]] | None = None,
    counts: Mapping[SetKey, Counts] | None = None,
) -> None:
    """Fill ``report.ci`` and each group's ``ci``.

    Derived metrics (``Benchmark.finalize``) are recomputed on every bootstrap replicate; one
    that cannot be (a division by zero on some replicate) gets no interval and a warning. The
    method of each metric is decided once over all examples; every set uses the same seed.
    ``means``: the plain means of every set (None: all examples; (key, label): a group), and
    ``counts`` its columns' distinct values (:func:`column_stats`), when the caller has them.
    """
    from hopscore.inference.intervals import binary_columns, set_intervals

    finalize = custom_finalize(benchmark)
    names = values.names

    def counted(key: SetKey) -> dict[str, Counter[float] | None] | None:
        kept = None if counts is None else counts.get(key)
        return None if kept is None else dict(zip(names, kept, strict=True))

    binary = binary_columns(values, None if counts is None else counts.get(None))
    report.ci = set_intervals(values, spec, reported=report.metrics, finalize=finalize,
                              binary=binary, cluster_name=spec.cluster,
                              means=(means or {}).get(None), counts=counted(None))
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
                                 means=(means or {}).get((key, label)),
                                 counts=counted((key, label)))
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


