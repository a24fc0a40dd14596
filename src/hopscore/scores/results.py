"""What scoring produces: each example's scores (a line of ``scores.jsonl``) and the report
of a whole set (``metrics.json``). Made by :mod:`hopscore.scores.scoring` (whose
:func:`~hopscore.scores.scoring.attach_intervals` fills the intervals in); read by the tables, the
judge and the model runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hopscore.benchmarks.fast_init import fast_init
from hopscore.inference.ci import intervals_to_json

if TYPE_CHECKING:
    from collections.abc import Sequence

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

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> ExampleScore:
        """An example's scores from its line of ``scores.jsonl``."""
        return cls(id=str(row["id"]), groups=dict(row.get("groups") or {}),
                   metrics=dict(row.get("metrics") or {}), missing=bool(row.get("missing")),
                   prediction=row.get("prediction"), gold=tuple(row.get("gold") or ()),
                   cluster=row.get("cluster"))

    def to_json(self) -> dict[str, Any]:
        return score_row(self.id, self.groups, self.metrics, self.missing, self.prediction,
                         self.gold, self.cluster)


def score_row(example_id: str, groups: dict[str, str], metrics: dict[str, float],
              missing: bool, prediction: str | None, gold: Sequence[str],
              cluster: str | None) -> dict[str, Any]:
    """An example's line of ``scores.jsonl`` (:meth:`ExampleScore.to_json`), made without the
    record (the scorer writes a million of them)."""
    out = {"id": example_id, "groups": groups, "metrics": metrics, "missing": missing,
           "prediction": prediction, "gold": list(gold)}
    if cluster is not None:
        out["cluster"] = cluster
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
    ``notes`` footnotes to numbers only the official semantics explain, ``examples`` each
    example's scores (``to_pandas()``: as a DataFrame). ``to_json()`` is the ``metrics.json``
    document.
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
    #: figures of the whole run that are not per-example means (``Benchmark.run_figures``:
    #: a calibration error over bins of answers...), by name; None: undefined for this run
    figures: dict[str, float | None] = field(default_factory=dict)
    #: the gold a score directory was made from (:func:`hopscore.files.reruns.scored_from`): a
    #: rescore into it must use the same gold; None: not a score directory's report
    scored_from: dict[str, Any] | None = None
    #: each gold example's scores, in gold order (a line of ``scores.jsonl`` each)
    examples: list[ExampleScore] = field(default_factory=list, repr=False)

    def to_pandas(self) -> Any:
        """The per-example scores as a pandas DataFrame: one row per gold example, columns
        ``id``, ``missing``, ``prediction``, ``gold`` (a list), one per group key and one per
        metric (fractions). Needs pandas (``pip install pandas``)."""
        try:
            import pandas  # type: ignore[import-untyped]
        except ImportError:
            from hopscore.errors import HopscoreError

            raise HopscoreError("ScoreReport.to_pandas() needs pandas, which is not "
                                "installed: pip install pandas") from None
        keys = list(dict.fromkeys(k for e in self.examples for k in e.groups))
        names = list(dict.fromkeys(m for e in self.examples for m in e.metrics)) or \
            list(self.metrics)
        rows = [{"id": e.id, "missing": e.missing, "prediction": e.prediction,
                 "gold": list(e.gold), **{k: e.groups.get(k) for k in keys},
                 **{m: e.metrics.get(m) for m in names}} for e in self.examples]
        return pandas.DataFrame(rows, columns=["id", "missing", "prediction", "gold", *keys,
                                               *names])

    @classmethod
    def from_json(cls, document: dict[str, Any],
                  examples: list[ExampleScore] | None = None) -> ScoreReport:
        """The report a ``metrics.json`` document holds (and the examples of its
        ``scores.jsonl``, when given)."""
        from hopscore.inference.ci import Interval

        def intervals(block: Any) -> dict[str, Interval | None] | None:
            if not isinstance(block, dict):
                return None
            known = ("low", "high", "level", "method", "se", "n", "resamples", "seed", "note")
            return {name: None if not isinstance(value, dict) else Interval(
                low=value["low"], high=value["high"], level=value["level"],
                method=value["method"], se=value.get("se"), n=value.get("n"),
                resamples=value.get("resamples"), seed=value.get("seed"),
                details={k: v for k, v in value.items() if k not in known},
                note=value.get("note")) for name, value in block.items()}

        groups = {name: GroupSummary(n=g.get("n", 0), metrics=g.get("metrics", {}),
                                     ci=intervals(g.get("ci")))
                  for name, g in (document.get("groups") or {}).items()}
        return cls(
            benchmark=document.get("benchmark", ""), n_gold=document.get("n_gold", 0),
            n_predictions=document.get("n_predictions", 0),
            missing_ids=list(document.get("missing_ids", [])),
            extra_ids=list(document.get("extra_ids", [])),
            metrics=dict(document.get("metrics", {})), groups=groups,
            group_keys={name: g["key"] for name, g in (document.get("groups") or {}).items()
                        if isinstance(g, dict) and g.get("key")},
            warnings=list(document.get("warnings", [])), ci=intervals(document.get("ci")),
            notes=list(document.get("notes", [])), examples=list(examples or []),
            figures=dict(document.get("figures") or {}))

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
        if self.figures:
            out["figures"] = self.figures
        if self.scored_from is not None:
            out["scored_from"] = self.scored_from
        return out
