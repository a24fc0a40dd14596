"""BrowseComp-Plus measures on plain values: pure functions, no I/O.

* :func:`set_recall`: the share of a query's relevant documents among the documents an agent
  retrieved at any point of its run (the order does not matter);
* :func:`trec_ranking`, :func:`recall_at` and :func:`ndcg_at`: the retrieval-only track, as
  ``trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10`` computes them for one query;
* :func:`calibration`: the RMS calibration error of the judge's confidences, in bins of 100
  after sorting by confidence, with every bin counted, and the official script's figure beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Calibration", "calibration", "ndcg_at", "recall_at", "set_recall", "trec_ranking"]

#: The official target bin size of the calibration error.
BIN_SIZE = 100


def set_recall(retrieved: Iterable[str], relevant: Iterable[str]) -> float:
    """``|retrieved ∩ relevant| / |relevant|``; 0.0 when nothing is relevant."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted.intersection(retrieved)) / len(wanted)


def trec_ranking(scored: Iterable[tuple[str, float]]) -> tuple[str, ...]:
    """The documents of one query's run lines in trec_eval's order: score descending, then
    docid descending (trec_eval ignores the rank column); a repeated docid keeps its first
    line only (trec_eval refuses such a run; we keep the first and the reader warns)."""
    seen: dict[str, float] = {}
    for docid, score in scored:
        seen.setdefault(docid, score)
    ordered = sorted(seen.items(), key=lambda item: item[0], reverse=True)
    ordered.sort(key=lambda item: item[1], reverse=True)
    return tuple(docid for docid, _ in ordered)


def recall_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """trec_eval's ``recall.k``: relevant (relevance > 0) documents in the first ``k`` over all
    relevant documents of the query; 0.0 when none is relevant."""
    relevant = {docid for docid, rel in qrels.items() if rel > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def ndcg_at(ranking: Sequence[str], qrels: Mapping[str, int], k: int) -> float:
    """trec_eval's ``ndcg_cut.k``: gain = the qrels relevance (0 for unjudged documents),
    discount ``log2(rank + 1)``, normalised by the ideal ordering of the qrels' positive
    relevances cut at ``k``; 0.0 when the query has no relevant document."""
    ideal = sorted((rel for rel in qrels.values() if rel > 0), reverse=True)[:k]
    best = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    if best == 0:
        return 0.0
    got = sum(max(qrels.get(docid, 0), 0) / math.log2(rank + 2)
              for rank, docid in enumerate(ranking[:k]))
    return got / best


@dataclass(frozen=True, slots=True)
class CalibrationBin:
    """One bin: how many verdicts, their mean confidence (0-1) and their accuracy (0-1)."""

    n: int
    confidence: float
    accuracy: float


@dataclass(frozen=True, slots=True)
class Calibration:
    """The calibration error of ``n`` verdicts, in percent.

    ``error`` counts every bin. ``official`` is what ``evaluate_run.py`` reports for the same
    verdicts: 0.0 below one full bin, and otherwise the last bin (the one that absorbs the
    remainder) left out of the sum while the weights still divide by every verdict.
    """

    n: int
    error: float
    official: float
    bins: tuple[CalibrationBin, ...]


def calibration(verdicts: Sequence[tuple[float, bool]], bin_size: int = BIN_SIZE) -> Calibration:
    """RMS calibration error of ``(confidence in percent, correct)`` pairs.

    Binning: the pairs are sorted by confidence (a stable sort: tied confidences keep the
    order they are given in), cut into consecutive bins of ``bin_size``, and the remainder
    joins the last bin; fewer than ``bin_size`` pairs make one bin. The error is
    ``100 * sqrt(sum_b n_b / n * (mean confidence_b - accuracy_b) ** 2)`` with confidences
    divided by 100 (a confidence above 100 is taken as 100, as the official parser caps it).
    No pairs: an error of 0.0.
    """
    if bin_size < 1:
        raise ValueError("bin_size must be at least 1")
    pairs = sorted(((min(conf, 100.0) / 100.0, bool(ok)) for conf, ok in verdicts),
                   key=lambda pair: pair[0])
    n = len(pairs)
    if n == 0:
        return Calibration(0, 0.0, 0.0, ())
    starts = list(range(0, n - n % bin_size if n >= bin_size else 1, bin_size)) or [0]
    bounds = [(start, starts[i + 1] if i + 1 < len(starts) else n)
              for i, start in enumerate(starts)]
    bins = tuple(_bin(pairs[lo:hi]) for lo, hi in bounds)
    error = 100.0 * math.sqrt(sum(b.n / n * (b.confidence - b.accuracy) ** 2 for b in bins))
    if n < bin_size:
        official = 0.0
    else:
        kept = bins[:-1]
        official = 100.0 * math.sqrt(sum(b.n / n * (b.confidence - b.accuracy) ** 2
                                         for b in kept))
    return Calibration(n, error, official, bins)


def _bin(pairs: Sequence[tuple[float, bool]]) -> CalibrationBin:
    return CalibrationBin(len(pairs), sum(c for c, _ in pairs) / len(pairs),
                          sum(ok for _, ok in pairs) / len(pairs))
