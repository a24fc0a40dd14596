"""QuaRTz error categories: right, the other option chosen, or an answer that names no option.

With ``--gold`` a free-text answer is resolved against the question's options as the scorer
resolves it (:func:`hopscore.benchmarks.quartz.resolve_choice`); without it, a wrong answer
that is a bare option label is "the other option", any other wrong text is counted apart."""

from __future__ import annotations

from functools import partial

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample

CATEGORIES = ("right", "the other option", "names no option",
              "wrong (free text; --gold tells how)", NO_PREDICTION)
LABELS = ("A", "B", "C", "D")


def _choices(inputs: Inputs) -> dict[str, tuple[tuple[str, str], ...]]:
    if inputs.gold is None:
        return {}
    from hopscore.benchmarks.quartz import QuaRTz

    examples = QuaRTz().load_gold(inputs.gold)
    return {e.id: e.choices for e in examples}


def choice(choices: dict[str, tuple[tuple[str, str], ...]], sample: Sample) -> str | None:
    if sample.missing or sample.prediction is None:
        return NO_PREDICTION
    if "accuracy" not in sample.metrics:
        return None
    if sample.metrics["accuracy"] >= 1:
        return "right"
    options = choices.get(sample.id)
    if options is not None:
        from hopscore.benchmarks.quartz import resolve_choice

        chosen = resolve_choice(sample.prediction, options)
        return CATEGORIES[2] if chosen is None else CATEGORIES[1]
    if sample.prediction.strip().rstrip(".").upper() in LABELS:
        return CATEGORIES[1]
    return CATEGORIES[3]


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "chosen option",
        "Right, the other option chosen, or an answer that names no option (neither its "
        "label nor its text).", partial(choice, _choices(inputs)), CATEGORIES,
    )]  # fmt: skip
