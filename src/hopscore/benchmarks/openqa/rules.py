"""The answer-matching rules of the open-QA papers, each as its reference computes it.

Five rules score the same short answer, and papers call more than one of them "EM":

* FlashRAG ``em`` = Search-R1 ``em_check``: SQuAD normalization (lower case, ASCII punctuation
  deleted, a/an/the removed, whitespace collapsed), then equality with any gold answer;
* FlashRAG ``acc`` = Search-R1 ``subem_check`` (:func:`sub_em`): a normalized gold answer is a
  *character* substring of the normalized prediction ("1" is in "1990"; an empty gold is in
  everything);
* FlashRAG ``f1`` (:func:`flashrag_prf`): token F1 with the yes/no/noanswer rule; golds with
  no overlap and yes/no mismatches are skipped, and F1, precision and recall are each maxed
  over the golds on their own (they may come from different golds);
* R1-Searcher ``metric_calc_rule.py`` (:func:`r1_scores`): its own normalization (``_`` to a
  space, lower case, punctuation and the quotes ‘ ’ ´ ` *replaced by a space*, a/an/the removed,
  whitespace collapsed; the exact strings "True"/"False" read as yes/no first), then EM, the
  HotpotQA F1 of the best-F1 gold, and cover-EM (ACC_R): every gold token is among the
  prediction's tokens (``split(" ")``), in any order;
* Search-R1 ``qa_em.py`` on a tagged reply (:func:`search_r1_answer`): the last complete
  ``<answer>...</answer>`` span, stripped, scored by ``em_check``; no complete span scores 0.

Pure functions on strings; :mod:`hopscore.benchmarks.openqa` applies them to examples.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from hopscore.text.normalize import hotpot_prf, normalize_answer

__all__ = [
    "cover_em",
    "exact_em",
    "flashrag_prf",
    "r1_normalize",
    "r1_scores",
    "r1searcher_answer",
    "search_r1_answer",
    "sub_em",
]

_YES_NO = ("yes", "no", "noanswer")
_R1_PUNCT = frozenset(string.punctuation + "‘’´`")
_R1_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ANSWER_SPAN = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def exact_em(prediction_norm: str, golds_norm: Sequence[str]) -> float:
    """FlashRAG ``em`` / Search-R1 ``em_check`` on SQuAD-normalized strings."""
    return float(prediction_norm in golds_norm)


def sub_em(prediction_norm: str, golds_norm: Sequence[str]) -> float:
    """FlashRAG ``acc`` / Search-R1 ``subem_check``: a gold is a character substring."""
    return float(any(gold in prediction_norm for gold in golds_norm))


def flashrag_prf(prediction_norm: str, golds_norm: Sequence[str]) -> tuple[float, float, float]:
    """FlashRAG's ``token_level_scores``: ``(f1, precision, recall)``, each maxed on its own
    over the golds that are not skipped (a yes/no/noanswer mismatch, or no common token)."""
    best = [0.0, 0.0, 0.0]
    for gold in golds_norm:
        f1, precision, recall = hotpot_prf(prediction_norm, gold)
        if f1 == 0.0:
            continue
        best = [max(best[0], f1), max(best[1], precision), max(best[2], recall)]
    return best[0], best[1], best[2]


def _bool_text(text: str) -> str:
    return "yes" if text == "True" else "no" if text == "False" else text


def r1_normalize(text: str) -> str:
    """R1-Searcher's normalization (punctuation becomes a space, not nothing)."""
    text = _bool_text(text).replace("_", " ").lower()
    text = "".join(" " if ch in _R1_PUNCT else ch for ch in text)
    return " ".join(_R1_ARTICLES.sub(" ", text).split())


def cover_em(prediction_norm: str, gold_norm: str) -> bool:
    """R1-Searcher's ``cover_exact_match_score_1`` (ACC_R) on R1-normalized strings: every gold
    token (``split(" ")``: an empty string is the one token "") is a prediction token."""
    tokens = prediction_norm.split(" ")
    return all(token in tokens for token in gold_norm.split(" "))


def r1_scores(prediction: str, golds: Sequence[str]) -> tuple[float, float, float]:
    """R1-Searcher's ``update_answer``: ``(em, f1, cover_em)`` over the golds (the F1 is the
    best gold's, as the (f1, p, r) tuple with the highest F1)."""
    pred = r1_normalize(prediction)
    normalized = [r1_normalize(gold) for gold in golds]
    em = float(any(pred == gold for gold in normalized))
    f1 = max((_r1_f1(pred, gold) for gold in normalized), default=0.0)
    covered = float(any(cover_em(pred, gold) for gold in normalized))
    return em, f1, covered


def _r1_f1(pred: str, gold: str) -> float:
    if pred != gold and (pred in _YES_NO or gold in _YES_NO):
        return 0.0
    return hotpot_prf(pred, gold)[0]


def r1searcher_answer(reply: str) -> str:
    """R1-Searcher's extraction: the text after the last ``<answer>`` up to the next
    ``</answer>`` (spaces kept); a reply without ``<answer>`` is returned whole."""
    return reply.split("<answer>")[-1].split("</answer>")[0]


def search_r1_answer(reply: str) -> str | None:
    """The answer Search-R1's ``extract_solution`` finds in prompt + reply, given the reply
    alone: the last complete ``<answer>...</answer>`` span, stripped; None when there is none.

    Search-R1 scores prompt + response, and its prompt already holds one example span, so it
    asks for two matches. Given the reply alone, one span is the answer (asking for two would
    score every single-answer reply 0)."""
    found = _ANSWER_SPAN.findall(reply)
    return found[-1].strip() if found else None


def squad_golds(golds: Sequence[str]) -> tuple[str, ...]:
    """The golds under SQuAD normalization (FlashRAG and Search-R1)."""
    return tuple(normalize_answer(gold) for gold in golds)
