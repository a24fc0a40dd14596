"""``compare --judge-calibration``: judge accuracies of paired runs corrected with one shared
calibration of their judge.

Each run's verdicts are its judge's: ``judge_accuracy`` of a ``score --judge`` directory or
``correct`` of a ``hopscore judge`` file, over the examples both runs have (aligned by id).
Every run must have been judged by the calibrated judge (its model and prompt sha256; a run
that names another is refused). Each run gets its Rogan-Gladen accuracy with its interval
(:func:`hopscore.inference.judge_error.corrected_accuracy`), and each pair the corrected
difference ``(q_B - q_A) / (Se + Sp - 1)`` with the delta-method interval of
:func:`hopscore.inference.judge_error.corrected_difference`: the two runs share one
calibration, so its uncertainty enters the difference once, through the common divisor, and not
as if the two corrected accuracies were independent. A verdict the ``score --judge`` directory
scored 0 for want of a judge decision (an error, an empty answer) counts as the judge's "wrong"
here, as it does in judge_accuracy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hopscore.analysis.compare import align
from hopscore.analysis.scored import ScoredSet
from hopscore.errors import HopscoreError
from hopscore.inference.judge_error import (
    Corrected,
    CorrectedDifference,
    corrected_accuracy,
    corrected_difference,
)
from hopscore.judge.calibration import Calibration, JudgeIdentity, check_bound_to, judge_identity

VERDICT_COLUMNS = ("judge_accuracy", "correct")


@dataclass(slots=True)
class CorrectedPair:
    """Runs A and B judged by one calibrated judge, over their common examples."""

    a: str
    b: str
    n: int
    corrected_a: Corrected
    corrected_b: Corrected
    difference: CorrectedDifference
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "n": self.n, "a_accuracy": self.corrected_a.to_json(),
                "b_accuracy": self.corrected_b.to_json(),
                "difference": self.difference.to_json()}


def set_identity(scored: ScoredSet) -> JudgeIdentity:
    """The judge of a run's verdicts: from a judge file's rows, or a score directory's
    metrics.json (its endpoint from judge.jsonl beside it, when there)."""
    if scored.kind == "judge" and scored.rows:
        return judge_identity(scored.rows, str(scored.source))
    block = scored.summary.get("judge") if isinstance(scored.summary, dict) else None
    if not isinstance(block, dict) or not block.get("model"):
        raise HopscoreError(f"{scored.label}: no judge verdicts (score it with --judge, or give "
                            "a hopscore judge output file) to correct with --judge-calibration")
    endpoint = ""
    rows = scored.source / "judge.jsonl" if scored.source.is_dir() else None
    if rows is not None and rows.is_file():
        with rows.open(encoding="utf-8") as handle:
            first = handle.readline()
        meta = json.loads(first).get("judge") if first.strip() else None
        endpoint = str(meta.get("endpoint") or "") if isinstance(meta, dict) else ""
    return JudgeIdentity(str(block["model"]), endpoint, str(block.get("prompt_sha256") or ""))


def verdict_column(scored: ScoredSet) -> int:
    for name in VERDICT_COLUMNS:
        if name in scored.names:
            return scored.names.index(name)
    raise HopscoreError(f"{scored.label}: no judge verdicts ({' or '.join(VERDICT_COLUMNS)})")


def corrected_pair(a: ScoredSet, b: ScoredSet, calibration: tuple[Calibration, Path],
                   level: float) -> CorrectedPair:
    warnings: list[str] = []
    for scored in (a, b):
        identity = set_identity(scored)
        if not identity.endpoint:
            identity = JudgeIdentity(identity.model, calibration[0].judge.endpoint,
                                     identity.prompt_sha256)
        warnings += check_bound_to(calibration, identity, scored.label)
    alignment = align(a, b)
    if not alignment.ids:
        raise HopscoreError(f"{a.label} and {b.label} have no example id in common")
    right_a = a.values[alignment.rows_a, verdict_column(a)] >= 1
    right_b = b.values[alignment.rows_b, verdict_column(b)] >= 1
    n = len(alignment.ids)
    confusion = calibration[0].confusion
    return CorrectedPair(
        a.label, b.label, n,
        corrected_accuracy(int(right_a.sum()), n, confusion, level),
        corrected_accuracy(int(right_b.sum()), n, confusion, level),
        corrected_difference(int(np.sum(right_a & ~right_b)), int(np.sum(right_b & ~right_a)),
                             n, confusion, level),
        warnings)


def corrected_pairs(sets: list[ScoredSet], baseline: int, calibration: tuple[Calibration, Path],
                    level: float) -> list[CorrectedPair]:
    """Every run against the baseline, as ``compare`` pairs them."""
    return [corrected_pair(sets[baseline], other, calibration, level)
            for i, other in enumerate(sets) if i != baseline]
