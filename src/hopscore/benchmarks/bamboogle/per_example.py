"""Bamboogle's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from hopscore.text.normalize import normalize_answer

__all__ = ["bamboogle_answer"]


def bamboogle_answer(prediction: str, gold: str) -> dict[str, float]:
    """Bamboogle's exact match and F1 as MCR's ``evaluation.py`` computes them: its F1
    intersects token *sets* but divides by token *list* lengths, so an exact answer with a
    repeated word scores F1 below 1.

    >>> from hopscore.metrics import bamboogle_answer
    >>> bamboogle_answer("Bora Bora", "Bora Bora")
    {'em': 1.0, 'f1': 0.5}
    """
    from hopscore.benchmarks.bamboogle import mcr_scores

    em, f1 = mcr_scores(prediction, normalize_answer(gold))
    return {"em": em, "f1": f1}
