"""One rule decides which metrics are binary (0/1): Wilson's domain for intervals, and the
right/wrong metric of pass@k, which also needs at least one value."""

from __future__ import annotations

import numpy as np

from hopscore.inference.ci import is_binary
from hopscore.inference.intervals import binary_columns
from hopscore.inference.passk import right_wrong_metric
from hopscore.inference.values import ExampleValues, MatrixValues


def test_binary_means_every_value_is_exactly_0_or_1() -> None:
    assert is_binary([0.0, 1.0, 1.0]) and is_binary([1, 0, True]) and is_binary([-0.0])
    assert not is_binary([0.0, 0.5]) and not is_binary([float("nan")])
    assert is_binary([])  # a set with no examples gets no interval anyway


def test_binary_columns_agree_over_both_stores() -> None:
    rows = [{"em": 1.0, "f1": 0.5, "ok": 0.0}, {"em": 0.0, "f1": 1.0, "ok": 0.0}]
    kept = ExampleValues(["em", "f1", "ok"])
    for row in rows:
        kept.add(row, {})
    matrix = MatrixValues(np.array([[r["em"], r["f1"], r["ok"]] for r in rows]), kept.names)
    assert binary_columns(kept) == binary_columns(matrix) == {"em", "ok"}


def test_pass_at_k_skips_a_metric_without_values() -> None:
    values = {"em": [], "accuracy": [1.0, 0.0]}
    assert right_wrong_metric(("em",), ("em", "accuracy"), values) == "accuracy"
    assert right_wrong_metric(("em",), ("em",), {"em": []}) is None
