"""The official ``hotpot_evaluate_v1.py``'s per-example scores for HotpotQA: the answer, the
supporting-fact sets and their joint."""

from __future__ import annotations

from typing import Any

from hopscore.text.normalize import hotpot_prf, normalize_answer


def supporting_fact_scores(
    predicted: set[Any], gold: set[Any]
) -> tuple[float, float, float, float]:
    """``(em, f1, precision, recall)`` of a predicted set against a gold set, as the official
    ``update_sp``: precision 0 when nothing is predicted, recall 0 when the gold is empty, and
    em 1 iff there are no false positives and no false negatives."""
    tp = len(predicted & gold)
    fp = len(predicted) - tp
    fn = len(gold) - tp
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    em = 1.0 if fp + fn == 0 else 0.0
    return em, f1, precision, recall


def joint_scores(
    answer: tuple[float, float, float, float], sp: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """Joint ``(em, f1, prec, recall)``: P = P_ans * P_sp, R = R_ans * R_sp, F1 from those."""
    precision = answer[2] * sp[2]
    recall = answer[3] * sp[3]
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return answer[0] * sp[0], f1, precision, recall


ZERO4 = (0.0, 0.0, 0.0, 0.0)


def answer_scores(prediction: str, gold: str) -> tuple[float, float, float, float]:
    """HotpotQA answer ``(em, f1, prec, recall)`` of one prediction against one gold answer."""
    if prediction == gold:  # equal text normalizes equally: one normalization is enough
        return (1.0, 1.0, 1.0, 1.0) if normalize_answer(gold) else (1.0, 0.0, 0.0, 0.0)
    pred_norm = normalize_answer(prediction)
    gold_norm = normalize_answer(gold)
    if pred_norm == gold_norm:  # token F1 of equal strings: 1, or 0 when they have no tokens
        return (1.0, 1.0, 1.0, 1.0) if pred_norm else (1.0, 0.0, 0.0, 0.0)
    f1, precision, recall = hotpot_prf(pred_norm, gold_norm)
    return 0.0, f1, precision, recall
