"""HotpotQA's example and prediction records, and the readers of their ``[title, sent_id]``
fact and ``[title, [sentence, ...]]`` context fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.base import Example, Prediction
from hopscore.benchmarks.fast_init import fast_init
from hopscore.files.fields import Fields, json_type

Fact = tuple[str, int]
Context = tuple[tuple[str, tuple[str, ...]], ...]

_STR_ONLY = frozenset({str})


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HotpotExample(Example):
    answer: str
    supporting_facts: tuple[Fact, ...] = ()
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()
    type: str | None = None
    level: str | None = None

    def groups(self) -> dict[str, str]:
        labels = {}
        if self.type:
            labels["type"] = self.type
        if self.level:
            labels["level"] = self.level
        return labels

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)

    def gold_titles(self) -> tuple[str, ...] | None:
        return fact_titles(self.supporting_facts)

    def passages(self) -> tuple[tuple[str, str], ...]:
        return context_passages(self.context)


def fact_titles(facts: tuple[Fact, ...]) -> tuple[str, ...]:
    """The titles of supporting facts, each once, in order (HotpotQA's and 2Wiki's gold
    paragraphs, for the recall of retrieved documents)."""
    return tuple(dict.fromkeys(title for title, _ in facts))


def context_passages(context: Context) -> tuple[tuple[str, str], ...]:
    """A ``context`` as (title, text) passages, each paragraph's sentences joined."""
    return tuple((title, " ".join(s.strip() for s in sentences)) for title, sentences in context)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HotpotPrediction(Prediction):
    sp: tuple[Fact, ...] | None = None


def parse_fact(value: Any, record: Fields, field: str) -> Fact:
    """One ``[title, sent_id]`` pair; the sent_id must be an integer (``"1"`` is an error)."""
    if type(value) is list and len(value) == 2:  # the common case, checked quickly
        title, sent_id = value
        if type(title) is str and type(sent_id) is int:
            return (title, sent_id)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise record.error(
            field, f"expected [title, sent_id] pairs, got {json_type(value)} {value!r}"
        )
    title, sent_id = value
    if not isinstance(title, str):
        raise record.error(field, f"title must be a string, got {json_type(title)} {title!r}")
    if isinstance(sent_id, bool) or not isinstance(sent_id, int):
        raise record.error(
            field, f"sent_id must be an integer, got {json_type(sent_id)} {sent_id!r}"
        )
    return (title, sent_id)


def parse_facts(value: Any, record: Fields, field: str) -> tuple[Fact, ...]:
    if not isinstance(value, list):
        raise record.error(field, f"expected a list of [title, sent_id], got {json_type(value)}")
    return tuple(parse_fact(item, record, field) for item in value)


def parse_context(record: Fields) -> Context:
    """The ``context`` field: ``[[title, [sentence, ...]], ...]`` (absent: empty)."""
    context = []
    for entry in record.list("context", []):
        if (
            not isinstance(entry, list)
            or len(entry) != 2
            or not isinstance(entry[0], str)
            or not isinstance(entry[1], list)
        ):
            raise record.error("context", "expected [title, [sentence, ...]] entries")
        sentences = tuple(entry[1])
        if not _STR_ONLY.issuperset(map(type, sentences)):
            sentences = tuple(map(str, sentences))
        context.append((entry[0], sentences))
    return tuple(context)


def quick_facts(value: Any) -> tuple[Fact, ...] | None:
    """``[[title, sent_id], ...]`` as tuples when every pair is well-typed, else None."""
    if type(value) is not list:
        return None
    out = []
    for fact in value:
        if type(fact) is not list or len(fact) != 2:
            return None
        title, sent_id = fact
        if type(title) is not str or type(sent_id) is not int:
            return None
        out.append((title, sent_id))
    return tuple(out)
