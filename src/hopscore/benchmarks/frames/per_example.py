"""FRAMES's per-example rule metrics on plain values, offered by :mod:`hopscore.metrics` (the
names in ``__all__``; the benchmark declares this module as its ``metric_functions``)."""

from __future__ import annotations

from hopscore.text.normalize import normalize_answer, token_prf

__all__ = ["frames_answer"]


def frames_answer(prediction: str, gold: str | list[str]) -> dict[str, float]:
    """Exact match and F1 after SQuAD normalization, and ``contains`` (the normalized gold
    answer occurs as whole words in the normalized prediction), each the best over the gold
    answers. Not FRAMES's metric, which is an LLM rater's (``score --judge``).

    >>> from hopscore.metrics import frames_answer
    >>> frames_answer("The answer is Jane Ballou.", "Jane Ballou")
    {'em': 0.0, 'f1': 0.6666666666666666, 'contains': 1.0}
    """
    golds = [gold] if isinstance(gold, str) else gold
    pred = normalize_answer(prediction)
    best = {"em": 0.0, "f1": 0.0, "contains": 0.0}
    for answer in golds:
        norm = normalize_answer(answer)
        best["em"] = max(best["em"], float(pred == norm))
        best["f1"] = max(best["f1"], token_prf(pred.split(), norm.split())[0])
        best["contains"] = max(best["contains"],
                               float(bool(norm) and f" {norm} " in f" {pred} "))
    return best
