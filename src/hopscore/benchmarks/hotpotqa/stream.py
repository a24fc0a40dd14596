"""HotpotQA files scored in bounded memory: the gold list streamed, the predictions indexed.

A million HotpotQA examples are 320 MB of gold JSON and 150 MB of official predictions. Held
as Python objects they cost several GB; here:

* the gold list is read a window at a time (:mod:`hopscore.files.jsonstream`), each record decoded
  into the few fields scoring reads and dropped once scored. Duplicate ids are caught as they
  come (a set of the ids' hashes; a repeated hash is confirmed by reading the file again up
  to it), with the message :func:`~hopscore.benchmarks.base.check_unique_ids` gives;
* the official ``{"answer": {id: str}, "sp": {id: [[title, sent_id], ...]}}`` object keeps its
  answers as strings and each supporting-fact list as a slice of the memory-mapped file
  (:class:`msgspec.Raw`), decoded when its example is scored. Everything is checked before
  scoring starts, as the whole-file reader does: every answer a string, every fact a
  ``[title, integer]`` pair, no id twice in one map (every ``:`` of the file is accounted for
  by the keys and values read; a file whose count differs, or that writes a colon as
  ``\\u003a``, goes to the whole-file reader, which names the repeated key).

Whatever this fast reading does not take (JSON Lines, unusual keys, a wrong type) goes through
the checked readers of :mod:`hopscore.benchmarks.hotpotqa`, which give the same results and
name any problem.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

from hopscore.benchmarks.base import Example, Prediction, Predictions
from hopscore.benchmarks.formats import read_official_parts, unpredicted_warning
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields
from hopscore.files.io import _DuplicateKey, _no_duplicate_keys, sniff_json_kind
from hopscore.files.jsonstream import Batch, count_colons, iter_json_list, map_read, release

P = TypeVar("P", bound=Prediction)


@dataclass(frozen=True)
class GoldReader:
    """How :mod:`hopscore.benchmarks.hotpotqa` reads a gold record: quickly, into the struct
    ``quick`` (decoders of a list of them and of one), else ``checked`` (located errors)."""

    many: msgspec.json.Decoder[list[Any]]
    one: msgspec.json.Decoder[Any]
    quick: type
    checked: Callable[[Fields], Example]


def stream_gold(path: Path, reader: GoldReader) -> Iterator[Example]:
    """The examples of an official gold list, one window of the file at a time."""
    where = str(path)
    seen: set[int] = set()
    add = seen.add
    quick: Any = reader.quick
    for batch in iter_json_list(path, reader.many):
        records = batch.typed
        if records is None:
            records = _records(batch, where, reader)
        for offset, record in enumerate(records):
            ident = record.id
            if not (type(ident) is str and ident and not ident[0].isspace()) and (
                    isinstance(ident, bool) or not str(ident).strip()):
                # the checked reading names the id's problem (it reads the id first)
                Fields.at_index({"_id": ident}, where, batch.start + offset).id("_id")
            example: Example = record.example() if type(record) is quick else record
            key = hash(example.id)
            if key in seen:
                _check_repeat(path, reader, example.id, batch.start + offset)
            add(key)
            yield example


def _records(batch: Batch, where: str, reader: GoldReader) -> list[Any]:
    """The quick records (or checked examples) of a batch the typed decoder did not take."""
    out: list[Any] = []
    if batch.raw is not None:
        for offset, raw in enumerate(batch.raw):
            try:
                out.append(reader.one.decode(raw))
                continue
            except msgspec.DecodeError:
                value = _parse_raw(raw, where, batch.start + offset)
            out.append(reader.checked(Fields.at_index(value, where, batch.start + offset)))
    else:
        for offset, value in enumerate(batch.values or ()):
            out.append(reader.checked(Fields.at_index(value, where, batch.start + offset)))
    return out


def _parse_raw(raw: msgspec.Raw, where: str, index: int) -> Any:
    """One element's text parsed by the standard library (a repeated key is an error)."""
    try:
        return json.loads(bytes(raw), object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        raise InputError(where, f"duplicate key {exc.args[0]!r} in one JSON object") from None
    except (ValueError, RecursionError) as exc:  # what msgspec read, the standard library did not
        raise InputError(Location(where, index=index), f"invalid JSON: {exc}") from None


def _check_repeat(path: Path, reader: GoldReader, example_id: str, index: int) -> None:
    """Raise if a record before ``index`` has this id (its hash has been seen)."""
    for first, earlier in enumerate(stream_gold_ids(path, reader, index)):
        if earlier == example_id:
            raise InputError(
                path, f"duplicate gold id {example_id!r} in records [{first}] and [{index}]")


def stream_gold_ids(path: Path, reader: GoldReader, stop: int) -> Iterator[str]:
    """The ids of the first ``stop`` records (read again to confirm a duplicate)."""
    for index, example in enumerate(stream_gold_unchecked(path, reader)):
        if index >= stop:
            return
        yield str(example.id)


def stream_gold_unchecked(path: Path, reader: GoldReader) -> Iterator[Any]:
    """The records of the gold list, without the check for repeated ids."""
    where = str(path)
    for batch in iter_json_list(path, reader.many):
        yield from batch.typed if batch.typed is not None else _records(batch, where, reader)


# --- predictions ----------------------------------------------------------------------------

_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ANSWERS = msgspec.json.Decoder(dict[str, str])
_FACT_MAP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_FACTS = msgspec.json.Decoder(list[tuple[str, int]])
_FACT_LISTS = msgspec.json.Decoder(list[list[tuple[str, int]]])
_PARTS = ("answer", "sp")
_BATCH = 8192


class OfficialIndex(Generic[P]):
    """The official predictions, held compactly and decoded one example at a time.

    :meth:`take` hands out an id's prediction once (scoring asks for each gold id once) and
    drops it; :meth:`unmatched` lists the ids never asked for, in the file's order.
    """

    def __init__(self, make: Callable[..., P], mapped: mmap.mmap, answers: dict[str, str],
                 facts: dict[str, msgspec.Raw], total: int) -> None:
        self._make = make
        self._mapped = mapped
        self._answers = answers
        self._facts = facts
        self._total = total
        self._taken = 0

    def __len__(self) -> int:
        return self._total

    def take(self, example_id: str) -> P | None:
        answer = self._answers.pop(example_id, None)
        raw = self._facts.pop(example_id, None)
        if answer is None and raw is None:
            return None
        self._taken += 1
        if not self._taken & 0xFFFF:
            release(self._mapped)
        return self._make(id=example_id, answer=answer,
                                sp=None if raw is None else tuple(_FACTS.decode(raw)))

    def unmatched(self) -> list[str]:
        answers = self._answers
        return [*answers, *(key for key in self._facts if key not in answers)]


def read_predictions_quickly(path: Path, make: Callable[..., P]) -> Predictions[P] | None:
    """The official predictions object as an :class:`OfficialIndex` of ``make(id=, answer=,
    sp=)`` predictions, or None when anything about the file is unusual (the caller then reads
    it with the checked reader)."""
    if sniff_json_kind(path) != "json":
        return None
    mapped = map_read(path)
    if mapped is None:
        return None
    try:
        index = _index(path, mapped, make)
    except msgspec.DecodeError:
        index = None
    if index is None:
        release(mapped)
        return None
    release(mapped)
    return index


def _index(path: Path, mapped: mmap.mmap, make: Callable[..., P]) -> Predictions[P] | None:
    start = 3 if mapped[:3] == b"\xef\xbb\xbf" else 0
    if mapped.find(b"\\u003a", start) >= 0 or mapped.find(b"\\u003A", start) >= 0:
        return None  # an escaped colon: the colon count below would not hold
    top = _TOP.decode(memoryview(mapped)[start:])
    release(mapped)  # each pass reads the file's pages: dropped after it, not kept resident
    if "answer" not in top or not set(top) <= set(_PARTS):
        return None
    answers = _ANSWERS.decode(top["answer"])
    release(mapped)
    facts = _FACT_MAP.decode(top["sp"]) if "sp" in top else {}
    release(mapped)
    values = list(facts.values())
    colons = 0
    for i in range(0, len(values), _BATCH):
        chunk = b",".join(values[i:i + _BATCH])
        colons += chunk.count(b":")
        _FACT_LISTS.decode(b"[" + chunk + b"]")  # all well typed (else the checked reader)
        release(mapped)
    del values
    expected = len(top) + "".join(top).count(":")
    expected += len(answers) + "".join(answers).count(":") + "".join(answers.values()).count(":")
    expected += len(facts) + "".join(facts).count(":") + colons
    if count_colons(mapped, start) != expected:  # a key repeated inside one object
        return None
    _, warnings = read_official_parts(path, {part: (answers if part == "answer" else facts)
                                                for part in top}, _PARTS)
    total = len(answers) + sum(1 for key in facts if key not in answers)
    predictions: Predictions[P] = Predictions(
        {}, str(path), "official", warnings,
        stream=OfficialIndex(make, mapped, answers, facts, total))
    if "sp" in top:
        lacking = [key for key in answers if key not in facts]
        warning = unpredicted_warning(str(path), "sp", "supporting-fact and joint metrics",
                                      lacking, total)
        if warning:
            predictions.warnings.append(warning)
    return predictions

