"""2WikiMultihopQA error categories: outcome per question type, and answer x supporting facts x
evidence (the three parts of the joint metric)."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample, outcome

TYPES = ("comparison", "bridge_comparison", "compositional", "inference")


def type_and_outcome(sample: Sample) -> str | None:
    kind = sample.groups.get("type", "untyped")
    if sample.missing:
        return f"{kind}: {NO_PREDICTION}"
    result = outcome(sample.metrics, "em", "f1")
    return None if result is None else f"{kind}: {result}"


def parts(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    metrics = sample.metrics
    if "em" not in metrics or "sp_em" not in metrics:
        return None
    words = [
        "right answer" if metrics["em"] >= 1 else "wrong answer",
        "right facts" if metrics["sp_em"] >= 1 else "wrong facts",
    ]
    if "evi_em" in metrics:
        words.append("right evidence" if metrics["evi_em"] >= 1 else "wrong evidence")
    return ", ".join(words)


def dimensions(inputs: Inputs) -> list[Dimension]:
    outcomes = ("right", "partial", "wrong", NO_PREDICTION)
    order = tuple(f"{kind}: {o}" for kind in TYPES for o in outcomes)
    combos = tuple(
        f"{a} answer, {f} facts, {e} evidence"
        for a in ("right", "wrong") for f in ("right", "wrong") for e in ("right", "wrong")
    )  # fmt: skip
    return [
        Dimension("question type x outcome",
                  "Outcome per 2Wiki question type (right = exact match, partial = F1 > 0).",
                  type_and_outcome, order),
        Dimension("answer x supporting facts x evidence",
                  "Exact answer, exact supporting-fact set and exact evidence-triple set: the "
                  "three parts of the joint metrics.", parts, (*combos, NO_PREDICTION)),
    ]
