"""The kinds of judge-vs-exact-match disagreements and their order by frequency."""

from __future__ import annotations

import pytest

from hopscore.analysis.disagreement_kinds import (
    disagreement_kind,
    kinds_by_frequency,
    order_by_frequency,
)


@pytest.mark.parametrize("prediction,gold,kind", [
    ("", ["Paris"], "empty answer"),
    (None, ["Paris"], "empty answer"),
    ("The Paris.", ["paris"], "matches the gold"),
    ("It is Paris, the capital of France", ["Paris"], "verbose answer"),
    ("1,000 km", ["1000 kilometres"], "numbers and units"),
    ("about 42", ["forty-two (42)"], "numbers and units"),
    ("Barack H. Obama", ["Barack Obama"], "alias or paraphrase"),
    ("Lyon", ["Paris", "City of Light"], "different answer"),
    ("Parisian", ["Paris"], "different answer"),  # a word, not a part of one
])
def test_kinds(prediction: str | None, gold: list[str], kind: str) -> None:
    assert disagreement_kind(prediction, gold) == kind


def test_most_frequent_first() -> None:
    kinds = [("different answer", True), ("verbose answer", True), ("verbose answer", True),
             ("verbose answer", False), ("different answer", True), ("verbose answer", True)]
    counts = kinds_by_frequency(kinds)
    assert [(k.label, k.count) for k in counts] == [
        ("verbose answer (judge right)", 3), ("different answer (judge right)", 2),
        ("verbose answer (judge wrong)", 1)]
    assert order_by_frequency(kinds) == [1, 2, 5, 0, 4, 3]
