"""FEVEROUS: hopscore equals Raldir/FEVEROUS ``evaluate.py`` on the project-owned gold fixture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.parity import adversarial_sqa_fermi_feverous as adversarial
from tests.parity.common import TOLERANCE, digest, expected, resolve, score

CASES = expected("feverous")


def _gold_lines(case: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    lines = resolve(case["gold"]).read_text().splitlines()
    return lines[0], [json.loads(line) for line in lines[1:] if line.strip()]


def _predictions(case: dict[str, Any]) -> list[dict[str, Any]]:
    _, gold = _gold_lines(case)
    if "file" in case:  # joined to the gold by id
        lines = resolve(case["file"]).read_text().splitlines()
        by_id = {row["id"]: row for row in map(json.loads, filter(str.strip, lines))}
        return [by_id[r["id"]] for r in gold]
    if case.get("variant") == "perfect":
        return [
            {
                "id": r["id"],
                "predicted_label": r["label"],
                "predicted_evidence": [e for g in r["evidence"] for e in g["content"]],
            }
            for r in gold
        ]
    if case.get("variant") == "labels_only":
        return [
            {"id": r["id"], "predicted_label": r["label"], "predicted_evidence": []} for r in gold
        ]
    return adversarial.feverous_predictions(gold, case["seed"])


def _check(metrics: dict[str, float], official: dict[str, float]) -> None:
    assert set(metrics) == set(official)
    for name, value in official.items():
        assert metrics[name] == pytest.approx(value, abs=TOLERANCE), name


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_separate_predictions_file(case: dict[str, Any], tmp_path: Path) -> None:
    predictions = _predictions(case)
    assert digest(predictions) == case["predictions_digest"], (
        "generator changed: rerun run_official.py"
    )
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in predictions))
    report, _ = score("feverous", resolve(case["gold"]), path)
    _check(report.metrics, case["official"])


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_combined_file_as_gold_and_predictions(case: dict[str, Any], tmp_path: Path) -> None:
    header, gold = _gold_lines(case)
    combined = tmp_path / "combined.jsonl"
    rows = [header] + [
        json.dumps({**g, **p}) for g, p in zip(gold, _predictions(case), strict=True)
    ]
    combined.write_text("\n".join(rows) + "\n")
    report, _ = score("feverous", combined, combined)
    _check(report.metrics, case["official"])


def test_cli_same_file(tmp_path: Path) -> None:
    case = next(c for c in CASES if c["name"] == "adversarial_s1")
    header, gold = _gold_lines(case)
    combined = tmp_path / "combined.jsonl"
    rows = [header] + [
        json.dumps({**g, **p}) for g, p in zip(gold, _predictions(case), strict=True)
    ]
    combined.write_text("\n".join(rows) + "\n")
    result = run_cli("score", "feverous", "-g", combined, "-p", combined, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    _check(json.loads((tmp_path / "out" / "metrics.json").read_text())["metrics"], case["official"])
