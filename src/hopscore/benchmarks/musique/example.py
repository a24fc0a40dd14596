"""MuSiQue's example and prediction records, and the reader of its official gold records.

One :class:`MusiqueExample` is one question. In MuSiQue-Full a question has two gold lines
with the same id (one ``answerable: true``, one ``answerable: false``, with different
paragraphs); the example holds both, the answerable twin's fields first, and the order of the
two lines (:attr:`MusiqueExample.answerable_order`), which the sufficiency metrics compare.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.base import Example, Prediction
from hopscore.benchmarks.fast_init import fast_init
from hopscore.files.fields import Fields, json_type
from hopscore.text.normalize import normalize_answer

#: ``2hop__460946_294723``, ``3hop1__...``, ``4hop3__...``: hop count and composition shape
_ID_SHAPE = re.compile(r"^(\d)hop(\d*)__")


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One of a question's paragraphs, as the official record gives it."""

    idx: int
    title: str
    text: str
    is_supporting: bool = False


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of ``question_decomposition``."""

    question: str
    answer: str
    paragraph_support_idx: int | None


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MusiqueExample(Example):
    answer: str
    #: ``answer_aliases`` as written
    aliases: tuple[str, ...] = ()
    #: the answer and its aliases, normalized (the official gold list)
    answers_normalized: tuple[str, ...] = ()
    #: the answerable twin's paragraphs (MuSiQue-Ans: the question's paragraphs)
    paragraphs: tuple[Paragraph, ...] = ()
    #: the ``idx`` of every supporting paragraph (the official gold support)
    support: tuple[int, ...] = ()
    decomposition: tuple[Hop, ...] = ()
    #: the gold ``answerable`` of the question's lines in file order: ``(True,)`` in
    #: MuSiQue-Ans, ``(True, False)`` or ``(False, True)`` in MuSiQue-Full
    answerable_order: tuple[bool, ...] = (True,)
    #: MuSiQue-Full: the unanswerable twin's paragraphs (its supporting paragraph removed)
    twin_paragraphs: tuple[Paragraph, ...] = ()

    @property
    def is_full(self) -> bool:
        """A MuSiQue-Full question (an answerable and an unanswerable line)."""
        return len(self.answerable_order) == 2

    def groups(self) -> dict[str, str]:
        shape = _ID_SHAPE.match(self.id)
        if shape:
            return {"hops": f"{shape.group(1)} hops", "type": shape.group(0)[:-2]}
        return {"hops": f"{len(self.decomposition)} hops"} if self.decomposition else {}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer, *self.aliases)

    # --- the accessors the agent, retrieval and report code read (as HotpotQA's) ---

    @property
    def context(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The paragraphs as HotpotQA's ``context``: ``(title, (paragraph text,))`` pairs, one
        "sentence" per paragraph (titles may repeat: MuSiQue takes several paragraphs from one
        page)."""
        return tuple((p.title, (p.text,)) for p in self.paragraphs)

    @property
    def supporting_facts(self) -> tuple[tuple[str, int], ...]:
        """The supporting paragraphs as HotpotQA's ``(title, sentence)`` facts: ``(title, 0)``."""
        return tuple((p.title, 0) for p in self.paragraphs if p.is_supporting)

    def supporting_titles(self) -> tuple[str, ...]:
        """The titles of the supporting paragraphs, each once, in paragraph order (what
        retrieved-document recall compares documents with)."""
        return tuple(dict.fromkeys(p.title for p in self.paragraphs if p.is_supporting))

    def gold_titles(self) -> tuple[str, ...] | None:
        return self.supporting_titles()

    def passages(self) -> tuple[tuple[str, str], ...]:
        """Every paragraph of the question (both twins' in MuSiQue-Full) as (title, text)."""
        return tuple((p.title, p.text) for p in (*self.paragraphs, *self.twin_paragraphs))


@dataclass(frozen=True, slots=True)
class Line:
    """One prediction line: ``predicted_answer``, ``predicted_support_idxs`` and
    ``predicted_answerable`` (None: the line did not give it)."""

    answer: str | None
    support: tuple[int, ...] | None
    answerable: bool | None


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class MusiquePrediction(Prediction):
    #: the id's prediction lines in file order (two for a MuSiQue-Full question)
    lines: tuple[Line, ...] = ()
    #: where the id's second line is (a MuSiQue-Ans question has one line: scoring refuses it)
    second_at: str | None = None

    @property
    def support(self) -> tuple[int, ...] | None:
        """The first line's predicted support (the cited part of a model's reply)."""
        return self.lines[0].support if self.lines else None


def read_paragraph(value: Any, record: Fields, field: str) -> Paragraph:
    if type(value) is not dict:
        raise record.error(field, f"expected {{idx, title, paragraph_text, is_supporting}} "
                           f"objects, got {json_type(value)}")
    idx, title, text = value.get("idx"), value.get("title", ""), value.get("paragraph_text")
    supporting = value.get("is_supporting", False)
    if type(idx) is not int:
        raise record.error(field, f"a paragraph's idx must be an integer, got {json_type(idx)}")
    if type(title) is not str or type(text) is not str:
        raise record.error(field, f"paragraph {idx}: title and paragraph_text must be strings")
    if type(supporting) is not bool:
        raise record.error(field, f"paragraph {idx}: is_supporting must be true or false, got "
                           f"{json_type(supporting)}")
    return Paragraph(idx, title, text, supporting)


def read_hop(value: Any, record: Fields) -> Hop:
    if type(value) is not dict:
        raise record.error("question_decomposition", f"expected objects, got {json_type(value)}")
    question, answer = value.get("question", ""), value.get("answer", "")
    support = value.get("paragraph_support_idx")
    if type(question) is not str or type(answer) is not str or not (
            support is None or type(support) is int):
        raise record.error("question_decomposition", "expected {question: str, answer: str, "
                           "paragraph_support_idx: int}")
    return Hop(question, answer, support)


@dataclass(frozen=True, slots=True)
class GoldLine:
    """One official gold line, checked."""

    id: str
    question: str
    answer: str
    aliases: tuple[str, ...]
    paragraphs: tuple[Paragraph, ...]
    decomposition: tuple[Hop, ...]
    answerable: bool


def read_gold_line(record: Fields) -> GoldLine:
    if not record.has("answer") and record.has("paragraphs") and not record.has("answerable"):
        raise record.error("answer", "missing: this looks like a MuSiQue test file, whose "
                           "labels are hidden (score the dev file, or submit to the leaderboard)")
    aliases = record.list("answer_aliases", [])
    if not all(type(alias) is str for alias in aliases):
        raise record.error("answer_aliases", "expected a list of strings")
    paragraphs = tuple(read_paragraph(p, record, "paragraphs")
                       for p in record.list("paragraphs", []))
    decomposition = tuple(read_hop(h, record)
                          for h in record.list("question_decomposition", [], nullable=True) or ())
    return GoldLine(id=record.id("id"), question=record.str("question", ""),
                    answer=record.str("answer"), aliases=tuple(aliases), paragraphs=paragraphs,
                    decomposition=decomposition, answerable=record.bool("answerable", True))


def make_example(first: GoldLine, second: GoldLine | None = None) -> MusiqueExample:
    """The example of one question: one answerable line, or a Full pair in file order."""
    lines = (first,) if second is None else (first, second)
    answerable = next(line for line in lines if line.answerable)
    twin = next((line for line in lines if not line.answerable), None)
    golds = (answerable.answer, *answerable.aliases)
    return MusiqueExample(
        id=first.id, question=answerable.question, answer=answerable.answer,
        aliases=answerable.aliases, answers_normalized=tuple(map(normalize_answer, golds)),
        paragraphs=answerable.paragraphs,
        support=tuple(p.idx for p in answerable.paragraphs if p.is_supporting),
        decomposition=answerable.decomposition,
        answerable_order=tuple(line.answerable for line in lines),
        twin_paragraphs=twin.paragraphs if twin is not None else (),
    )
