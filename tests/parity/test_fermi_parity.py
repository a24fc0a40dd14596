"""Fermi: hopscore equals allenai/fermi ``convert_units`` + ``accuracy_metric`` per example, and
:func:`mcr_fermi_score` equals MCR's ``FermiEvaluator.evaluate`` (see expected/fermi.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks.fermi.quantities import fermi_score, mcr_fermi_score
from tests.parity import adversarial_sqa_fermi_feverous as adversarial
from tests.parity.common import TOLERANCE, digest, expected, resolve, score

RECORDED = expected("fermi")
CASES = RECORDED["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_official_per_example(case: dict[str, Any], tmp_path: Path) -> None:
    gold = resolve(case["gold"])
    records = json.loads(gold.read_text())
    if "file" in case:
        path = resolve(case["file"])
    else:
        predictions = adversarial.fermi_predictions(records, case["seed"])
        assert digest(predictions) == case["predictions_digest"], (
            "generator changed: rerun run_official.py"
        )
        path = tmp_path / "predictions.json"
        path.write_text(json.dumps(predictions))
    report, rows = score("fermi", gold, path)
    assert len(rows) == len(case["per_example"])
    for row, official in zip(rows, case["per_example"], strict=True):
        # None: the official pipeline raised on this prediction; hopscore scores it 0.
        want = 0.0 if official is None else official
        assert row.metrics["fp_score"] == pytest.approx(want, abs=TOLERANCE), (
            row.id,
            row.prediction,
        )
    assert report.metrics["fp_score"] == pytest.approx(case["mean_crash_as_zero"], abs=TOLERANCE)
    if case["crashed_ids"]:
        assert any("could not be evaluated" in w for w in report.warnings)


@pytest.mark.parametrize("pair", RECORDED["mcr_pairs"], ids=lambda p: f"{p[0]!r} vs {p[1]!r}")
def test_mcr_variant_matches_mcr_evaluator(pair: list[Any]) -> None:
    prediction, gold, official = pair
    assert official is not None
    assert mcr_fermi_score(prediction, gold) == pytest.approx(official, abs=TOLERANCE)


@pytest.mark.parametrize("pair", RECORDED["official_pairs"], ids=lambda p: f"{p[1]!r} vs {p[0]!r}")
def test_official_pairs(pair: list[Any]) -> None:
    """None: the official pipeline raised (a sum with person/sheet/factorial); hopscore: 0."""
    gold, prediction, official = pair
    want = 0.0 if official is None else official
    assert fermi_score(gold, prediction) == pytest.approx(want, abs=TOLERANCE)
