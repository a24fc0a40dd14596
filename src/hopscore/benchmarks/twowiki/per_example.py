"""2WikiMultihopQA's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Iterable

from hopscore.text.normalize import normalize_answer

__all__ = ["twowiki_answer"]


def twowiki_answer(prediction: str, gold: str, aliases: Iterable[str] = ()) -> dict[str, float]:
    """2WikiMultihopQA's answer metrics (``2wikimultihop_evaluate_v1.1.py``): each metric is
    the best over the gold answer and its aliases (``id_aliases.json``).

    >>> from hopscore.metrics import twowiki_answer
    >>> twowiki_answer("USA", "United States", aliases=["USA", "America"])["em"]
    1.0
    """
    from hopscore.benchmarks.twowiki.official_scores import answer_scores

    golds = tuple(dict.fromkeys(normalize_answer(a) for a in (gold, *aliases)))
    em, f1, prec, recall = answer_scores(prediction, golds)
    return {"em": em, "f1": f1, "prec": prec, "recall": recall}
