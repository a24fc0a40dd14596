"""The answers MCR's comparison is about, from one question's chains (``run.py``
``_populate_decompositions``; ``mcr-methods-and-feverous-db.md`` A3):

* ``sa`` (acc@1): the answer of the first chain that has one (normally the greedy chain 0);
* ``oracle`` (MCR's "acc@3", whatever k is): the best-scoring chain answer;
* ``sc`` (acc@majority): the majority vote over the chains' answers in lower case
  (``Counter.most_common``: a tie goes to the answer seen first in chain order, so the greedy
  chain wins the ties it is in). Under ``--protocol mcr`` the lower-cased winner is what is
  scored, as MCR does (so on choice keys that are capital letters it never matches); under
  the default protocol it is scored in the spelling of the first chain that gave it;
* ``mcr``: the meta-reasoner's answer, or an abstention.

A question without any chain answer has no SA, SC or oracle answer; MCR scores those False
(0), and so does the mean over all questions here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

METHODS = ("sa", "sc", "oracle", "mcr")
TITLES = {"sa": "SA", "sc": "SC", "oracle": "oracle@k", "mcr": "MCR", "cot": "CoT"}

Score = Callable[[str], "float | None"]


@dataclass(frozen=True, slots=True)
class MethodAnswer:
    """One method's answer to one question and its score (None: not answered)."""

    answer: str | None
    score: float | None
    #: which chain gave it (SA, oracle), or the vote count per answer (SC)
    chain: int | None = None
    votes: dict[str, int] | None = None
    abstained: bool = False

    @property
    def answered(self) -> bool:
        return self.answer is not None and self.score is not None and not self.abstained

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answer": self.answer, "score": self.score,
                               "answered": self.answered}
        if self.chain is not None:
            out["chain"] = self.chain
        if self.votes is not None:
            out["votes"] = self.votes
        if self.abstained:
            out["abstained"] = True
        return out


NO_ANSWER = MethodAnswer(None, None)


def chain_methods(answers: Sequence[tuple[int, str]], score: Score, *,
                  lower_winner: bool) -> dict[str, MethodAnswer]:
    """SA, oracle and SC from ``(chain index, answer)`` pairs of the chains that answered."""
    if not answers:
        return {"sa": NO_ANSWER, "oracle": NO_ANSWER, "sc": NO_ANSWER}
    first_index, first = answers[0]
    scores = [score(answer) for _, answer in answers]
    best = max(range(len(answers)), key=lambda i: (scores[i] is not None,
                                                   scores[i] or 0.0, -i))
    votes = Counter(answer.lower() for _, answer in answers)
    winner = votes.most_common(1)[0][0]
    spelled = next((answer, index) for index, answer in answers if answer.lower() == winner)
    majority = winner if lower_winner else spelled[0]
    return {
        "sa": MethodAnswer(first, scores[0], chain=first_index),
        "oracle": MethodAnswer(answers[best][1], scores[best], chain=answers[best][0]),
        "sc": MethodAnswer(majority, score(majority), chain=spelled[1], votes=dict(votes)),
    }
