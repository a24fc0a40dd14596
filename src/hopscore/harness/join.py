"""Joining another harness's records to the gold: by id, else by question text.

A record offers id candidates (a sample id, the ``id`` / ``_id`` / ``qid`` / ``question_id``
of the document it was made from) and question candidates (the document's question or claim,
the prompt). It joins the first gold example whose id is a candidate; failing that, the one
gold example whose question equals a candidate after whitespace and case are normalized. A
question shared by several gold examples joins none of them (it would be a guess). Every
record is accounted for: joined by id, joined by question, a second record for an example
already joined (the first is kept), or not joined.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hopscore.benchmarks.base import Example

_SPACE = re.compile(r"\s+")


def normalize_question(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


@dataclass(frozen=True, slots=True)
class HarnessRecord:
    """One reply found in another harness's output."""

    #: where it is, for messages ("samples_x.jsonl:12", "log.eval sample 7")
    where: str
    ids: tuple[str, ...]
    questions: tuple[str, ...]
    #: the text the answer is read from (lm-eval: the filtered response; inspect: the
    #: completion); None when the harness recorded no reply (an errored sample)
    reply: str | None
    #: the whole reply, when ``reply`` is already an extracted answer
    full_output: str | None = None
    #: a multiple-choice reply: the index of the chosen option
    choice_index: int | None = None


@dataclass(slots=True)
class JoinReport:
    records: int = 0
    by_id: int = 0
    by_question: int = 0
    duplicates: list[str] = field(default_factory=list)
    unjoined: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    no_reply: list[str] = field(default_factory=list)

    @property
    def joined(self) -> int:
        return self.by_id + self.by_question

    def summary(self, source: str, n_gold: int) -> str:
        text = (
            f"{source}: joined {self.joined} of {self.records} records to the {n_gold} gold "
            f"examples ({self.by_id} by id, {self.by_question} by question text)"
        )
        parts = []
        if self.unjoined:
            parts.append(f"{len(self.unjoined)} matched no gold example "
                         f"(first: {', '.join(self.unjoined[:3])})")
        if self.ambiguous:
            parts.append(f"{len(self.ambiguous)} had a question shared by several gold examples "
                         f"(first: {', '.join(self.ambiguous[:3])})")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} repeated an example already joined, the first "
                         f"was kept (first: {', '.join(self.duplicates[:3])})")
        if self.no_reply:
            parts.append(f"{len(self.no_reply)} have no reply (an error in the harness) and score "
                         f"0 (first: {', '.join(self.no_reply[:3])})")
        return text + ("; " + "; ".join(parts) if parts else "")

    def complete(self) -> bool:
        return not (self.unjoined or self.ambiguous or self.duplicates or self.no_reply)


def join(
    examples: Sequence[Example], records: Iterable[HarnessRecord]
) -> tuple[dict[str, HarnessRecord], JoinReport]:
    """``{gold id: record}`` for every record that joins, and the accounting."""
    by_id = {example.id: example for example in examples}
    by_question: dict[str, list[str]] = {}
    for example in examples:
        if example.question:
            by_question.setdefault(normalize_question(example.question), []).append(example.id)
    joined: dict[str, HarnessRecord] = {}
    report = JoinReport()
    for record in records:
        report.records += 1
        gold_id, how = _match(record, by_id, by_question)
        if gold_id is None:
            (report.ambiguous if how == "ambiguous" else report.unjoined).append(record.where)
            continue
        if gold_id in joined:
            report.duplicates.append(record.where)
            continue
        joined[gold_id] = record
        if how == "id":
            report.by_id += 1
        else:
            report.by_question += 1
        if record.reply is None and record.choice_index is None:
            report.no_reply.append(record.where)
    return joined, report


def _match(
    record: HarnessRecord, by_id: dict[str, Any], by_question: dict[str, list[str]]
) -> tuple[str | None, str]:
    for candidate in record.ids:
        if candidate in by_id:
            return candidate, "id"
    shared = False
    for question in record.questions:
        ids = by_question.get(normalize_question(question))
        if ids is not None and len(ids) == 1:
            return ids[0], "question"
        shared = shared or ids is not None
    return None, "ambiguous" if shared else "none"


def id_candidates(values: Iterable[Any]) -> tuple[str, ...]:
    """Strings and integers as ids (booleans, empty strings and other values skipped)."""
    out = []
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (str, int)):
            text = str(value)
            if text.strip():
                out.append(text)
    return tuple(dict.fromkeys(out))


def text_candidates(values: Iterable[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str) and v.strip()))
