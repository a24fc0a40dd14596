"""MuSiQue's per-example scores as ``evaluate_v1.0.py`` and its ``metrics/`` compute them
(StonyBrookNLP/musique @ 922ac98; ``docs/scoring.md``).

* answer EM and F1 (``metrics/answer.py``): SQuAD normalization; F1 is the SQuAD v2.0 multiset
  F1 (when either side has no tokens it is 1 if both have none, else 0); each is maxed over the
  gold answer and its aliases, independently of the other;
* support EM, F1, precision and recall (``metrics/support.py``): the predicted and gold
  paragraph indices as sets (duplicates collapse); empty against empty scores 1;
* sufficiency (``metrics/group_*_sufficiency.py``): the ``predicted_answerable`` values of a
  question's prediction lines, in file order, equal the gold ``answerable`` values of its gold
  lines, in file order (a Python list equality, so ``1`` equals ``true``); the group metrics are
  the answerable twin's answer and support scores, zeroed unless the sufficiency is right.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hopscore.text.normalize import normalize_answer, squad2_f1

#: (em, f1, precision, recall) of an absent support prediction
ZERO4 = (0.0, 0.0, 0.0, 0.0)


def answer_scores(prediction: str, golds_normalized: Sequence[str]) -> tuple[float, float]:
    """``(em, f1)`` of one answer, each the maximum over the normalized gold answers."""
    pred = normalize_answer(prediction)
    em = max(float(pred == gold) for gold in golds_normalized)
    f1 = max(squad2_f1(pred, gold) for gold in golds_normalized)
    return em, f1


def support_scores(predicted: Iterable[int], gold: Iterable[int]
                   ) -> tuple[float, float, float, float]:
    """``(em, f1, precision, recall)`` of predicted paragraph indices against the gold ones."""
    pred_set, gold_set = set(predicted), set(gold)
    if not pred_set and not gold_set:
        return 1.0, 1.0, 0.0, 0.0  # the official rule sets f1 and em to 1; P and R stay 0
    tp = len(pred_set & gold_set)
    fp = len(pred_set) - tp
    fn = len(gold_set) - tp
    prec = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * prec * recall / (prec + recall) if prec + recall > 0 else 0.0
    return (1.0 if fp + fn == 0 else 0.0), f1, prec, recall


def sufficient(predicted: Sequence[bool | None], gold: Sequence[bool]) -> bool:
    """Whether the predicted answerability of a question's lines, in file order, is the gold
    one (as many lines, each the same)."""
    return list(predicted) == list(gold)
