"""Why a judge and exact match disagree on an answer: one kind per disagreement, and the kinds
by how often they occur (pure).

The kind is the first of these that holds for the prediction and the gold answers (SQuAD
normalization: lower case, no punctuation or articles):

* ``empty answer``: the prediction is empty;
* ``matches the gold``: the prediction is a gold answer once normalized (the judge rejected
  an exact match, or exact match is stricter than its normalization);
* ``verbose answer``: a gold answer is inside the prediction, which says more (cover-EM would
  count it right);
* ``numbers and units``: the prediction and a gold answer both hold numbers, and share one or
  are written differently (``1,000 km`` vs ``1000 kilometres``);
* ``alias or paraphrase``: the prediction shares at least half its words with a gold answer
  (token F1 >= 0.5) without containing it;
* ``different answer``: none of these: the judge accepted an answer that has nothing in common
  with the gold (or rejected one exact match accepted).

Each kind is split by direction: ``judge right`` (exact match said wrong) or ``judge wrong``
(exact match said right).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from hopscore.text.normalize import normalize_answer, token_prf

KINDS = ("empty answer", "matches the gold", "verbose answer", "numbers and units",
         "alias or paraphrase", "different answer")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _numbers(text: str) -> set[str]:
    return {m.group().replace(",", "").rstrip("0").rstrip(".") or "0"
            for m in _NUMBER.finditer(text)}


def disagreement_kind(prediction: str | None, gold: Sequence[str]) -> str:
    """The kind of one disagreement (see the module docstring)."""
    pred = normalize_answer(prediction or "")
    if not pred:
        return KINDS[0]
    answers = [normalize_answer(g) for g in gold if g and normalize_answer(g)]
    if pred in answers:
        return KINDS[1]
    if any(f" {a} " in f" {pred} " for a in answers):
        return KINDS[2]
    if _numbers(prediction or "") and any(_numbers(g) for g in gold):
        return KINDS[3]
    if any(token_prf(pred.split(), a.split())[0] >= 0.5 for a in answers):
        return KINDS[4]
    return KINDS[5]


@dataclass(frozen=True, slots=True)
class KindCount:
    kind: str
    judge_right: bool
    count: int

    @property
    def label(self) -> str:
        return f"{self.kind} (judge {'right' if self.judge_right else 'wrong'})"


def order_by_frequency(kinds: Sequence[tuple[str, bool]]) -> list[int]:
    """Positions of the disagreements, those of the most frequent (kind, direction) first, in
    their own order within a kind."""
    rank = {(k.kind, k.judge_right): i for i, k in enumerate(kinds_by_frequency(kinds))}
    return sorted(range(len(kinds)), key=lambda i: (rank[kinds[i]], i))


def kinds_by_frequency(kinds: Sequence[tuple[str, bool]]) -> list[KindCount]:
    """(kind, the judge said right) pairs counted, the most frequent first (then the order of
    :data:`KINDS`, judge right first)."""
    counts = Counter(kinds)
    return sorted((KindCount(kind, right, n) for (kind, right), n in counts.items()),
                  key=lambda k: (-k.count, KINDS.index(k.kind), not k.judge_right))
