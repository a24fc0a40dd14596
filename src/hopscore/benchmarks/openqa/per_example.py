"""Open QA's per-example functions on plain values, offered by :mod:`hopscore.metrics` (the
names in ``__all__``; the benchmark declares this module as its ``metric_functions``)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["openqa_answer"]


def openqa_answer(prediction: str, golds: str | Sequence[str]) -> dict[str, float]:
    """EM, sub-EM, F1 (FlashRAG / Search-R1), cover-EM, EM and F1 (R1-Searcher) of one
    answer, and Search-R1's ``qa_em`` when it holds ``<answer>`` tags.

    >>> from hopscore.metrics import openqa_answer
    >>> scores = openqa_answer("Paris, France", ["Paris"])
    >>> scores["em"], scores["sub_em"], scores["cover_em"]
    (0.0, 1.0, 1.0)
    """
    from hopscore.benchmarks.openqa import answer_scores
    from hopscore.benchmarks.openqa.rules import r1searcher_answer

    gold_list = [golds] if isinstance(golds, str) else list(golds)
    reply = prediction if "<answer>" in prediction else None
    answer = r1searcher_answer(prediction) if reply is not None else prediction
    scores = answer_scores(answer, gold_list, reply)
    scores.pop("acc_l")
    if reply is None:
        scores.pop("qa_em")
    return scores
