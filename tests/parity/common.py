"""Helpers for the parity tests: expected numbers recorded from the official scorers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hopscore.benchmarks import get, sample_files
from hopscore.scores.scoring import ExampleScore, ScoreReport, score_examples
from tests.conftest import FIXTURES, shared_file

EXPECTED = Path(__file__).resolve().parent / "expected"


class _Samples:
    """The built-in samples by benchmark name: ``SAMPLES / "quartz"`` is its folder (in its
    package, ``benchmarks/<package>/samples/``), ``SAMPLES / "quartz/dev.jsonl"`` a file."""

    def __truediv__(self, rel: str) -> Path:
        name, _, rest = rel.partition("/")
        folder = Path(str(sample_files.require(name).folder))
        return folder / rest if rest else folder


SAMPLES = _Samples()
TOLERANCE = 1e-9


def expected(benchmark: str) -> Any:
    return json.loads((EXPECTED / f"{benchmark}.json").read_text())


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]


def resolve(ref: str) -> Path:
    """``shared:rel`` (skipped when the shared data is absent), ``fixture:rel``, ``sample:rel``."""
    kind, _, rel = ref.partition(":")
    if kind == "shared":
        return shared_file(rel)
    if kind == "sample":
        return SAMPLES / rel
    return FIXTURES / rel


def score(benchmark: str, gold: Path, predictions: Path) -> tuple[ScoreReport, list[ExampleScore]]:
    bench = get(benchmark)
    rows: list[ExampleScore] = []
    report = score_examples(
        bench, bench.load_gold(gold), bench.load_predictions(predictions), rows.append
    )
    return report, rows
