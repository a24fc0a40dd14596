"""Paired comparison of scored sets on the same examples (pure; printing is in the CLI).

Examples are aligned by id; ids present in only one set are reported and left out. Every metric
both sets have gets the paired bootstrap interval of ``B - A``; binary metrics (every value 0 or
1 in both sets, and not a precision/recall/F1) also get McNemar's exact test. One binary metric
is the *correctness* metric of the flip table (right->wrong, wrong->right), overall and per
group: the first of :data:`FLIP_PREFERENCE` present, else the first binary metric, or
``--flip-metric``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.analysis.scored import ScoredSet
from hopscore.analysis.summary import finalize_for, group_names
from hopscore.errors import HopscoreError
from hopscore.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Difference,
    McNemar,
    is_binary,
    mcnemar_exact,
    paired_difference,
)

FLIP_PREFERENCE = (
    "correct", "match", "judge_accuracy", "judge_correct", "accuracy", "label_accuracy",
    "exact_match", "em", "acc",
)  # fmt: skip
_CONTINUOUS_HINTS = ("f1", "prec", "recall")


@dataclass(frozen=True, slots=True)
class Alignment:
    ids: list[str]
    rows_a: NDArray[np.intp]
    rows_b: NDArray[np.intp]
    only_a: list[str]
    only_b: list[str]


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


@dataclass(frozen=True, slots=True)
class MetricComparison:
    metric: str
    difference: Difference | None
    binary: bool
    mcnemar: McNemar | None


@dataclass(frozen=True, slots=True)
class GroupComparison:
    name: str
    key: str
    label: str
    n: int
    metrics: dict[str, Difference | None]
    flips: McNemar | None


@dataclass(frozen=True, slots=True)
class Flip:
    id: str
    direction: str  # "right->wrong" or "wrong->right"
    groups: dict[str, str]
    prediction_a: str | None
    prediction_b: str | None
    gold: tuple[str, ...]


@dataclass(slots=True)
class PairComparison:
    a: ScoredSet
    b: ScoredSet
    alignment: Alignment
    metrics: list[MetricComparison]
    groups: list[GroupComparison]
    flip_metric: str | None
    #: aligned positions of the flipped examples
    right_to_wrong: NDArray[np.intp]
    wrong_to_right: NDArray[np.intp]
    warnings: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.alignment.ids)

    def flips(self, limit: int | None = None) -> list[Flip]:
        out: list[Flip] = []
        for direction, positions in (("right->wrong", self.right_to_wrong),
                                     ("wrong->right", self.wrong_to_right)):
            for position in positions[:limit].tolist():
                row_a = int(self.alignment.rows_a[position])
                row_b = int(self.alignment.rows_b[position])
                out.append(Flip(
                    self.alignment.ids[position], direction, self.a.groups_of(row_a),
                    self.a.predictions[row_a], self.b.predictions[row_b],
                    self.a.gold[row_a] or self.b.gold[row_b],
                ))  # fmt: skip
        return out

    def to_json(self, flip_limit: int | None = None) -> dict[str, Any]:
        return {
            "a": self.a.label, "b": self.b.label, "a_source": str(self.a.source),
            "b_source": str(self.b.source), "n_paired": self.n,
            "only_a": self.alignment.only_a, "only_b": self.alignment.only_b,
            "metrics": {
                m.metric: {
                    "binary": m.binary,
                    "difference": None if m.difference is None else m.difference.to_json(),
                    "mcnemar": None if m.mcnemar is None else m.mcnemar.to_json(),
                }
                for m in self.metrics
            },
            "groups": [
                {
                    "name": g.name, "key": g.key, "label": g.label, "n": g.n,
                    "metrics": {
                        k: None if d is None else d.to_json() for k, d in g.metrics.items()
                    },
                    "flips": None if g.flips is None else g.flips.to_json(),
                }
                for g in self.groups
            ],
            "flip_metric": self.flip_metric,
            "flips": [
                {"id": f.id, "direction": f.direction, "groups": f.groups,
                 "prediction_a": f.prediction_a, "prediction_b": f.prediction_b,
                 "gold": list(f.gold)}
                for f in self.flips(flip_limit)
            ],
            "warnings": self.warnings,
        }  # fmt: skip


def binary_metrics(a: NDArray[np.float64], b: NDArray[np.float64], names: list[str]) -> set[str]:
    return {
        name for j, name in enumerate(names)
        if not any(hint in name.lower() for hint in _CONTINUOUS_HINTS)
        and is_binary(a[:, j]) and is_binary(b[:, j])
    }  # fmt: skip


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


def compare_pair(
    a: ScoredSet,
    b: ScoredSet,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    flip_metric: str | None = None,
) -> PairComparison:
    """Compare B against A on their common ids."""
    alignment = align(a, b)
    warnings: list[str] = []
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
    for label, only in ((a.label, alignment.only_a), (b.label, alignment.only_b)):
        if only:
            warnings.append(f"{len(only)} ids only in {label} are left out "
                            f"(first: {', '.join(only[:5])})")
    columns_a = np.array([a.names.index(name) for name in names], dtype=np.intp)
    columns_b = np.array([b.names.index(name) for name in names], dtype=np.intp)
    values_a = a.values[np.ix_(alignment.rows_a, columns_a)]
    values_b = b.values[np.ix_(alignment.rows_b, columns_b)]
    finalize = finalize_for(a.benchmark or b.benchmark)
    derived = [
        name for name in a.reported if name in b.reported and name not in names
    ] if finalize else []  # fmt: skip
    binary = binary_metrics(values_a, values_b, names)
    flip = choose_flip_metric(names, binary, flip_metric)
    if flip is not None and flip not in binary:
        raise HopscoreError(f"--flip-metric {flip!r} is not binary (0/1) in both inputs")

    def differences(rows: NDArray[np.intp] | None) -> dict[str, Difference | None]:
        sub_a = values_a if rows is None else values_a[rows]
        sub_b = values_b if rows is None else values_b[rows]
        return paired_difference(sub_a, sub_b, names, finalize=finalize, derived=derived,
                                 resamples=resamples, seed=seed)

    overall = differences(None)
    metrics = [
        MetricComparison(
            name, overall.get(name), name in binary,
            mcnemar_exact(values_a[:, j], values_b[:, j]) if name in binary else None,
        )
        for j, name in enumerate(names)
    ] + [MetricComparison(name, overall.get(name), False, None) for name in derived]
    flip_column = names.index(flip) if flip is not None else None
    groups = []
    for name, key, label in group_names(a):
        column = a.groups.get(key)
        if column is None or label not in column.labels:
            continue
        codes = column.codes[alignment.rows_a]
        rows = np.flatnonzero(codes == column.labels.index(label))
        if rows.size == 0:
            continue
        flips = None
        if flip_column is not None:
            flips = mcnemar_exact(values_a[rows, flip_column], values_b[rows, flip_column])
        groups.append(GroupComparison(name, key, label, int(rows.size), differences(rows), flips))
    right_to_wrong = wrong_to_right = np.empty(0, dtype=np.intp)
    if flip_column is not None:
        right_a = values_a[:, flip_column] >= 0.5
        right_b = values_b[:, flip_column] >= 0.5
        right_to_wrong = np.flatnonzero(right_a & ~right_b)
        wrong_to_right = np.flatnonzero(~right_a & right_b)
    return PairComparison(a, b, alignment, metrics, groups, flip, right_to_wrong, wrong_to_right,
                          warnings + a.warnings + b.warnings)


def compare_to_baseline(
    sets: list[ScoredSet],
    baseline: int = 0,
    **options: Any,
) -> list[PairComparison]:
    """Every other set against ``sets[baseline]``."""
    if len(sets) < 2:
        raise HopscoreError("compare needs at least two inputs")
    base = sets[baseline]
    return [compare_pair(base, other, **options) for i, other in enumerate(sets) if i != baseline]
