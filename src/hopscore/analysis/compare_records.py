"""The records of a paired comparison (``hopscore compare``): the options it runs with, the
rows it makes (one metric overall or in one group), and the comparison of two scored sets.

:mod:`hopscore.analysis.compare` makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hopscore.analysis.scored import ScoredSet
from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.errors import HopscoreError
from hopscore.inference.ci import Interval, check_choice
from hopscore.inference.clusters import ClusterSpec
from hopscore.inference.multiplicity import CORRECTIONS
from hopscore.inference.paired import DEFAULT_PERMUTATIONS, Flips, TestResult


@dataclass(frozen=True, slots=True)
class CompareOptions:
    """How rows are tested and how their intervals are made."""

    ci: str = "auto"
    level: float = DEFAULT_LEVEL
    resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    correction: str = "holm"
    alpha: float = 0.05
    power: float = 0.8
    mid_p: bool = False
    permutations: int = DEFAULT_PERMUTATIONS
    clusters: ClusterSpec | None = None
    flip_metric: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.ci, self.level)
        if self.ci == "none":
            raise HopscoreError("compare always makes intervals: --ci none is not an option here")
        if self.correction not in CORRECTIONS:
            raise HopscoreError(f"--correction must be one of {', '.join(CORRECTIONS)}")
        if not 0 < self.alpha < 1 or not 0 < self.power < 1:
            raise HopscoreError("--alpha and --power must be between 0 and 1")
        if self.permutations < 100 or self.resamples < 100:
            raise HopscoreError("--permutations and --resamples must be at least 100")

    def to_json(self) -> dict[str, Any]:
        return {"ci": self.ci, "level": self.level, "resamples": self.resamples,
                "seed": self.seed, "correction": self.correction, "alpha": self.alpha,
                "power": self.power, "mid_p": self.mid_p, "permutations": self.permutations,
                "cluster": None if self.clusters is None else self.clusters.name}


@dataclass(frozen=True, slots=True)
class Alignment:
    ids: list[str]
    rows_a: NDArray[np.intp]
    rows_b: NDArray[np.intp]
    only_a: list[str]
    only_b: list[str]



@dataclass(slots=True)
class Row:
    """One metric of one set of paired examples (all of them, or a group)."""

    metric: str
    group: str | None
    n: int
    a: float
    b: float
    interval: Interval | None
    binary: bool
    flips: Flips | None
    test: TestResult | None
    #: minimum detectable |B - A| at the requested power and alpha (None: not computable)
    mde: float | None
    derived: bool = False
    significant: bool = False
    underpowered: bool = False
    #: so few examples that no difference at all can be significant (mde is then None)
    mde_unreachable: bool = False

    @property
    def delta(self) -> float:
        return self.b - self.a

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric, "group": self.group, "n": self.n, "a": self.a, "b": self.b,
            "delta": self.delta, "binary": self.binary, "derived": self.derived,
            "interval": None if self.interval is None else self.interval.to_json(),
            "low": None if self.interval is None else self.interval.low,
            "high": None if self.interval is None else self.interval.high,
            "test": None if self.test is None else self.test.to_json(),
            "significant": self.significant, "mde": self.mde, "underpowered": self.underpowered,
            "mde_unreachable": self.mde_unreachable,
            "flips": None if self.flips is None else self.flips.to_json(),
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class GroupComparison:
    name: str
    key: str
    label: str
    n: int
    rows: dict[str, Row]
    flips: Flips | None


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
    metrics: list[Row]
    groups: list[GroupComparison]
    flip_metric: str | None
    #: aligned positions of the flipped examples
    right_to_wrong: NDArray[np.intp]
    wrong_to_right: NDArray[np.intp]
    options: CompareOptions = field(default_factory=CompareOptions)
    #: paired examples without a prediction in A and in B (scored 0)
    missing_a: int = 0
    missing_b: int = 0
    cluster: str | None = None
    clusters: int | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.alignment.ids)

    def rows(self) -> list[Row]:
        """Every row of this comparison: overall, then group by group."""
        out = list(self.metrics)
        for group in self.groups:
            out.extend(group.rows.values())
        return out

    def row(self, metric: str) -> Row | None:
        return next((r for r in self.metrics if r.metric == metric), None)

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
            "missing_a": self.missing_a, "missing_b": self.missing_b,
            "cluster": self.cluster, "clusters": self.clusters,
            "metrics": {r.metric: r.to_json() for r in self.metrics},
            "groups": [
                {"name": g.name, "key": g.key, "label": g.label, "n": g.n,
                 "metrics": {k: r.to_json() for k, r in g.rows.items()},
                 "flips": None if g.flips is None else g.flips.to_json()}
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
