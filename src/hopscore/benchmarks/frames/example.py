"""A FRAMES gold example, and how one record of any gold layout becomes one.

The layouts (google/frames-benchmark ``test.tsv`` in its revisions, CSV exports, the
SimpleDeepSearcher JSON, JSON Lines copies) share one record shape, read here field by field:

* id: ``id``, else the index column (``Unnamed: 0``, or the empty header pandas writes), else
  ``index``, else the record's 0-based position;
* question: ``Prompt`` (official), else ``Question`` / ``question`` / ``prompt``; trailing
  whitespace (present in the official TSV) is dropped;
* gold: ``Answer``, else ``answer`` (a string, or a list of acceptable answers);
* reasoning types: ``reasoning_types``, labels joined by ``" | "`` (or a list); absent or empty:
  none;
* links: ``wiki_links``, a Python-list repr string (or a JSON list), else the
  ``wikipedia_link_1`` ... ``wikipedia_link_11+`` cells;
* article texts, when a copy carries them: ``wiki_items``, a list of ``{title, text}`` (the
  ModelScope copy's field).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.base import Example
from hopscore.benchmarks.fast_init import fast_init
from hopscore.files.fields import Fields, json_type

#: the five labels of the paper, in the order the reports show them
REASONING_TYPES = ("Multiple constraints", "Numerical reasoning", "Tabular reasoning",
                   "Temporal reasoning", "Post processing")
ID_FIELDS = ("id", "Unnamed: 0", "", "index")
QUESTION_FIELDS = ("Prompt", "Question", "question", "prompt")
ANSWER_FIELDS = ("Answer", "answer")
LINK_CELLS = (*(f"wikipedia_link_{i}" for i in range(1, 11)), "wikipedia_link_11+")
#: the group key of the number of linked articles
ARTICLES = "articles"


def type_key(label: str) -> str:
    """The group key of a reasoning type: ``Numerical reasoning`` -> ``numerical_reasoning``."""
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


GROUP_KEYS = (*(type_key(t) for t in REASONING_TYPES), ARTICLES)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FramesExample(Example):
    answers: tuple[str, ...]
    reasoning_types: tuple[str, ...] = ()
    wiki_links: tuple[str, ...] = ()
    #: ``(title, text)`` of the linked articles when the gold carries them (``wiki_items``)
    articles: tuple[tuple[str, str], ...] = ()

    def groups(self) -> dict[str, str]:
        """One group per reasoning type the question carries (a question with several types
        counts in each), and the number of linked articles."""
        out = {type_key(label): label for label in self.reasoning_types}
        if self.wiki_links:
            count = len(self.wiki_links)
            out[ARTICLES] = f"{count} articles" if count < 5 else "5+ articles"
        return out

    def gold_answers(self) -> tuple[str, ...]:
        return self.answers


def _first(record: Fields, names: tuple[str, ...]) -> str | None:
    return next((name for name in names if record.has(name)), None)


def _text(record: Fields, names: tuple[str, ...]) -> str:
    name = _first(record, names)
    if name is None:
        raise record.error(names[0], "missing")
    value = record.raw(name)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # a number cell of a JSON export
    text: str = record.str(name)
    return text


def _answers(record: Fields) -> tuple[str, ...]:
    name = _first(record, ANSWER_FIELDS)
    if name is None:
        raise record.error(ANSWER_FIELDS[0], "missing")
    value = record.raw(name)
    if isinstance(value, list):
        if not value or not all(isinstance(v, str) for v in value):
            raise record.error(name, "expected a non-empty list of strings or a string, got "
                               + json_type(value))
        return tuple(value)
    answer = _text(record, (name,))
    if not answer.strip():
        raise record.error(name, "empty answer")
    return (answer,)


def _types(record: Fields) -> tuple[str, ...]:
    if not record.has("reasoning_types"):
        return ()
    value = record.raw("reasoning_types")
    if value is None:
        return ()
    if isinstance(value, list):
        if not all(isinstance(v, str) for v in value):
            raise record.error("reasoning_types", "expected a list of strings")
        labels = value
    elif isinstance(value, str):
        labels = value.split("|")
    else:
        raise record.error("reasoning_types", f"expected a string, got {json_type(value)}")
    return tuple(dict.fromkeys(label.strip() for label in labels if label.strip()))


def _links(record: Fields) -> tuple[str, ...]:
    if record.has("wiki_links") and record.raw("wiki_links") not in (None, ""):
        value = record.raw("wiki_links")
        if isinstance(value, str):
            try:
                value = ast.literal_eval(value.strip())
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                raise record.error("wiki_links", "expected a list of links written as a Python "
                                   f"list, e.g. ['https://...'], got {value[:80]!r}") from None
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise record.error("wiki_links", "expected a list of link strings")
        return tuple(link.strip() for link in value if link.strip())
    links: list[str] = []
    for cell in LINK_CELLS:
        value = record.raw(cell, None)
        if isinstance(value, str) and value.strip():
            links.extend(re.findall(r"https?://\S+", value) or [value.strip()])
    return tuple(links)


def _articles(record: Fields) -> tuple[tuple[str, str], ...]:
    if not record.has("wiki_items") or record.raw("wiki_items") is None:
        return ()
    items: Any = record.raw("wiki_items")
    if not isinstance(items, list):
        raise record.error("wiki_items", f"expected a list of {{title, text}}, got "
                           f"{json_type(items)}")
    out = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise record.error(f"wiki_items[{index}]", "expected {title, text} with a string "
                               "text")
        out.append((str(item.get("title") or ""), item["text"]))
    return tuple(out)


def example_of(record: Fields, position: int) -> FramesExample:
    """The example of one gold record (``position``: its 0-based place, the id of last
    resort)."""
    id_field = next((name for name in ID_FIELDS if record.has(name)
                     and record.raw(name) not in (None, "")), None)
    example_id = record.id(id_field) if id_field is not None else str(position)
    return FramesExample(
        id=example_id, question=_text(record, QUESTION_FIELDS).strip(),
        answers=_answers(record), reasoning_types=_types(record), wiki_links=_links(record),
        articles=_articles(record))
