"""MuSiQue's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["musique_answer", "musique_support"]


def musique_answer(prediction: str, gold: str, aliases: Sequence[str] = ()) -> dict[str, float]:
    """MuSiQue's answer metrics (``evaluate_v1.0.py``): exact match and SQuAD v2.0 token F1,
    each the best over the gold answer and its aliases.

    >>> from hopscore.metrics import musique_answer
    >>> musique_answer("the Bombardier company", "Bombardier Inc.", ["Bombardier"])
    {'answer_em': 0.0, 'answer_f1': 0.6666666666666666}
    """
    from hopscore.benchmarks.musique.official_scores import answer_scores
    from hopscore.text.normalize import normalize_answer

    em, f1 = answer_scores(prediction, [normalize_answer(g) for g in (gold, *aliases)])
    return {"answer_em": em, "answer_f1": f1}


def musique_support(predicted: Iterable[int], gold: Iterable[int]) -> dict[str, float]:
    """MuSiQue's support metrics: predicted paragraph indices against the gold supporting ones,
    as sets (exact match, F1, precision, recall; empty against empty scores 1).

    >>> from hopscore.metrics import musique_support
    >>> musique_support([3, 3, 7], [3, 12])
    {'support_em': 0.0, 'support_f1': 0.5, 'support_prec': 0.5, 'support_recall': 0.5}
    """
    from hopscore.benchmarks.musique.official_scores import support_scores

    em, f1, prec, recall = support_scores(map(int, predicted), map(int, gold))
    return {"support_em": em, "support_f1": f1, "support_prec": prec, "support_recall": recall}
