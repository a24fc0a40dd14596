"""HotpotQA's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["hotpotqa_answer", "hotpotqa_supporting_facts"]


def hotpotqa_answer(prediction: str, gold: str) -> dict[str, float]:
    """HotpotQA's answer metrics (``hotpot_evaluate_v1.py``): exact match and token F1,
    precision and recall after SQuAD normalization; "yes", "no" and "noanswer" only match
    themselves.

    >>> from hopscore.metrics import hotpotqa_answer
    >>> hotpotqa_answer("Paris, France", "Paris")
    {'em': 0.0, 'f1': 0.6666666666666666, 'prec': 0.5, 'recall': 1.0}
    >>> hotpotqa_answer("yes", "yes it is")["f1"]
    0.0
    """
    from hopscore.benchmarks.hotpotqa.official_scores import answer_scores

    em, f1, prec, recall = answer_scores(prediction, gold)
    return {"em": em, "f1": f1, "prec": prec, "recall": recall}


def hotpotqa_supporting_facts(
    predicted: Iterable[Sequence[str | int]], gold: Iterable[Sequence[str | int]]
) -> dict[str, float]:
    """HotpotQA's supporting-fact metrics: the predicted ``[title, sentence index]`` pairs
    against the gold ones, as sets (exact match, F1, precision, recall).

    >>> from hopscore.metrics import hotpotqa_supporting_facts
    >>> hotpotqa_supporting_facts([["Ed Wood", 0]], [["Ed Wood", 0], ["Scott Derrickson", 0]])
    {'sp_em': 0.0, 'sp_f1': 0.6666666666666666, 'sp_prec': 1.0, 'sp_recall': 0.5}
    """
    from hopscore.benchmarks.hotpotqa.official_scores import supporting_fact_scores

    def facts(pairs: Iterable[Sequence[str | int]]) -> set[tuple[str, int]]:
        return {(str(title), int(sentence)) for title, sentence in pairs}

    em, f1, prec, recall = supporting_fact_scores(facts(predicted), facts(gold))
    return {"sp_em": em, "sp_f1": f1, "sp_prec": prec, "sp_recall": recall}
