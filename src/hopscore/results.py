"""What scoring produces: each example's scores (a line of ``scores.jsonl``) and the report
of a whole set (``metrics.json``). Made by :mod:`hopscore.scoring`; read by the tables, the
judge, the model runs and :mod:`hopscore.intervals`, which fills the intervals in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hopscore.inference.ci import intervals_to_json
from hopscore.records import fast_init

if TYPE_CHECKING:
    from hopscore.inference.ci import Interval
    from hopscore.inference.spec import IntervalSpec


@fast_init
@dataclass(frozen=True, slots=True)
class ExampleScore:
    """The scores of one gold example, as written to ``scores.jsonl``."""

    id: str
    groups: dict[str, str]
    metrics: dict[str, float]
    missing: bool
    prediction: str | None
    gold: tuple[str, ...]
    #: the example's cluster (``--cluster`` / ``--cluster-file``); None when not clustered
    cluster: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "groups": self.groups,
            "metrics": self.metrics,
            "missing": self.missing,
            "prediction": self.prediction,
            "gold": list(self.gold),
        }
        if self.cluster is not None:
            out["cluster"] = self.cluster
        return out


@dataclass(slots=True)
class GroupSummary:
    """The scores of one group of examples (a question type, a difficulty level, ...)."""

    n: int
    metrics: dict[str, float]
    #: the group label (``"bridge"``); the group's name is ``"key=value"`` where labels collide
    value: str | None = None
    ci: dict[str, Interval | None] | None = None


@dataclass(slots=True)
class ScoreReport:
    """What ``metrics.json`` holds: the scores of a whole set of gold examples.

    ``metrics`` maps each metric to its unrounded mean (a fraction; 1.0 is perfect),
    ``groups`` each group name to its :class:`GroupSummary`, ``ci`` each metric to its
    confidence interval (``low``, ``high``, ``method``, ``level``; None when not computed),
    ``missing_ids`` the gold examples without a prediction (scored 0), ``extra_ids`` the
    predictions not in the gold (ignored), ``warnings`` what a user should know, and
    ``notes`` footnotes to numbers only the official semantics explain.
    ``to_json()`` is the ``metrics.json`` document.
    """

    benchmark: str
    n_gold: int
    n_predictions: int
    missing_ids: list[str]
    extra_ids: list[str]
    metrics: dict[str, float]
    groups: dict[str, GroupSummary]
    group_keys: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: interval per metric (None: a metric without one); None: not computed
    ci: dict[str, Interval | None] | None = None
    #: how the intervals were made (None: not computed)
    interval_spec: IntervalSpec | None = None
    #: footnotes to numbers only the official semantics explain (an exact answer with F1
    #: below 100, evidence recall above 100), each with how many examples call for it
    notes: list[str] = field(default_factory=list)
    #: the gold a score directory was made from (:func:`hopscore.reruns.scored_from`): a
    #: rescore into it must use the same gold; None: not a score directory's report
    scored_from: dict[str, Any] | None = None

    @property
    def matched(self) -> int:
        """Predicted ids that are gold ids."""
        return self.n_predictions - len(self.extra_ids)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "n_gold": self.n_gold,
            "n_predictions": self.n_predictions,
            "missing_ids": self.missing_ids,
            "extra_ids": self.extra_ids,
            "metrics": self.metrics,
        }
        if self.ci is not None:
            out["ci"] = intervals_to_json(self.ci)
            if self.interval_spec is not None:
                out["ci_settings"] = self.interval_spec.to_json()
        groups: dict[str, Any] = {}
        for name, g in self.groups.items():
            groups[name] = {"n": g.n, "key": self.group_keys.get(name), "metrics": g.metrics}
            if g.ci is not None:
                groups[name]["ci"] = intervals_to_json(g.ci)
        out["groups"] = groups
        out["warnings"] = self.warnings
        if self.notes:
            out["notes"] = self.notes
        if self.scored_from is not None:
            out["scored_from"] = self.scored_from
        return out
