"""HotpotQA error categories.

* *answer x supporting facts*: exact answer (``em``) against exact supporting-fact set
  (``sp_em``), the 2x2 the HotpotQA authors use to tell a right answer for the wrong reason
  from a wrong answer;
* *where the predicted answer occurs* (needs ``--gold``): for wrong answers, whether the
  normalized prediction occurs in a supporting sentence, elsewhere in a gold paragraph, only in
  a distractor paragraph, or nowhere in the context (reading vs retrieval vs made up).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from hopscore.benchmarks.error_categories import (
    NO_PREDICTION,
    Dimension,
    Inputs,
    Sample,
    contains,
    settled_or_span,
)
from hopscore.text.normalize import normalize_answer

FACT_OUTCOMES = (
    "right answer, right facts", "right answer, wrong facts",
    "wrong answer, right facts", "wrong answer, wrong facts",
)  # fmt: skip
LOCATIONS = (
    "correct", "in a supporting sentence", "elsewhere in a gold paragraph",
    "only in a distractor paragraph", "not in the context", "wrong yes/no",
    "empty after normalization",
)  # fmt: skip


def answer_and_facts(sample: Sample, *, facts: str = "sp_em") -> str | None:
    if sample.missing:
        return NO_PREDICTION
    if "em" not in sample.metrics or facts not in sample.metrics:
        return None
    answer = "right answer" if sample.metrics["em"] >= 1 else "wrong answer"
    found = "right facts" if sample.metrics[facts] >= 1 else "wrong facts"
    return f"{answer}, {found}"


def answer_location(examples: Mapping[str, Any], sample: Sample) -> str | None:
    example = examples.get(sample.id)
    if example is None or not getattr(example, "context", None):
        return None
    settled, span = settled_or_span(sample)
    if settled is not None:
        return settled
    if not span:
        return "empty after normalization"
    if span in ("yes", "no"):
        return "wrong yes/no"
    supporting = set(example.supporting_facts)
    gold_titles = {title for title, _ in supporting}
    in_gold_paragraph = False
    in_distractor = False
    for title, sentences in example.context:
        for number, sentence in enumerate(sentences):
            if not contains(normalize_answer(sentence), span):
                continue
            if (title, number) in supporting:
                return "in a supporting sentence"
            if title in gold_titles:
                in_gold_paragraph = True
            else:
                in_distractor = True
    if in_gold_paragraph:
        return "elsewhere in a gold paragraph"
    if in_distractor:
        return "only in a distractor paragraph"
    return "not in the context"


def dimensions(inputs: Inputs) -> list[Dimension]:
    out = [
        Dimension(
            "answer x supporting facts",
            "Exact answer (em) against the exact supporting-fact set (sp_em).",
            answer_and_facts, (*FACT_OUTCOMES, NO_PREDICTION),
        )
    ]
    examples = inputs.examples()
    if examples:
        out.append(Dimension(
            "where the predicted answer occurs",
            "Wrong answers by where the normalized prediction occurs in the gold context: a "
            "supporting sentence (reading error), another sentence of a gold paragraph, only a "
            "distractor paragraph (wrong hop), or nowhere (not grounded in the context).",
            partial(answer_location, examples), (*LOCATIONS, NO_PREDICTION),
        ))  # fmt: skip
    return out
