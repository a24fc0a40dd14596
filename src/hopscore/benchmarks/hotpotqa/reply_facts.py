"""HotpotQA's paragraphs shown to a model and the supporting facts read back from its reply:
``[title, sentence]`` citations, or the sentences a chain strategy's contexts came from."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hopscore.benchmarks.hotpotqa.example import Context, Fact
from hopscore.text.labels import strip_think
from hopscore.text.normalize import normalize_answer


def paragraph_variables(question: str, context: Context) -> dict[str, Any]:
    """Template variables of a question over titled paragraphs of numbered sentences."""
    return {
        "question": question,
        "mcr_question": question,
        "paragraphs": [
            {"title": title, "sentences": [s.strip() for s in sentences]}
            for title, sentences in context
        ],
    }


_CITATION = re.compile(r"\[\s*([^\[\]\n]{1,300}?)\s*,\s*(?:sentence\s*|s)?(\d{1,4})\s*\]", re.I)
_FACTS_LABEL = re.compile(r"supporting\s+(?:facts|sentences|evidence)", re.I)
_PARAGRAPH_NUMBER = re.compile(r"^(?:paragraph|para|p)?\s*#?(\d{1,3})$", re.I)


def cited_facts(output: str, titles: Sequence[str]) -> tuple[Fact, ...]:
    """``[title, sentence]`` citations in a reply, read after its last "Supporting facts" label
    when it has one, else anywhere outside ``<think>`` blocks.

    A cited title is matched to the context's titles exactly, then ignoring case and
    punctuation, then as a paragraph number ("[Paragraph 2, 0]", "[2, 0]"); an unknown title is
    kept as written (it can only be a false positive). Duplicates are dropped, order kept.
    """
    text = strip_think(output)
    labels = list(_FACTS_LABEL.finditer(text))
    if labels:
        text = text[labels[-1].end():]
    exact = set(titles)
    normalized: dict[str, str] | None = None  # made at the first citation not exact
    facts: dict[Fact, None] = {}
    for match in _CITATION.finditer(text):
        raw = match.group(1).strip().strip("\"'*_`").strip()
        title = raw
        if raw not in exact:
            if normalized is None:
                normalized = {normalize_answer(title): title for title in titles}
            found = normalized.get(normalize_answer(raw))
            number = _PARAGRAPH_NUMBER.match(raw) if found is None else None
            if found is not None:
                title = found
            elif number and 1 <= int(number.group(1)) <= len(titles):
                title = titles[int(number.group(1)) - 1]
        facts[(title, int(match.group(2)))] = None
    return tuple(facts)


_SOURCE_SENTENCE = re.compile(r"^(.*) \[(\d{1,4})\]$", re.S)


def evidence_facts(evidence_ids: Sequence[str] | None, titles: Sequence[str]) -> tuple[Fact, ...]:
    """Supporting facts from the ids of the sentences a run's contexts came from: the chain
    strategies' ``"<title> [<sentence number>]"`` sources over the example's own paragraphs
    (:class:`hopscore.run.evidence.ContextSource`); ids of other sources (corpus documents,
    URLs) and unknown titles are skipped. Order kept, duplicates dropped."""
    known = set(titles)
    facts: dict[Fact, None] = {}
    for source in evidence_ids or ():
        match = _SOURCE_SENTENCE.match(source)
        if match and match.group(1) in known:
            facts[(match.group(1), int(match.group(2)))] = None
    return tuple(facts)
