"""Judge vs exact match: where an LLM judge and EM/F1 disagree, and judge failures.

The judge verdict comes from a ``judge_accuracy``/``judge_correct`` metric (``hopscore score
--judge``) or from a judge output row joined by id (``--judge FILE``).
"""

from __future__ import annotations

from hopscore.analysis.categories import Dimension, Inputs, Sample

JUDGE_METRICS = ("judge_accuracy", "judge_correct")
EXACT_METRICS = ("em", "exact_match", "accuracy")
CATEGORIES = (
    "both right", "judge right, EM wrong (F1 > 0)", "judge right, EM wrong (F1 = 0)",
    "judge wrong, EM right", "both wrong", "judge reply not parsed", "judge error",
)  # fmt: skip


def judge_verdict(sample: Sample) -> bool | str | None:
    """True/False, "unparsed", "error", or None when there is no judge verdict."""
    for name in JUDGE_METRICS:
        if name in sample.metrics:
            return sample.metrics[name] >= 1
    row = sample.judge
    if row is None:
        return None
    if row.get("error") or row.get("correct") is None:
        return "error"
    if row.get("parse_ok") is False:
        return "unparsed"
    return bool(row.get("correct"))


def agreement(sample: Sample) -> str | None:
    exact = next((n for n in EXACT_METRICS if n in sample.metrics), None)
    if exact is None:
        return None
    verdict = judge_verdict(sample)
    if verdict is None:
        return None
    if verdict == "error":
        return "judge error"
    if verdict == "unparsed":
        return "judge reply not parsed"
    em_right = sample.metrics[exact] >= 1
    if verdict and em_right:
        return "both right"
    if verdict:
        return CATEGORIES[1] if sample.metrics.get("f1", 0.0) > 0 else CATEGORIES[2]
    return "judge wrong, EM right" if em_right else "both wrong"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "judge vs exact match",
        "LLM-judge verdict against exact match: 'judge right, EM wrong' is usually a paraphrase "
        "or an answer the gold aliases miss; 'judge wrong, EM right' deserves a look at the "
        "judge.", agreement, CATEGORIES,
    )]  # fmt: skip
