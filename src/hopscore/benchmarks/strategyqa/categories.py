"""StrategyQA error categories: gold answer x predicted answer (which way the yes/no answers
go wrong), and the answer against the evidence paragraphs retrieved (Recall@10)."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample

NOT_BOOLEAN = "not a yes/no answer"
CONFUSION = (
    "gold yes, said yes", "gold no, said no", "gold yes, said no", "gold no, said yes",
    f"gold yes, {NOT_BOOLEAN}", f"gold no, {NOT_BOOLEAN}", NO_PREDICTION,
)  # fmt: skip
_WORDS = {"true": "yes", "yes": "yes", "false": "no", "no": "no", "1": "yes", "0": "no"}
EVIDENCE = (
    "right, all evidence found", "right, some evidence found", "right, no evidence found",
    "wrong, all evidence found", "wrong, some evidence found", "wrong, no evidence found",
)  # fmt: skip


def _word(text: str | None) -> str | None:
    return None if text is None else _WORDS.get(text.strip().lower().rstrip("."))


def confusion(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    gold = _word(sample.gold[0]) if sample.gold else None
    if gold is None:
        return None
    said = _word(sample.prediction)
    return f"gold {gold}, {NOT_BOOLEAN}" if said is None else f"gold {gold}, said {said}"


def evidence(sample: Sample) -> str | None:
    recall = sample.metrics.get("recall@10")
    if sample.missing or recall is None or "accuracy" not in sample.metrics:
        return None
    right = "right" if sample.metrics["accuracy"] >= 1 else "wrong"
    found = "all" if recall >= 1 else ("some" if recall > 0 else "no")
    return f"{right}, {found} evidence found"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [
        Dimension("gold answer x predicted answer",
                  "Which way the yes/no answers go wrong (true/false and yes/no are the same "
                  "answer).", confusion, CONFUSION),
        Dimension("answer x evidence retrieved",
                  "Right or wrong answer against the share of gold evidence paragraphs among "
                  "the predicted ones (Recall@10: all, some, none); only predictions that "
                  "list paragraphs.", evidence, EVIDENCE),
    ]
