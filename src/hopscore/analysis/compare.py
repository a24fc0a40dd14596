"""Paired comparison of scored sets on the same examples (pure; printing is in the CLI).

Examples are aligned by id; ids present in only one set are reported and left out, and gold
examples a run has no prediction for (scored 0) are counted per run. Every metric both sets
have is one *row*, overall and per group: the two scores, the difference B - A with its paired
interval, one test (McNemar's exact test for binary metrics, a paired sign-flip permutation
test for the others, whole clusters flipped with ``--cluster``, a paired bootstrap for
metrics derived from means; see :mod:`hopscore.inference.paired`), the minimum detectable
effect at the requested power, and, once every row of a compare call is known,
:func:`adjust_family` adjusts the p-values across all of them (Holm by default) and marks the
significant and the underpowered rows. The star of a row comes from its adjusted p.

One binary metric is the *correctness* metric of the flip table (right->wrong, wrong->right),
overall and per group: the first of :data:`FLIP_PREFERENCE` present, else the first binary
metric, or ``--flip-metric``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.analysis.compare_records import (
    Alignment,
    CompareOptions,
    GroupComparison,
    PairComparison,
    Row,
)
from hopscore.analysis.scored import ScoredSet, cluster_codes
from hopscore.analysis.summary import finalize_for, group_names
from hopscore.errors import HopscoreError
from hopscore.inference.ci import Interval
from hopscore.inference.flip_interval import mean_difference_bounds
from hopscore.inference.multiplicity import adjust
from hopscore.inference.paired import (
    Flips,
    TestResult,
    delta_method,
    difference_interval,
    mcnemar,
    mde_binary,
    mde_continuous,
    sign_flip,
)
from hopscore.inference.resample import Finalize
from hopscore.text.words import agree, counted

FLIP_PREFERENCE = (
    "correct", "match", "judge_accuracy", "judge_correct", "accuracy", "label_accuracy",
    "exact_match", "em", "acc",
)  # fmt: skip
Floats = NDArray[np.float64]


def align(a: ScoredSet, b: ScoredSet) -> Alignment:
    """Common ids in A's order, with their rows in each set."""
    index_b = b.index
    rows_a: list[int] = []
    rows_b: list[int] = []
    ids: list[str] = []
    only_a: list[str] = []
    for row, example_id in enumerate(a.ids):
        other = index_b.get(example_id)
        if other is None:
            only_a.append(example_id)
            continue
        ids.append(example_id)
        rows_a.append(row)
        rows_b.append(other)
    index_a = a.index
    only_b = [example_id for example_id in b.ids if example_id not in index_a]
    return Alignment(ids, np.array(rows_a, dtype=np.intp), np.array(rows_b, dtype=np.intp),
                     only_a, only_b)



def binary_metrics(a: Floats, b: Floats, names: list[str]) -> set[str]:
    """Metrics whose every value is 0 or 1 in both sets."""
    return {name for j, name in enumerate(names)
            if all(bool(np.isin(v[:, j], (0.0, 1.0)).all()) for v in (a, b))}


def choose_flip_metric(names: list[str], binary: set[str], wanted: str | None) -> str | None:
    if wanted is not None:
        if wanted not in names:
            raise HopscoreError(f"--flip-metric {wanted!r} is not a metric of both inputs "
                                f"(common metrics: {', '.join(names)})")
        return wanted
    for name in FLIP_PREFERENCE:
        if name in binary:
            return name
    return next((name for name in names if name in binary), None)


def table_of(a: Floats, b: Floats) -> Flips:
    right_a, right_b = a >= 0.5, b >= 0.5
    rw = int(np.count_nonzero(right_a & ~right_b))
    wr = int(np.count_nonzero(~right_a & right_b))
    both = int(np.count_nonzero(right_a & right_b))
    return Flips(both, int(a.size) - both - rw - wr, rw, wr)


def _cluster_sums(values: Floats, codes: NDArray[np.intp]) -> tuple[Floats, Floats]:
    """Per-cluster totals of ``values`` (rows x columns) and cluster sizes."""
    inverse = np.unique(codes, return_inverse=True)[1]
    g = int(inverse.max()) + 1
    sizes = np.bincount(inverse, minlength=g).astype(np.float64)
    totals = np.stack([np.bincount(inverse, weights=values[:, j], minlength=g)
                       for j in range(values.shape[1])], axis=1).astype(np.float64)
    return totals, sizes


def _row(metric: str, group: str | None, va: Floats, vb: Floats, binary: bool,
         options: CompareOptions, codes: NDArray[np.intp] | None) -> Row:
    """Difference, interval, test and minimum detectable effect of one metric on one set."""
    n = int(va.size)
    d = vb - va
    flips = table_of(va, vb) if binary else None
    unreachable = False
    method, note = delta_method(options.ci, binary=binary)
    if codes is not None:
        interval, test, se = _clustered_row(d, codes, method, options)
        mde = None if se is None else mde_continuous(se, alpha=options.alpha, power=options.power)
    else:
        interval = difference_interval(d.tolist(), method, options.level, flips=flips,
                                       resamples=options.resamples, seed=options.seed,
                                       bounds=mean_difference_bounds(va, vb))
        if binary:
            assert flips is not None
            test = mcnemar(flips, mid_p=options.mid_p)
            mde = mde_binary(n, flips.discordant / n, alpha=options.alpha, power=options.power)
            if not math.isfinite(mde):
                mde = None
                unreachable = True
        else:
            test = sign_flip(d.tolist(), permutations=options.permutations, seed=options.seed)
            sd = float(d.std(ddof=1)) if n > 1 else math.nan
            mde = mde_continuous(sd / math.sqrt(n), alpha=options.alpha, power=options.power) \
                if n > 1 and sd > 0 else None
    if note and interval is not None and interval.note is None:
        from dataclasses import replace

        interval = replace(interval, note=note)
    return Row(metric, group, n, float(va.mean()), float(vb.mean()), interval, binary, flips,
               test, mde, mde_unreachable=unreachable)


def _clustered_row(d: Floats, codes: NDArray[np.intp], method: str, options: CompareOptions
                   ) -> tuple[Interval | None, TestResult, float | None]:
    from hopscore.inference.clusters import ClusterStats
    from hopscore.inference.paired import cluster_t_interval
    from hopscore.inference.resample import (
        bca_bounds,
        cluster_jackknife_acceleration,
        cluster_replicate_means,
        percentile_bounds,
    )

    totals, sizes = _cluster_sums(d[:, None], codes)
    g = int(sizes.size)
    test = sign_flip(totals[:, 0].tolist(), permutations=options.permutations, seed=options.seed,
                     name="cluster-permutation")
    if g < 2:
        return None, test, None
    stats = ClusterStats(totals[:, 0].tolist(), sizes.tolist())
    variance = stats.robust_variance()
    se = math.sqrt(variance) if math.isfinite(variance) else None
    mean = float(d.mean())
    details: dict[str, Any] = {"clusters": g}
    if options.clusters is not None:
        details["cluster"] = options.clusters.name
    if method == "t":
        low, high = cluster_t_interval(mean, se or 0.0, g, options.level)
        return Interval(low, high, options.level, "t", se, int(d.size), details=details), test, se
    replicates = cluster_replicate_means(totals, sizes, options.resamples,
                                         np.random.default_rng(options.seed))[:, 0]
    note = None if method in ("bca", "bootstrap") else f"bca: {method} has no clustered form here"
    bounds = None
    used = "bootstrap"
    if method != "bootstrap":
        bounds = bca_bounds(replicates, mean, cluster_jackknife_acceleration(totals[:, 0], sizes),
                            options.level)
        used = "bca"
    if bounds is None:
        if method != "bootstrap":
            note = "bootstrap: BCa is undefined when every replicate falls on one side"
        used = "bootstrap"
        bounds = percentile_bounds(replicates, options.level)
    interval = Interval(bounds[0], bounds[1], options.level, used, se, int(d.size),
                        options.resamples, options.seed, details, note)
    return interval, test, se


def _derived_rows(finalize: Finalize, names: list[str], derived: list[str], va: Floats,
                  vb: Floats, group: str | None, options: CompareOptions,
                  codes: NDArray[np.intp] | None) -> list[Row]:
    """Metrics derived from means: a paired bootstrap of both sides' means (whole examples or
    clusters), the metric recomputed on each; a shifted-bootstrap p-value."""
    from hopscore.inference.resample import (
        apply_finalize,
        bootstrap_means,
        cluster_replicate_means,
        percentile_bounds,
    )

    m = len(names)
    both = np.hstack([va, vb])
    rng = np.random.default_rng(options.seed)
    if codes is not None:
        totals, sizes = _cluster_sums(both, codes)
        replicates = cluster_replicate_means(totals, sizes, options.resamples, rng)
    else:
        replicates = bootstrap_means(both, resamples=options.resamples, rng=rng, joint=True)
    fa = apply_finalize(finalize, names, replicates[:, :m], derived)
    fb = apply_finalize(finalize, names, replicates[:, m:], derived)
    try:
        whole_a = finalize(dict(zip(names, va.mean(axis=0).tolist(), strict=True)))
        whole_b = finalize(dict(zip(names, vb.mean(axis=0).tolist(), strict=True)))
    except (ArithmeticError, ValueError):
        return []
    rows = []
    for column, metric in enumerate(derived):
        series = fb[:, column] - fa[:, column]
        if metric not in whole_a or metric not in whole_b or not np.isfinite(series).all():
            continue
        a, b = float(whole_a[metric]), float(whole_b[metric])
        delta = b - a
        low, high = percentile_bounds(series, options.level)
        spread = float(series.std(ddof=1))
        interval = Interval(low, high, options.level, "bootstrap", spread, int(va.shape[0]),
                            options.resamples, options.seed, {"derived": True})
        extreme = int(np.count_nonzero(np.abs(series - delta) >= abs(delta) - 1e-12))
        test = TestResult("paired-bootstrap", (1 + extreme) / (1 + options.resamples),
                          permutations=options.resamples)
        mde = mde_continuous(spread, alpha=options.alpha, power=options.power) if spread > 0 \
            else None
        rows.append(Row(metric, group, int(va.shape[0]), a, b, interval, False, None, test, mde,
                        derived=True))
    return rows


def compare_pair(a: ScoredSet, b: ScoredSet, options: CompareOptions | None = None
                 ) -> PairComparison:
    """Compare B against A on their common ids (p-values unadjusted: see adjust_family)."""
    options = options or CompareOptions()
    alignment = align(a, b)
    if not alignment.ids:
        raise HopscoreError(f"{a.label} and {b.label} have no example id in common")
    names = [name for name in a.names if name in b.names]
    if not names:
        raise HopscoreError(
            f"{a.label} and {b.label} have no metric in common "
            f"({', '.join(a.names)} vs {', '.join(b.names)})"
        )
    if a.benchmark and b.benchmark and a.benchmark != b.benchmark:
        raise HopscoreError(f"{a.label} scores {a.benchmark} but {b.label} scores {b.benchmark}")
    warnings: list[str] = []
    for label, only in ((a.label, alignment.only_a), (b.label, alignment.only_b)):
        if only:
            warnings.append(f"{counted(len(only), 'id')} only in {label} "
                            f"{agree(len(only), 'is', 'are')} left out "
                            f"(first: {', '.join(only[:5])})")
    n = len(alignment.ids)
    missing_a = int(np.count_nonzero(a.missing[alignment.rows_a]))
    missing_b = int(np.count_nonzero(b.missing[alignment.rows_b]))
    for label, count in ((a.label, missing_a), (b.label, missing_b)):
        if count:
            warnings.append(f"{label} has no prediction for {count} of the "
                            f"{counted(n, 'paired example')}; "
                            f"{agree(count, 'it scores', 'they score')} 0 (wrong) in this "
                            "comparison")
    columns_a = np.array([a.names.index(name) for name in names], dtype=np.intp)
    columns_b = np.array([b.names.index(name) for name in names], dtype=np.intp)
    values_a = a.values[np.ix_(alignment.rows_a, columns_a)]
    values_b = b.values[np.ix_(alignment.rows_b, columns_b)]
    all_names = list(names)
    all_a, all_b = values_a, values_b
    finalize = finalize_for(a.benchmark or b.benchmark)
    derived: list[str] = []
    if finalize is not None:
        # a reported value that is not the plain mean of its column is derived from the means
        # (a benchmark's finalize, e.g. an F1 of summed counts): it is bootstrapped, not
        # averaged per example
        derived = [name for name in a.reported if name in b.reported and (
            name not in names or not _is_mean(a, name) or not _is_mean(b, name))]
        keep = [j for j, name in enumerate(names) if name not in derived]
        names = [names[j] for j in keep]
        values_a, values_b = values_a[:, keep], values_b[:, keep]
    binary = binary_metrics(values_a, values_b, names)
    flip = choose_flip_metric(names, binary, options.flip_metric)
    if flip is not None and flip not in binary:
        raise HopscoreError(f"--flip-metric {flip!r} is not binary (0/1) in both inputs")
    codes, cluster_name = _aligned_clusters(a, b, alignment, options)

    def rows_of(rows: NDArray[np.intp] | None, group: str | None) -> list[Row]:
        sub_a = values_a if rows is None else values_a[rows]
        sub_b = values_b if rows is None else values_b[rows]
        sub_codes = None if codes is None else (codes if rows is None else codes[rows])
        out = [_row(name, group, sub_a[:, j], sub_b[:, j], name in binary, options, sub_codes)
               for j, name in enumerate(names)]
        if derived and finalize is not None:
            full_a = all_a if rows is None else all_a[rows]
            full_b = all_b if rows is None else all_b[rows]
            out.extend(_derived_rows(finalize, all_names, derived, full_a, full_b, group,
                                     options, sub_codes))
        return out

    metrics = rows_of(None, None)
    flip_column = names.index(flip) if flip is not None else None
    groups = []
    for name, key, label in group_names(a):
        column = a.groups.get(key)
        if column is None or label not in column.labels:
            continue
        group_codes = column.codes[alignment.rows_a]
        rows = np.flatnonzero(group_codes == column.labels.index(label))
        if rows.size == 0:
            continue
        flips = None
        if flip_column is not None:
            flips = table_of(values_a[rows, flip_column], values_b[rows, flip_column])
        group_rows = {row.metric: row for row in rows_of(rows, name)}
        groups.append(GroupComparison(name, key, label, int(rows.size), group_rows, flips))
    right_to_wrong = wrong_to_right = np.empty(0, dtype=np.intp)
    if flip_column is not None:
        right_a = values_a[:, flip_column] >= 0.5
        right_b = values_b[:, flip_column] >= 0.5
        right_to_wrong = np.flatnonzero(right_a & ~right_b)
        wrong_to_right = np.flatnonzero(~right_a & right_b)
    pair = PairComparison(a, b, alignment, metrics, groups, flip, right_to_wrong, wrong_to_right,
                          options, missing_a, missing_b, cluster_name,
                          None if codes is None else int(np.unique(codes).size),
                          warnings + a.warnings + b.warnings)
    return pair


def _aligned_clusters(a: ScoredSet, b: ScoredSet, alignment: Alignment, options: CompareOptions
                      ) -> tuple[NDArray[np.intp] | None, str | None]:
    """Cluster codes of the paired examples: --cluster / --cluster-file, else the clusters A
    (or B) recorded when it was scored."""
    for scored, rows in ((a, alignment.rows_a), (b, alignment.rows_b)):
        found = cluster_codes(scored, options.clusters)
        if found is not None:
            codes, name = found
            return np.asarray(codes, dtype=np.intp)[rows], name
        if options.clusters is not None:
            break
    return None, None


def _is_mean(scored: ScoredSet, name: str) -> bool:
    """Whether the reported value of ``name`` is the plain mean of its per-example column."""
    reported = scored.reported.get(name)
    if reported is None or name not in scored.names:
        return True
    mean = float(scored.values[:, scored.names.index(name)].mean())
    return math.isclose(float(reported), mean, rel_tol=1e-9, abs_tol=1e-12)


def adjust_family(pairs: list[PairComparison], options: CompareOptions) -> None:
    """Adjust the p-values of every row of every pair together; mark significant rows (adjusted
    p below alpha) and underpowered ones (not significant, |delta| below the MDE)."""
    rows = [row for pair in pairs for row in pair.rows() if row.test is not None]
    adjusted = adjust([row.test.p for row in rows if row.test is not None], options.correction)
    for row, p in zip(rows, adjusted, strict=True):
        assert row.test is not None
        row.test = TestResult(row.test.name, row.test.p, p, row.test.permutations)
        row.significant = p < options.alpha
        row.underpowered = not row.significant and (
            row.mde_unreachable or (row.mde is not None and abs(row.delta) < row.mde))


def compare_to_baseline(sets: list[ScoredSet], baseline: int = 0,
                        options: CompareOptions | None = None) -> list[PairComparison]:
    """Every other set against ``sets[baseline]``, p-values adjusted across all of them."""
    if len(sets) < 2:
        raise HopscoreError("compare needs at least two inputs")
    options = options or CompareOptions()
    base = sets[baseline]
    pairs = [compare_pair(base, other, options) for i, other in enumerate(sets) if i != baseline]
    adjust_family(pairs, options)
    return pairs


def family_size(pairs: list[PairComparison]) -> int:
    return sum(1 for pair in pairs for row in pair.rows() if row.test is not None)
