"""Each benchmark's Hugging Face layouts, mapped onto the records of its official file.

A Hub copy of a benchmark holds the official records in the shape ``datasets`` stores them:
a list of pairs becomes a struct of lists (HotpotQA's ``supporting_facts: {title: [...],
sent_id: [...]}``), a field may be renamed (``id`` for ``_id``, ``answer_text`` for
``answer-text``), a nested object may be flattened (QuaRTz's ``question`` and ``choices``), and
a label may be a class index. A :class:`Layout` turns one such row back into the official
record, so the benchmark's own loader reads it and every score stays the official one.

The layouts were read from the dataset cards of the copies named in :data:`KNOWN_COPIES`
(docs/getting-the-data.md lists them with their licences and differences). A row already in
the official shape passes through unchanged, so a copy that kept the official fields works too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopscore.errors import HopscoreError

Row = Mapping[str, Any]


class LayoutError(HopscoreError):
    """A Hub row that does not have the layout hopscore expects (names the row and field)."""

    def __init__(self, where: str, index: int, field: str, message: str) -> None:
        self.index = index
        super().__init__(f"{where}: row [{index}]: field {field!r}: {message}")


@dataclass(frozen=True, slots=True)
class Layout:
    """How one benchmark's Hub rows become its official records."""

    benchmark: str
    #: the official gold file is JSON Lines (``.jsonl``) or one JSON list (``.json``)
    official_suffix: str
    #: the split ``hf:NAME`` loads when none is given
    default_split: str
    #: one row -> the official record (``where`` and ``index`` locate errors)
    to_official: Callable[[Row, str, int], dict[str, Any]]
    #: whether a row read from a JSON / JSON Lines file has a Hub layout, not the official one
    is_hub_row: Callable[[Row], bool]


def pairs(value: Any, first: str, second: str, where: str, index: int, field: str) -> Any:
    """``{first: [a, ...], second: [b, ...]}`` (datasets' Sequence of a struct) or a list of
    ``{first: a, second: b}`` objects (its List of a struct) -> ``[[a, b], ...]``; a list of
    pairs is returned unchanged."""
    if isinstance(value, Mapping):
        if first not in value or second not in value:
            raise LayoutError(where, index, field, f"expected keys {first!r} and {second!r}, "
                              f"got {sorted(value)}")
        left, right = value[first], value[second]
        if not isinstance(left, list) or not isinstance(right, list) or len(left) != len(right):
            raise LayoutError(where, index, field,
                              f"{first!r} and {second!r} must be lists of the same length")
        return [[a, b] for a, b in zip(left, right, strict=True)]
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        try:
            return [[item[first], item[second]] for item in value]
        except KeyError as exc:
            raise LayoutError(where, index, field, f"an entry has no {exc.args[0]!r}") from None
    return value


def _first_key(value: Mapping[str, Any], names: Sequence[str]) -> str | None:
    return next((name for name in names if name in value), None)


def _context(value: Any, where: str, index: int) -> Any:
    """HotpotQA / 2Wiki ``context``: ``{title: [...], sentences|content: [[...]]}``."""
    if isinstance(value, Mapping):
        key = _first_key(value, ("sentences", "content"))
        if key is None:
            raise LayoutError(where, index, "context", "expected 'title' and 'sentences' lists")
        return pairs(value, "title", key, where, index, "context")
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        key = _first_key(value[0], ("sentences", "content"))
        return pairs(value, "title", key or "sentences", where, index, "context")
    return value


def _renamed(row: Row, renames: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``row`` with Hub names turned into official ones (an official name wins)."""
    out = dict(row)
    for hub, official in renames.items():
        if hub in out and official not in out:
            out[official] = out.pop(hub)
    return out


# --- HotpotQA and 2WikiMultihopQA ------------------------------------------------------------


def hotpot_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = _renamed(row, {"id": "_id"})
    if "supporting_facts" in record:
        record["supporting_facts"] = pairs(
            record["supporting_facts"], "title", "sent_id", where, index, "supporting_facts"
        )
    if "context" in record:
        record["context"] = _context(record["context"], where, index)
    return record


def _is_hotpot_hub(row: Row) -> bool:
    return (
        ("_id" not in row and "id" in row)
        or isinstance(row.get("supporting_facts"), Mapping)
        or isinstance(row.get("context"), Mapping)
    )


#: the names the Hub copies give the three places of an evidence triple
_TRIPLE_NAMES = (("subject", "relation", "object"), ("fact", "relation", "entity"))


def _triples(value: Any, where: str, index: int, field: str) -> Any:
    if isinstance(value, Mapping):
        for names in _TRIPLE_NAMES:
            if all(name in value for name in names):
                columns = [value[name] for name in names]
                if not all(isinstance(c, list) and len(c) == len(columns[0]) for c in columns):
                    raise LayoutError(where, index, field, f"{names} must be lists of one length")
                return [list(triple) for triple in zip(*columns, strict=True)]
        raise LayoutError(where, index, field, f"expected {_TRIPLE_NAMES[0]} lists, "
                          f"got keys {sorted(value)}")
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        for names in _TRIPLE_NAMES:
            if all(name in value[0] for name in names):
                return [[item.get(name) for name in names] for item in value]
    return value


def twowiki_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = hotpot_official(row, where, index)
    for field in ("evidences", "evidences_id"):
        if field in record:
            record[field] = _triples(record[field], where, index, field)
    return record


def _is_twowiki_hub(row: Row) -> bool:
    return _is_hotpot_hub(row) or isinstance(row.get("evidences"), Mapping)


# --- HybridQA, StrategyQA, Fermi, Bamboogle --------------------------------------------------


def hybridqa_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = _renamed(row, {"answer_text": "answer-text", "answer_node": "answer-node"})
    record.pop("table", None)  # wenhu/hybrid_qa inlines the whole table: not gold, and large
    return record


def strategyqa_official(row: Row, where: str, index: int) -> dict[str, Any]:
    record = _renamed(row, {"id": "qid"})
    answer = record.get("answer")
    if isinstance(answer, str) and answer.strip().lower() in ("true", "false"):
        record["answer"] = answer.strip().lower() == "true"  # copies that store it as text
    return record


def passthrough(row: Row, where: str, index: int) -> dict[str, Any]:
    return dict(row)


def _always(row: Row) -> bool:
    return True


# --- QuaRTz ----------------------------------------------------------------------------------


def quartz_official(row: Row, where: str, index: int) -> dict[str, Any]:
    """allenai/quartz: ``question`` is the stem and ``choices: {text: [...], label: [...]}``."""
    question = row.get("question")
    if isinstance(question, Mapping):
        return dict(row)
    record = dict(row)
    choices = pairs(record.pop("choices", None), "label", "text", where, index, "choices")
    if not isinstance(choices, list):
        raise LayoutError(where, index, "choices", "expected {label: [...], text: [...]}")
    record["question"] = {
        "stem": question,
        "choices": [{"label": label, "text": text} for label, text in choices],
    }
    return record


def _is_quartz_hub(row: Row) -> bool:
    return isinstance(row.get("question"), str) and "choices" in row


# --- FEVEROUS --------------------------------------------------------------------------------


def feverous_official(row: Row, where: str, index: int) -> dict[str, Any]:
    """fever/feverous: ``evidence`` as a struct of lists (``content``, ``context``)."""
    record = dict(row)
    evidence = record.get("evidence")
    if isinstance(evidence, Mapping):
        content = evidence.get("content")
        if not isinstance(content, list):
            raise LayoutError(where, index, "evidence", "expected a 'content' list")
        context = evidence.get("context")
        sets = []
        for position, elements in enumerate(content):
            entry: dict[str, Any] = {"content": elements}
            if isinstance(context, list) and position < len(context):
                entry["context"] = context[position]
            sets.append(entry)
        record["evidence"] = sets
    if isinstance(record.get("label"), int) and not isinstance(record.get("label"), bool):
        raise LayoutError(
            where, index, "label",
            f"a class index ({record['label']}) without its names: read the copy through "
            "datasets (hf:NAME, parquet or save_to_disk keep the label names) or write the "
            "label names into the file",
        )
    return record


def _is_feverous_hub(row: Row) -> bool:
    return isinstance(row.get("evidence"), Mapping) or isinstance(row.get("label"), int)


LAYOUTS: dict[str, Layout] = {
    "hotpotqa": Layout("hotpotqa", ".json", "validation", hotpot_official, _is_hotpot_hub),
    "2wikimultihopqa": Layout(
        "2wikimultihopqa", ".json", "validation", twowiki_official, _is_twowiki_hub
    ),
    "hybridqa": Layout(
        "hybridqa", ".json", "validation", hybridqa_official, lambda row: "answer_text" in row
    ),
    "strategyqa": Layout("strategyqa", ".json", "train", strategyqa_official, _always),
    "fermi": Layout("fermi", ".json", "test", passthrough, _always),
    "bamboogle": Layout("bamboogle", ".json", "test", passthrough, _always),
    "quartz": Layout("quartz", ".jsonl", "validation", quartz_official, _is_quartz_hub),
    "feverous": Layout("feverous", ".jsonl", "validation", feverous_official, _is_feverous_hub),
}

#: Hub copies whose layout was read from their dataset cards (docs/getting-the-data.md has their
#: licences and how each differs from the official release)
KNOWN_COPIES: dict[str, tuple[str, ...]] = {
    "hotpotqa": ("hotpotqa/hotpot_qa",),
    "2wikimultihopqa": ("xanhho/2WikiMultihopQA", "ohjoonhee/2WikiMultihopQA"),
    "hybridqa": ("wenhu/hybrid_qa",),
    "strategyqa": ("havens2/strategyQA_train", "wics/strategy-qa"),
    "bamboogle": ("chiayewken/bamboogle",),
    "quartz": ("allenai/quartz",),
    "feverous": ("fever/feverous",),
    "fermi": (),
}


def layout_of(benchmark: str) -> Layout:
    layout = LAYOUTS.get(benchmark)
    if layout is None:
        raise HopscoreError(f"{benchmark} has no Hugging Face layout; give its official gold file")
    return layout
