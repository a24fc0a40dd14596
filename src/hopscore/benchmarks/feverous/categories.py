"""FEVEROUS error categories: gold label x predicted label, and the verdict against the
evidence (the FEVEROUS score needs the right label and one complete gold evidence set)."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample

LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
EVIDENCE = (
    "right label, complete evidence", "right label, evidence incomplete",
    "wrong label, complete evidence", "wrong label, evidence incomplete", NO_PREDICTION,
)  # fmt: skip


def confusion(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    if not sample.gold:
        return None
    said = (sample.prediction or "").strip().upper()
    said = said if said in LABELS else "not a label"
    return f"{sample.gold[0]} -> {said}"


def evidence(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    metrics = sample.metrics
    if "label_accuracy" not in metrics or "feverous_score" not in metrics:
        return None
    right = metrics["label_accuracy"] >= 1
    # the score is 0 for any wrong label: then evidence recall says whether a set was covered
    complete = (metrics["feverous_score"] if right else metrics.get("evidence_recall", 0.0)) >= 1
    return (f"{'right' if right else 'wrong'} label, "
            f"{'complete evidence' if complete else 'evidence incomplete'}")


def dimensions(inputs: Inputs) -> list[Dimension]:
    order = tuple(f"{gold} -> {said}" for gold in LABELS for said in (*LABELS, "not a label"))
    return [
        Dimension("gold label x predicted label",
                  "Gold verdict -> predicted verdict (the diagonal is right).", confusion,
                  (*order, NO_PREDICTION)),
        Dimension("label x evidence",
                  "The FEVEROUS score counts a claim when the label is right and the predicted "
                  "evidence covers a whole gold evidence set.", evidence, EVIDENCE),
    ]
