"""HotpotQA files scored in bounded memory: the gold list streamed, the predictions indexed.

A million HotpotQA examples are 320 MB of gold JSON and 150 MB of official predictions. Held
as Python objects they cost several GB; here:

* the gold list is read a window at a time (:mod:`hopscore.files.jsonstream`), each record decoded
  into the few fields scoring reads and dropped once scored. Duplicate ids are caught as they
  come (a set of the ids' hashes; a repeated hash is confirmed by reading the file again up
  to it), with the message :func:`~hopscore.benchmarks.base.check_unique_ids` gives;
* the official predictions object is indexed compactly
  (:mod:`hopscore.benchmarks.hotpotqa.official_index`).

Whatever this fast reading does not take (JSON Lines, unusual keys, a wrong type) goes through
the checked readers of :mod:`hopscore.benchmarks.hotpotqa`, which give the same results and
name any problem.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from hopscore.benchmarks.base import Example
from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields
from hopscore.files.io import _DuplicateKey, _no_duplicate_keys
from hopscore.files.jsonstream import Batch, iter_json_list

__all__ = ["GoldReader", "stream_gold"]


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
