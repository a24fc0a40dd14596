"""MuSiQue: hopscore equals the official ``evaluate_v1.0.py`` (StonyBrookNLP/musique @ 922ac98)
on the real records and on seeded adversarial predictions, per question and in aggregate.

The numbers in ``expected/musique.json`` were printed by the official scorer and its metric
classes, run outside this repository (``bench/results/2026-12-06-musique-parity.md`` gives the
command); the gold and predictions are regenerated here with ``adversarial_musique`` and
checked against the digests recorded with them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.parity import adversarial_musique as adversarial
from tests.parity.common import TOLERANCE, digest, expected, resolve, score

DATA = expected("musique")
NAMES: list[str] = DATA["per_example_metrics"]
OFFICIAL_KEYS = ("answer_f1", "answer_em", "support_f1", "group_answer_sufficiency_f1",
                 "group_support_sufficiency_f1")


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")
    return path


def _files(case: dict[str, Any], tmp_path: Path) -> tuple[Path, Path]:
    source = resolve(case["gold"]["file"])
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    if "full_seed" in case["gold"]:
        records = adversarial.full_gold(records, case["gold"]["full_seed"])
    assert digest(records) == case["gold_digest"], "gold changed: rerun the official scorer"
    spec = case["predictions"]
    lines = (adversarial.perfect(records) if spec == "perfect"
             else adversarial.predictions(records, spec["seed"]))
    assert digest(lines) == case["predictions_digest"], "generator changed: rerun the scorer"
    return _write(tmp_path / "gold.jsonl", records), _write(tmp_path / "pred.jsonl", lines)


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_official_numbers(case: dict[str, Any], tmp_path: Path) -> None:
    gold, predictions = _files(case, tmp_path)
    report, rows = score("musique", gold, predictions)
    assert not report.missing_ids and not report.extra_ids
    for name, value in case["metrics"].items():
        assert abs(report.metrics[name] - value) <= TOLERANCE, name
    for name, printed in case["official_printed"].items():
        assert round(report.metrics[name], 3) == printed, name
    full = "full_seed" in case["gold"]
    assert (set(OFFICIAL_KEYS) <= set(report.metrics)) == full
    per_example = {row.id: [row.metrics[name] for name in NAMES[:len(NAMES) if full else 6]]
                   for row in rows}
    rounded = {key: [round(v, 12) for v in values] for key, values in per_example.items()}
    assert digest(rounded) == case["per_example_digest"]
    for key, values in case.get("per_example", {}).items():
        assert all(abs(a - b) <= TOLERANCE for a, b in zip(per_example[key], values, strict=True))
