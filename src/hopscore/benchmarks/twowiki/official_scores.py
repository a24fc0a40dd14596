"""The official v1.1 script's per-example scores for 2WikiMultihopQA: answers maxed over their
aliases, title-lowered supporting facts, and evidence triples (whose recall may exceed 1)."""

from __future__ import annotations

from hopscore.benchmarks.hotpotqa.example import Fact
from hopscore.benchmarks.twowiki.example import Triple
from hopscore.text.normalize import hotpot_prf, normalize_answer, normalize_no_articles

Scores4 = tuple[float, float, float, float]


def answer_scores(prediction: str, golds_normalized: tuple[str, ...]) -> Scores4:
    """``(em, f1, prec, recall)``, each maxed on its own over the gold answers."""
    pred = normalize_answer(prediction)
    em = f1 = precision = recall = 0.0
    for gold in golds_normalized:
        f, p, r = hotpot_prf(pred, gold)
        em = max(em, float(pred == gold))
        f1, precision, recall = max(f1, f), max(precision, p), max(recall, r)
    return em, f1, precision, recall


def lowered_fact_scores(predicted: tuple[Fact, ...], gold_lowered: tuple[Fact, ...]) -> Scores4:
    """The official ``update_sp``: dedupe, then lowercase titles; count over the lowered lists."""
    pred_lowered = [(title.lower(), sent_id) for title, sent_id in set(predicted)]
    gold_set, pred_set = set(gold_lowered), set(pred_lowered)
    tp = sum(1 for fact in pred_lowered if fact in gold_set)
    fp = len(pred_lowered) - tp
    fn = sum(1 for fact in gold_lowered if fact not in pred_set)
    return _prf_em(tp, fp, fn)


def _prf_em(tp: int, fp: int, fn: int) -> Scores4:
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return (1.0 if fp + fn == 0 else 0.0), f1, precision, recall


def evidence_scores(
    predicted: tuple[Triple, ...], variants: frozenset[Triple], n_gold: int
) -> Scores4:
    """The official ``update_evi``: recall = matches / gold triples, which may exceed 1."""
    pred = {tuple(normalize_no_articles(x) for x in triple) for triple in predicted}
    matches = sum(1 for triple in pred if triple in variants)
    precision = matches / len(pred) if pred else 0.0
    recall = matches / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    em = 1.0 if matches == len(pred) == n_gold else 0.0
    return em, f1, precision, recall
