"""QuaRTz's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["quartz_answer"]


def quartz_answer(
    prediction: str, choices: Mapping[str, str] | Sequence[tuple[str, str]] | Sequence[str],
    answer_key: str,
) -> dict[str, float]:
    """QuaRTz accuracy: the prediction counts as the choice it names (the label, "A." or "(A)",
    or exactly one choice's text) and scores 1 when that is the answer key.

    ``choices`` is ``{label: text}``, ``[(label, text), ...]`` or the texts alone, labelled
    A, B, ... in order; an answer key that is not a label is a ``ValueError``.

    >>> from hopscore.metrics import quartz_answer
    >>> choices = {"A": "more", "B": "less"}
    >>> quartz_answer("B. less", choices, "B"), quartz_answer("less", choices, "B")
    ({'accuracy': 1.0}, {'accuracy': 1.0})
    >>> quartz_answer("A", ["increase", "decrease"], "A")
    {'accuracy': 1.0}
    """
    from hopscore.benchmarks.quartz import resolve_choice

    pairs = _choice_pairs(choices)
    labels = [label for label, _ in pairs]
    if answer_key not in labels:
        raise ValueError(f"quartz_answer: the answer key {answer_key!r} is not one of the "
                         f"choice labels {labels}")
    return {"accuracy": float(resolve_choice(prediction, pairs) == answer_key)}


def _choice_pairs(choices: Any) -> tuple[tuple[str, str], ...]:
    """``{label: text}``, ``[(label, text), ...]`` or the texts alone (labelled A, B, ...)."""
    if isinstance(choices, Mapping):
        pairs = tuple(choices.items())
    elif isinstance(choices, str) or not isinstance(choices, Sequence):
        raise TypeError("quartz_answer: choices must be {label: text}, [(label, text), ...] or "
                        f"[text, ...], got {type(choices).__name__}")
    elif all(isinstance(choice, str) for choice in choices):
        if len(choices) > 26:
            raise ValueError("quartz_answer: more than 26 unlabelled choices")
        pairs = tuple((chr(ord("A") + i), text) for i, text in enumerate(choices))
    else:
        pairs = tuple(tuple(choice) for choice in choices if not isinstance(choice, str)
                      and isinstance(choice, Sequence) and len(choice) == 2)
        if len(pairs) != len(choices):
            raise TypeError("quartz_answer: choices must be {label: text}, [(label, text), ...] "
                            f"or [text, ...], got {list(choices)!r}"[:300])
    if not all(isinstance(label, str) and isinstance(text, str) for label, text in pairs):
        raise TypeError(f"quartz_answer: choice labels and texts must be strings, got {pairs!r}"
                        [:300])
    return pairs
