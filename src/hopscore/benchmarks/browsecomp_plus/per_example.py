"""BrowseComp-Plus's per-query functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

__all__ = ["browsecomp_plus_retrieval", "browsecomp_plus_run"]

#: The retrieval-only track's cutoffs (the official ``trec_eval`` measures).
CUTOFFS = (5, 100, 1000)
NDCG_CUTOFF = 10


def browsecomp_plus_run(retrieved: Iterable[str], evidence: Iterable[str], golds: Iterable[str],
                        *, status: str = "completed", response: str = "x",
                        search_calls: int = 0, judged_correct: bool | None = None
                        ) -> dict[str, float]:
    """One query of a run directory: evidence and gold-document recall of the retrieved
    docids, search calls, completion, and ``accuracy`` when a verdict is given (a run that
    did not complete, or has no response, is wrong whatever the verdict).

    >>> from hopscore.metrics import browsecomp_plus_run
    >>> browsecomp_plus_run(["1", "7"], ["1", "2"], ["2"], search_calls=3, judged_correct=True)
    {'evidence_recall': 0.5, 'gold_recall': 0.0, 'search_calls': 3.0, 'completed': 1.0, \
'accuracy': 1.0}
    """
    from hopscore.benchmarks.browsecomp_plus.measures import set_recall

    found = list(retrieved)
    out = {"evidence_recall": set_recall(found, evidence), "gold_recall": set_recall(found, golds),
           "search_calls": float(search_calls), "completed": float(status == "completed")}
    if judged_correct is not None:
        out["accuracy"] = float(status == "completed" and bool(response) and judged_correct)
    return out


def browsecomp_plus_retrieval(ranking: Sequence[str], evidence: Mapping[str, int],
                              golds: Mapping[str, int]) -> dict[str, float]:
    """One query of a TREC run (its docids in trec_eval's order: score descending, ties by
    docid descending): nDCG@10 and Recall@5/100/1000 against each qrels (docid: relevance).

    >>> from hopscore.metrics import browsecomp_plus_retrieval
    >>> browsecomp_plus_retrieval(["9", "1"], {"1": 1}, {"1": 1})["evidence_recall@5"]
    1.0
    """
    from hopscore.benchmarks.browsecomp_plus.measures import ndcg_at, recall_at

    out: dict[str, float] = {}
    for which, qrels in (("evidence", evidence), ("gold", golds)):
        out[f"{which}_ndcg@{NDCG_CUTOFF}"] = ndcg_at(ranking, qrels, NDCG_CUTOFF)
        for k in CUTOFFS:
            out[f"{which}_recall@{k}"] = recall_at(ranking, qrels, k)
    return out
