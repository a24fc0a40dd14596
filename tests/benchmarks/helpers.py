"""Small helpers for benchmark tests: write files, score them, compare floats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.scores.scoring import ScoreReport, score_files


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    return path


def score(
    benchmark: str, gold: Path, predictions: Path, aliases: Path | None = None
) -> ScoreReport:
    return score_files(benchmarks.get(benchmark), gold, predictions, None, aliases=aliases)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12
