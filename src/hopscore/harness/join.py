"""Joining another harness's records to the gold: by id, else by question text.

A record offers id candidates (a sample id, the ``id`` / ``_id`` / ``qid`` / ``question_id``
of the document it was made from) and question candidates (the document's question or claim,
the prompt). It joins the first gold example whose id is a candidate; failing that, the one
gold example whose question equals a candidate after whitespace and case are normalized. A
question shared by several gold examples joins none of them (it would be a guess). A record
numbered by the harness (inspect's ids 1, 2, ... for samples the task gave no id) carries its
0-based ``position`` instead of an id: it joins by question, else the gold example at that
position when the gold's ids are positions ("0", "1", ...: a gold format without ids, an
id-less Hub copy). Every record is accounted for: joined by id, question or position, a second
record for an example already joined (the first is kept), or not joined.

An id is checked against the question: a record joined by id whose question is, uniquely, that
of another gold example is a conflict. When most records joined by id conflict, the ids are not
the gold's: those records are joined by question instead; a few conflicts are kept and named.
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
    #: the record's 0-based place in the evaluated dataset, when the harness numbered it
    #: (its number is not a gold id)
    position: int | None = None


@dataclass(slots=True)
class JoinReport:
    records: int = 0
    by_id: int = 0
    by_question: int = 0
    by_position: int = 0
    #: records joined by id whose question is that of another gold example
    conflicts: list[str] = field(default_factory=list)
    #: conflicting records joined by question instead (most ids conflicted)
    rejoined: int = 0
    duplicates: list[str] = field(default_factory=list)
    unjoined: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    no_reply: list[str] = field(default_factory=list)

    @property
    def joined(self) -> int:
        return self.by_id + self.by_question + self.by_position

    def summary(self, source: str, n_gold: int) -> str:
        text = (
            f"{source}: joined {self.joined} of {self.records} records to the {n_gold} gold "
            f"examples ({self.by_id} by id, {self.by_question} by question text"
            + (f", {self.by_position} by position" if self.by_position else "") + ")"
        )
        parts = []
        if self.by_position:
            parts.append("the harness numbered the samples 1, 2, ... (the task gave them no ids); "
                         "sample n is the gold example at position n-1 (id \"n-1\")")
        if self.rejoined:
            parts.append(f"the ids of {self.rejoined} records name other gold examples than "
                         "their questions do, so the ids are not the gold's: those records were "
                         f"joined by question (first: {', '.join(self.conflicts[:3])})")
        elif self.conflicts:
            parts.append(f"{len(self.conflicts)} joined by id carry the question of another gold "
                         f"example; check the ids (first: {', '.join(self.conflicts[:3])})")
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
        return not (self.unjoined or self.ambiguous or self.duplicates or self.no_reply
                    or self.conflicts or self.by_position)


def join(
    examples: Sequence[Example], records: Iterable[HarnessRecord]
) -> tuple[dict[str, HarnessRecord], JoinReport]:
    """``{gold id: record}`` for every record that joins, and the accounting."""
    by_id = {example.id: example for example in examples}
    by_question: dict[str, list[str]] = {}
    for example in examples:
        if example.question:
            by_question.setdefault(normalize_question(example.question), []).append(example.id)
    positional = all(example.id == str(i) for i, example in enumerate(examples))
    matches: list[tuple[HarnessRecord, str | None, str]] = []
    conflicts: list[tuple[int, str]] = []
    for record in records:
        gold_id, how = _match(record, by_id, by_question, positional)
        if how == "id":
            other = _question_match(record, by_question)
            if other is not None and other != gold_id:
                conflicts.append((len(matches), other))
        matches.append((record, gold_id, how))
    report = JoinReport()
    id_joined = sum(1 for _, _, how in matches if how == "id")
    if conflicts and 2 * len(conflicts) > id_joined:
        for index, other in conflicts:
            matches[index] = (matches[index][0], other, "question")
        report.rejoined = len(conflicts)
    report.conflicts = [matches[index][0].where for index, _ in conflicts]
    joined: dict[str, HarnessRecord] = {}
    for record, gold_id, how in matches:
        report.records += 1
        if gold_id is None:
            (report.ambiguous if how == "ambiguous" else report.unjoined).append(record.where)
            continue
        if gold_id in joined:
            report.duplicates.append(record.where)
            continue
        joined[gold_id] = record
        if how == "id":
            report.by_id += 1
        elif how == "question":
            report.by_question += 1
        else:
            report.by_position += 1
        if record.reply is None and record.choice_index is None:
            report.no_reply.append(record.where)
    return joined, report


def _question_match(record: HarnessRecord, by_question: dict[str, list[str]]) -> str | None:
    """The one gold example a record's question names, if any."""
    for question in record.questions:
        ids = by_question.get(normalize_question(question))
        if ids is not None and len(ids) == 1:
            return ids[0]
    return None


def _match(
    record: HarnessRecord, by_id: dict[str, Any], by_question: dict[str, list[str]],
    positional: bool,
) -> tuple[str | None, str]:
    for candidate in record.ids:
        if candidate in by_id:
            return candidate, "id"
    found = _question_match(record, by_question)
    if found is not None:
        return found, "question"
    if positional and record.position is not None and str(record.position) in by_id:
        return str(record.position), "position"
    shared = any(normalize_question(q) in by_question for q in record.questions)
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
