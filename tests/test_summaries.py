"""Each column read once (scores.summaries): the group means and every interval equal those
made without the kept counts (columns read again, groups counted whole)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore import benchmarks
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import ExampleValues
from hopscore.scores.results import ScoreReport
from hopscore.scores.summaries import (
    Counts,
    SetKey,
    _remainders,
    attach_intervals,
    column_stats,
    fill_groups,
)

VALUES = st.sampled_from([0.0, 1.0, 0.5, 0.25, 2 / 3, 0.1, 0.9])
ROW = st.tuples(st.booleans(), VALUES, st.floats(0, 1, allow_nan=False),
                st.sampled_from(["a", "b", "c", None]), st.sampled_from(["x", "y"]))


def _report(rows: Sequence[tuple[bool, float, float, str | None, str]], *, counted: bool
            ) -> ScoreReport:
    bench = benchmarks.get("hotpotqa")
    kept = ExampleValues(("em", "f1", "raw"))
    for em, f1, raw, kind, level in rows:
        labels = {"level": level} if kind is None else {"type": kind, "level": level}
        kept.add_row((float(em), f1, raw), labels)
    count = [True] * 3 if counted else None
    sums, overall = column_stats(kept, None, count)
    plain: dict[SetKey, dict[str, float]] = {
        None: {name: sums[j] / kept.n for j, name in enumerate(kept.names)}}
    counts: dict[SetKey, Counts] | None = {None: overall} if counted else None
    report = ScoreReport(benchmark="hotpotqa", n_gold=kept.n, n_predictions=kept.n,
                         missing_ids=[], extra_ids=[], metrics=dict(plain[None]), groups={},
                         warnings=[])
    group_rows = kept.group_rows()
    fill_groups(bench, report, kept, group_rows, plain, counts)
    attach_intervals(bench, report, kept, IntervalSpec(resamples=2000, seed=1), group_rows,
                     plain, counts)
    return report


@settings(max_examples=150, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=60))
def test_counted_once_equals_read_again(rows: list[tuple[bool, float, float, str | None, str]]
                                        ) -> None:
    once, again = _report(rows, counted=True), _report(rows, counted=False)
    assert once.ci == again.ci
    assert once.groups.keys() == again.groups.keys()
    for name, group in once.groups.items():
        assert group.metrics == again.groups[name].metrics
        assert group.ci == again.groups[name].ci


def test_a_split_key_counts_its_largest_group_by_difference() -> None:
    rows = [(i % 3 == 0, (i % 4) / 4, (i % 5) / 5, "a" if i % 4 else "b", "x")
            for i in range(400)]
    report = _report(rows, counted=True)
    assert report.groups["a"].n == 300 and report.groups["b"].n == 100
    assert report.groups["a"].ci == _report(rows, counted=False).groups["a"].ci
    kept = ExampleValues(("em",))
    for *_, kind, level in rows:
        kept.add_row((0.0,), {"type": kind, "level": level})
    # "a" is counted as all examples less "b"; "level" has one label (every example)
    assert _remainders(kept.group_rows(), kept.n) == {("type", "a"): [("type", "b")]}
