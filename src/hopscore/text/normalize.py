"""Answer normalization, exact match and the F1 variants of the official scorers, in one place.

All scorers in the SQuAD lineage normalize the same way (see ``official-metrics.md`` §0):
lower-case, delete ASCII punctuation, drop the words *a*, *an*, *the*, collapse whitespace.
They differ in their F1:

* :func:`token_prf` -- multiset overlap, 0 when nothing overlaps (SQuAD v1.1 and the multi-hop
  scorers derived from it);
* :func:`hotpot_prf` -- the same plus the yes/no/noanswer rule of the multi-hop scorers;
* :func:`squad2_f1` -- multiset overlap, but empty vs empty scores 1 (SQuAD v2.0 and the scorers
  derived from it);
* :func:`set_f1` -- MCR's set intersection over list lengths (one of MCR's evaluators).

Which benchmark uses which is said in the benchmark's own module (``benchmarks/<name>/``).
"""

from __future__ import annotations

import re
import string
from collections import Counter

#: Runs of ASCII punctuation (``string.punctuation``); deleting them with one regex substitution
#: is about twice as fast as ``str.translate`` with a deletion table.
_PUNCT = re.compile("[" + re.escape(string.punctuation) + "]+")
_PUNCT_CHARS = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_YES_NO = frozenset({"yes", "no", "noanswer"})


_ARTICLE_WORDS = frozenset({"a", "an", "the"})


def normalize_answer(text: str) -> str:
    """SQuAD normalization: lower, remove ASCII punctuation, remove articles, fix whitespace."""
    text = text.lower()
    if text.isascii() and text.isprintable():
        # printable ASCII: letters, digits, spaces and punctuation. Without the punctuation the
        # word boundaries of the article regex are the spaces and the ends, so it removes the
        # words "a", "an", "the" (what the general path below gives, several times faster)
        if not text.replace(" ", "").isalnum():  # some punctuation (or nothing but spaces)
            text = _PUNCT.sub("", text)
        words = text.split()
        if _ARTICLE_WORDS.isdisjoint(words):
            return " ".join(words)
        return " ".join([word for word in words if word not in _ARTICLE_WORDS])
    if not _PUNCT_CHARS.isdisjoint(text):  # most answers have no punctuation: skip the regex
        text = _PUNCT.sub("", text)
    if "a" in text or "the" in text:  # skipping the regex when no article can match is a speed-up
        text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def normalize_no_articles(text: str) -> str:
    """Evidence normalization: like :func:`normalize_answer` but articles are kept."""
    return " ".join(_PUNCT.sub("", text.lower()).split())


def exact_match(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


#: Above this many tokens a side, :func:`common_count` counts with Counters.
_SHORT = 16


def common_count(pred_tokens: list[str], gold_tokens: list[str]) -> int:
    """Size of the multiset intersection: ``sum((Counter(pred) & Counter(gold)).values())``.

    Answers are a few tokens long, where matching each predicted token against a shrinking copy
    of the gold list is several times faster than building two Counters (and gives the same
    count: each gold token is matched at most once).
    """
    if len(pred_tokens) > _SHORT or len(gold_tokens) > _SHORT:
        return sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    remaining = gold_tokens.copy()
    same = 0
    for token in pred_tokens:
        if token in remaining:
            remaining.remove(token)
            same += 1
    return same


def token_prf(pred_tokens: list[str], gold_tokens: list[str]) -> tuple[float, float, float]:
    """Multiset token overlap as ``(f1, precision, recall)``; no overlap (or no tokens) gives 0."""
    if pred_tokens == gold_tokens:  # the same (non-empty) tokens: every ratio is exactly 1
        return (1.0, 1.0, 1.0) if pred_tokens else (0.0, 0.0, 0.0)
    num_same = common_count(pred_tokens, gold_tokens)
    if num_same == 0:
        return 0.0, 0.0, 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall), precision, recall


def hotpot_prf(pred_norm: str, gold_norm: str) -> tuple[float, float, float]:
    """The multi-hop scorers' answer F1 on *normalized* strings, with the yes/no/noanswer rule.

    If either side is one of ``yes``, ``no``, ``noanswer`` and the two differ, everything is 0.
    """
    if pred_norm != gold_norm and (pred_norm in _YES_NO or gold_norm in _YES_NO):
        return 0.0, 0.0, 0.0
    return token_prf(pred_norm.split(), gold_norm.split())


def squad2_f1(pred_norm: str, gold_norm: str) -> float:
    """SQuAD v2.0 F1 on normalized strings: if either side has no tokens, 1 iff both have none."""
    pred_tokens = pred_norm.split()
    gold_tokens = gold_norm.split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    return token_prf(pred_tokens, gold_tokens)[0]


def set_f1(pred_norm: str, gold_norm: str) -> float:
    """MCR's ``compute_f1``: set intersection divided by *list* lengths; empty vs empty is 1.

    This under-scores repeated tokens ("bora bora" vs itself gives 0.5), as the original does.
    """
    pred_tokens = pred_norm.split()
    gold_tokens = gold_norm.split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = set(pred_tokens) & set(gold_tokens)
    if not common:
        return 0.0
    precision = len(common) / len(pred_tokens)
    recall = len(common) / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)
