"""2WikiMultihopQA's example and prediction records: the gold answers with their aliases, the
supporting facts and evidence triples as the official script compares them."""

from __future__ import annotations

from dataclasses import dataclass

from hopscore.benchmarks.base import Example, Prediction
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.hotpotqa.example import (
    Context,
    Fact,
    context_passages,
    fact_titles,
)

Triple = tuple[str, ...]


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TwoWikiExample(Example):
    answer: str
    #: The answer plus its aliases and demonyms, raw (for display) and normalized (for scoring).
    answers: tuple[str, ...]
    answers_normalized: tuple[str, ...]
    supporting_facts: tuple[Fact, ...] = ()
    #: The gold facts as the official script compares them: set-deduplicated, then title-lowercased.
    facts_lowered: tuple[Fact, ...] = ()
    evidences: tuple[Triple, ...] = ()
    #: Every normalized variant of every gold evidence slot (a prediction matches if it is in one).
    evidence_variants: frozenset[Triple] = frozenset()
    type: str | None = None
    context: Context = ()

    def groups(self) -> dict[str, str]:
        return {"type": self.type} if self.type else {}

    def gold_answers(self) -> tuple[str, ...]:
        return self.answers

    def gold_titles(self) -> tuple[str, ...] | None:
        return fact_titles(self.supporting_facts)

    def passages(self) -> tuple[tuple[str, str], ...]:
        return context_passages(self.context)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class TwoWikiPrediction(Prediction):
    sp: tuple[Fact, ...] | None = None
    evidence: tuple[Triple, ...] | None = None
