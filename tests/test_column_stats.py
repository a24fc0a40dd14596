"""The large-set reading of the kept values (numpy) gives what the small-set reading (pure
Python) gives: sums added one by one in example order, distinct values counted alike, and the
same rows per group."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore import benchmarks
from hopscore.inference import values as values_module
from hopscore.inference.values import ExampleValues
from hopscore.scores import summaries
from hopscore.scores.summaries import (
    _column_stats_numpy,
    column_stats,
    one_by_one_columns,
    plain_sum,
)

VALUE = st.one_of(st.sampled_from([0.0, 1.0, 0.5, 2 / 3, 1e16, -1e16, -0.0]),
                  st.floats(allow_nan=False, allow_infinity=False, width=64))


def kept_of(rows: Sequence[tuple[float, float, str | None]]) -> ExampleValues:
    kept = ExampleValues(("a", "b"))
    for a, b, label in rows:
        kept.add_row((a, b), {} if label is None else {"g": label})
    return kept


def loop_sum(values: list[float]) -> float:
    total: float = 0
    for value in values:
        total += value
    return total


def same(x: float, y: float) -> bool:
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1, x) == math.copysign(1, y)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(VALUE, st.sampled_from([0.0, 1.0]),
                          st.sampled_from([None, "x", "y", "z"])), min_size=1, max_size=60),
       st.lists(st.booleans(), min_size=2, max_size=2), st.booleans())
def test_numpy_reading_equals_python_reading(rows: list[tuple[float, float, str | None]],
                                             count: list[bool], one_by_one: bool) -> None:
    kept = kept_of(rows)
    for selected in (None, [i for i in range(len(rows)) if i % 2 == 0]):
        python_sums, python_counts = column_stats(kept, selected, count, one_by_one)
        numpy_sums, numpy_counts = _column_stats_numpy(kept, selected, count,
                                                       [one_by_one] * 2)
        assert all(map(same, python_sums, numpy_sums))
        assert python_counts == numpy_counts
        picked = rows if selected is None else [rows[i] for i in selected]
        add = loop_sum if one_by_one else sum
        assert all(map(same, python_sums, [add([r[0] for r in picked]),
                                           add([r[1] for r in picked])]))


def test_a_one_by_one_sum_is_the_official_loops_whatever_pythons_sum_does(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """From Python 3.12 on, ``sum`` compensates its rounding (1.0 below, where ``total +=
    value`` gives 0.0): a benchmark whose official script loops (``adds_one_by_one``) gets the
    loop's sum, another Python's ``sum``. Simulated here with ``math.fsum`` as that ``sum``."""
    column = [1e16, 1.0, -1e16]
    monkeypatch.setattr(summaries, "_SUM_COMPENSATES", True)
    monkeypatch.setattr(summaries, "sum", math.fsum, raising=False)
    kept = kept_of([(value, value, None) for value in column])  # metrics "a" and "b"
    for looped, expected in ((True, [0.0, 0.0]), (False, [1.0, 1.0]),
                             (frozenset({"b"}), [1.0, 0.0])):
        assert column_stats(kept, None, None, looped)[0] == expected
        assert _column_stats_numpy(kept, None, None,
                                   one_by_one_columns(("a", "b"), looped))[0] == expected
    assert plain_sum(column, True) == 0.0 and plain_sum(column, False) == 1.0


def test_the_looping_official_scorers_are_marked() -> None:
    """hotpot_evaluate_v1.py, 2wikimultihop_evaluate_v1.1.py (``metrics[k] += v``), MuSiQue's
    metric classes (``self._total_f1 += f1``), FEVEROUS's feverous_score (``macro_precision +=
    ...``) and StrategyQA's SARI class (one question a call) add one by one; HybridQA's
    evaluate_script.py and StrategyQA's Recall@10 call ``sum(...)``."""
    marked = {name: benchmarks.get(name).adds_one_by_one
              for name in ("hotpotqa", "2wikimultihopqa", "musique", "hybridqa", "strategyqa",
                           "feverous")}
    assert marked == {"hotpotqa": True, "2wikimultihopqa": True, "musique": True,
                      "hybridqa": False, "strategyqa": frozenset({"sari"}), "feverous": True}


def test_a_nan_column_is_counted_as_python_counts_it() -> None:
    kept = kept_of([(math.nan, 1.0, None)] + [(0.5, 0.0, None)] * 7)
    sums, counts = _column_stats_numpy(kept, None, [True, True])
    assert math.isnan(sums[0])
    assert counts[0] is not None and counts[0][0.5] == 7 and len(counts[0]) == 2
    assert counts[1] == Counter({0.0: 7, 1.0: 1})


def test_large_sets_take_the_numpy_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    """At the threshold the numpy reading is used, and the group rows come from a stable sort:
    the same rows, ascending, as the loop gives."""
    monkeypatch.setattr(summaries, "NUMPY_ROWS", 50)
    monkeypatch.setattr(values_module, "NUMPY_ROWS", 50)
    rng = np.random.default_rng(0)
    rows = [(float(rng.integers(0, 2)), float(rng.choice([0.0, 0.25, 1.0])),
             [None, "x", "y"][int(rng.integers(0, 3))]) for _ in range(500)]
    kept = kept_of(rows)
    called = []
    real = summaries._column_stats_numpy
    def counted(*args: Any) -> Any:
        called.append(1)
        return real(*args)

    monkeypatch.setattr(summaries, "_column_stats_numpy", counted)
    sums, counts = column_stats(kept, None, [True, True])
    assert called
    assert sums == [loop_sum([r[0] for r in rows]), loop_sum([r[1] for r in rows])]
    assert counts[1] == Counter(r[1] for r in rows)
    grouped = kept.group_rows()
    for label in ("x", "y"):
        assert list(grouped[("g", label)]) == [i for i, r in enumerate(rows) if r[2] == label]
