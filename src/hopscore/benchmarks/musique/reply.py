"""MuSiQue's paragraphs shown to a model, and the supporting paragraphs read back from its
reply: the paragraph numbers it cites become ``predicted_support_idxs``.

The prompt numbers each paragraph by its official ``idx`` ("Paragraph 7: <title>"), so a cited
number is the index the official scorer compares. A reply's citations are read after its last
"Supporting paragraphs" line when it has one, else from ``[7]``, ``[Paragraph 7]`` or
"Paragraph 7" anywhere outside ``<think>`` blocks; a cited title (``[Title]``) stands for every
paragraph of that title. A number that is no paragraph's is kept: the official scorer counts
it as a false positive.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hopscore.benchmarks.musique.example import Paragraph
from hopscore.text.normalize import normalize_answer

_LABEL = re.compile(r"supporting\s+(?:paragraphs?|passages?|evidence)\s*:?", re.I)
_NUMBER = re.compile(r"(?<![\w.])(?:paragraphs?\s*|p\s*|#\s*)?(\d{1,3})(?![\w.])", re.I)
_BRACKETED = re.compile(r"\[\s*(?:paragraph\s*)?(\d{1,3})\s*\]|\bparagraphs?\s+(\d{1,3})\b"
                        r"|\[\s*([^\[\]\n]{2,200}?)\s*\]", re.I)


def paragraph_variables(question: str, paragraphs: Sequence[Paragraph]) -> dict[str, Any]:
    """Template variables: the question and the paragraphs, each with its official idx."""
    return {
        "question": question,
        "mcr_question": question,
        "paragraphs": [{"idx": p.idx, "title": p.title, "text": p.text.strip()}
                       for p in paragraphs],
    }


def _titles(paragraphs: Sequence[Paragraph]) -> dict[str, list[int]]:
    by_title: dict[str, list[int]] = {}
    for p in paragraphs:
        by_title.setdefault(normalize_answer(p.title), []).append(p.idx)
    return by_title


def cited_support(output: str, paragraphs: Sequence[Paragraph]) -> tuple[int, ...]:
    """The paragraph indices a reply cites, in the order cited, each once."""
    from hopscore.text.labels import strip_think

    text = strip_think(output)
    labels = list(_LABEL.finditer(text))
    found: dict[int, None] = {}
    if labels:
        tail = text[labels[-1].end():].split("\n", 1)[0]
        for match in _NUMBER.finditer(tail):
            found[int(match.group(1))] = None
        if found:
            return tuple(found)
        text = tail
    titles = _titles(paragraphs)
    for match in _BRACKETED.finditer(text):
        number = match.group(1) or match.group(2)
        if number is not None:
            found[int(number)] = None
        else:
            for idx in titles.get(normalize_answer(match.group(3)), ()):
                found[idx] = None
    return tuple(found)


_SOURCE = re.compile(r"^(.*) \[(\d{1,4})\]$", re.S)


def evidence_support(evidence_ids: Sequence[str] | None,
                     paragraphs: Sequence[Paragraph]) -> tuple[int, ...]:
    """Support from the ids of the contexts a chain strategy used: ``"<title> [0]"`` over the
    example's own paragraphs (each paragraph is one unit), every paragraph of that title."""
    by_title: dict[str, list[int]] = {}
    for p in paragraphs:
        by_title.setdefault(p.title, []).append(p.idx)
    found: dict[int, None] = {}
    for source in evidence_ids or ():
        match = _SOURCE.match(source)
        if match:
            for idx in by_title.get(match.group(1), ()):
                found[idx] = None
    return tuple(found)
