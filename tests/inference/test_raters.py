"""Fleiss' kappa and Krippendorff's alpha against statsmodels, the ``krippendorff`` package and
an independent pairwise computation, on random tables; the undefined cases say why."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.inference.raters import (
    fleiss_kappa,
    fleiss_table,
    krippendorff_alpha,
)

inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")


@st.composite
def label_tables(draw: st.DrawFn, missing: bool = False) -> list[list[int | None]]:
    units = draw(st.integers(1, 30))
    raters = draw(st.integers(2, 6))
    categories = draw(st.integers(2, 4))
    cell = st.one_of(st.none(), st.integers(0, categories - 1)) if missing else st.integers(
        0, categories - 1)
    return [[draw(cell) for _ in range(raters)] for _ in range(units)]


@settings(max_examples=150, deadline=None)
@given(label_tables())
def test_fleiss_equals_statsmodels(labels: list[list[int | None]]) -> None:
    table = fleiss_table(labels)
    ours = fleiss_kappa(table)
    shares = np.array(table).sum(axis=0) / (len(table) * len(labels[0]))
    expected_agreement = float((shares**2).sum())
    if expected_agreement >= 1 - 1e-15:
        assert ours.value is None and ours.undefined and "one category" in ours.undefined
        return
    reference = inter_rater.fleiss_kappa(np.array(table), method="fleiss")
    assert ours.value == pytest.approx(reference, abs=1e-9)


def pairwise_alpha(labels: list[list[int | None]]) -> float | None:
    """Krippendorff's alpha as 1 - D_o / D_e over all pairs of pairable values (the textbook
    pairwise form, not the coincidence matrix)."""
    pooled: list[int] = []
    observed_pairs = observed_diff = 0.0
    for unit in labels:
        values = [v for v in unit if v is not None]
        if len(values) < 2:
            continue
        pooled += values
        weight = 1 / (len(values) - 1)
        for a, b in itertools.permutations(range(len(values)), 2):
            observed_pairs += weight
            observed_diff += weight * (values[a] != values[b])
    n = len(pooled)
    if n < 2:
        return None
    counts = np.bincount(pooled)
    expected_diff = (n * n - (counts**2).sum()) / (n * (n - 1))
    if expected_diff == 0:
        return None
    return 1 - (observed_diff / observed_pairs) / expected_diff


@settings(max_examples=150, deadline=None)
@given(label_tables(missing=True))
def test_alpha_equals_the_pairwise_form(labels: list[list[int | None]]) -> None:
    ours = krippendorff_alpha(labels)
    reference = pairwise_alpha(labels)
    if reference is None:
        assert ours.value is None and ours.undefined
    else:
        assert ours.value == pytest.approx(reference, abs=1e-9)


@settings(max_examples=100, deadline=None)
@given(label_tables(missing=True))
def test_alpha_equals_the_krippendorff_package(labels: list[list[int | None]]) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    ours = krippendorff_alpha(labels)
    if ours.value is None:
        return
    data = np.array([[np.nan if v is None else v for v in unit] for unit in labels],
                    dtype=float).T  # raters x units
    reference = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert ours.value == pytest.approx(reference, abs=1e-9)


def test_complete_binary_data_fleiss_and_alpha_are_close() -> None:
    """Perfect agreement is 1 for both."""
    labels = [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 0]]
    assert fleiss_kappa(fleiss_table(labels)).value == pytest.approx(1.0)
    assert krippendorff_alpha(labels).value == pytest.approx(1.0)


def test_undefined_cases_say_why() -> None:
    one_category = fleiss_kappa([[3, 0], [3, 0]])
    assert one_category.value is None and "one category" in (one_category.undefined or "")
    one_rater = fleiss_kappa([[1, 0], [0, 1]])
    assert one_rater.value is None and "two raters" in (one_rater.undefined or "")
    assert fleiss_kappa([]).undefined == "no subjects"
    with pytest.raises(ValueError, match="same number of ratings"):
        fleiss_kappa([[2, 1], [1, 1]])
    alone = krippendorff_alpha([[1, None], [None, 0]])
    assert alone.value is None and "two labels" in (alone.undefined or "")
    same = krippendorff_alpha([["yes", "yes"], ["yes", "yes", None]])
    assert same.value is None and "same category" in (same.undefined or "")
    assert "undefined" in same.text()


def test_nan_is_missing_too() -> None:
    with_none = krippendorff_alpha([[1, 1, None], [0, 1, 0], [None, 0, 0]])
    with_nan = krippendorff_alpha(np.array([[1, 1, np.nan], [0, 1, 0], [np.nan, 0, 0]]))
    assert with_nan.value == pytest.approx(with_none.value) and with_nan.units == 3


def test_a_known_value() -> None:
    """Krippendorff (2011), 'Computing Krippendorff's alpha-reliability', the nominal example
    with missing data: alpha = 0.743."""
    raters = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
        [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
    ]
    units = [list(unit) for unit in zip(*raters, strict=True)]
    assert krippendorff_alpha(units).value == pytest.approx(0.743, abs=5e-4)
