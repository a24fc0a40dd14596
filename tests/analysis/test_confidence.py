"""ECE and reliability bins of stated confidences."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.analysis.confidence import reliability


def test_a_worked_example() -> None:
    conf = [0.05, 0.15, 0.15, 0.95, 1.0, 0.55]
    right = [False, False, True, True, True, False]
    r = reliability(conf, right, bins=10)
    assert r.binning == "10 equal-width bins over [0, 1]"
    b0, b1, b5, b9 = r.bins[0], r.bins[1], r.bins[5], r.bins[9]
    assert (b0.n, b1.n, b5.n, b9.n) == (1, 2, 1, 2)  # 1.0 falls in the last, closed bin
    assert b1.accuracy == 0.5 and b1.confidence == pytest.approx(0.15)
    assert b9.confidence == pytest.approx(0.975) and b9.accuracy == 1.0
    expected = (1 * 0.05 + 2 * 0.35 + 1 * 0.55 + 2 * 0.025) / 6
    assert r.ece == pytest.approx(expected)
    assert r.mce == pytest.approx(0.55)
    assert r.bins[3].n == 0 and r.bins[3].gap is None
    assert r.to_json()["bins"][1]["gap"] == pytest.approx(0.35)


def direct_ece(conf: np.ndarray, right: np.ndarray, bins: int) -> float:
    """Loop over the bins by their edges (the definition, written out)."""
    total = 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = (conf >= low) & ((conf < high) if b < bins - 1 else (conf <= high))
        if inside.any():
            total += inside.sum() / conf.size * abs(right[inside].mean() - conf[inside].mean())
    return total


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=60),
       st.integers(1, 15))
def test_equal_width_matches_the_definition(pairs: list[tuple[float, bool]], bins: int) -> None:
    conf = np.array([c for c, _ in pairs])
    right = np.array([r for _, r in pairs])
    r = reliability(conf, right, bins)
    assert sum(b.n for b in r.bins) == len(pairs)
    assert 0 <= r.ece <= r.mce <= 1
    # edges computed by multiplication may differ from b / bins at a boundary by one ulp
    if not np.any(np.isclose(conf * bins, np.round(conf * bins))):
        assert r.ece == pytest.approx(direct_ece(conf, right, bins), abs=1e-12)


def test_equal_mass_bins_and_a_calibrated_system() -> None:
    rng = np.random.default_rng(0)
    conf = rng.random(20_000)
    right = rng.random(20_000) < conf  # calibrated by construction
    width = reliability(conf, right, 10)
    mass = reliability(conf, right, 10, scheme="mass")
    assert width.ece < 0.02 and mass.ece < 0.02
    assert [b.n for b in mass.bins] == [2000] * 10
    assert mass.binning == "10 equal-count bins over the sorted confidences"
    overconfident = reliability(conf, rng.random(20_000) < conf / 2, 10)
    assert overconfident.ece > 0.2


@pytest.mark.parametrize("conf,right,words", [
    ([1.5], [True], "divided by 100"), ([], [], "no answers"),
    ([0.5, 0.2], [True], "same length"), ([float("nan")], [True], "[0, 1]"),
])
def test_bad_input_is_refused(conf: list[float], right: list[bool], words: str) -> None:
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        reliability(conf, right)
    with pytest.raises(ValueError, match="scheme"):
        reliability([0.5], [True], scheme="quantile")
