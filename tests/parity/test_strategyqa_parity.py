"""StrategyQA: hopscore equals allenai/strategyqa-evaluator ``eval.py`` on recorded cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.parity import adversarial_sqa_fermi_feverous as adversarial
from tests.parity.common import TOLERANCE, digest, expected, resolve, score

CASES = expected("strategyqa")
NAMES = {"Accuracy": "accuracy", "SARI": "sari", "Recall@10": "recall@10"}


def _predictions(case: dict[str, Any], gold: Path, tmp_path: Path) -> Path:
    spec = case["predictions"]
    if "file" in spec:
        return resolve(spec["file"])  # the jsonl is read directly, unlike the official script
    records = json.loads(gold.read_text())
    if "constant_answer" in spec:
        data = {r["qid"]: {"answer": spec["constant_answer"]} for r in records}
    else:
        data = adversarial.strategyqa_predictions(records, spec["seed"], tuple(spec["keys"]))
        assert digest(data) == case["predictions_digest"], (
            "generator changed: rerun run_official.py"
        )
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_official(case: dict[str, Any], tmp_path: Path) -> None:
    gold = resolve(case["gold"])
    report, _ = score("strategyqa", gold, _predictions(case, gold, tmp_path))
    assert report.metrics["accuracy"] == pytest.approx(case["official"]["Accuracy"], abs=TOLERANCE)
    for official_name, name in NAMES.items():
        if name in report.metrics:
            assert report.metrics[name] == pytest.approx(
                case["official"][official_name], abs=TOLERANCE
            )
        else:  # not predicted: the official prints 0.0, hopscore does not report it
            assert case["official"][official_name] == 0.0
    keys = case["predictions"].get("keys")
    if keys is not None:
        assert ("sari" in report.metrics) == ("decomposition" in keys)
        assert ("recall@10" in report.metrics) == ("paragraphs" in keys)


def test_cli_reproduces_evaluator_test(tmp_path: Path) -> None:
    case = next(c for c in CASES if c["name"] == "evaluator_small")
    gold = resolve(case["gold"])
    result = run_cli(
        "score",
        "strategyqa",
        "--gold",
        gold,
        "--predictions",
        resolve(case["predictions"]["file"]),
        "--output-dir",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "metrics.json").read_text())["metrics"]
    assert metrics == {"accuracy": 0.8, "sari": 0.6644986320583632, "recall@10": 0.2833333333333333}
