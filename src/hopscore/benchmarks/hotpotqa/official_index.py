"""HotpotQA's official predictions object indexed compactly for one scoring pass.

The official ``{"answer": {id: str}, "sp": {id: [[title, sent_id], ...]}}`` object is kept
as arrays, 29 bytes an id and part, sorted by the ids' hashes: where each key and value lies
in the memory-mapped file (found by :func:`hopscore.files.jsonspans.object_spans`). Answers and
supporting-fact lists are decoded as their examples are scored (:class:`OfficialIndex`).
Everything is checked before scoring starts, as the whole-file reader does: every answer a
string, every fact a ``[title, integer]`` pair, no id twice in one map (equal hashes are
confirmed by the ids' text; a file with a repeated key goes to the whole-file reader, which
names it). Whatever this reading does not take (JSON Lines, an escaped top-level key, a wrong
type) goes through the checked readers of :mod:`hopscore.benchmarks.hotpotqa`, which give
the same results and name any problem.
"""

from __future__ import annotations

import mmap
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec
import numpy as np

from hopscore.benchmarks.base import Prediction, Predictions
from hopscore.benchmarks.formats import read_official_parts, unpredicted_warning
from hopscore.files.io import sniff_json_kind
from hopscore.files.jsonspans import Spans, Unusual, object_spans
from hopscore.files.jsonstream import map_read, release

P = TypeVar("P", bound=Prediction)

_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ANSWER_MAP = msgspec.json.Decoder(dict[str, str])
_FACT_MAP = msgspec.json.Decoder(dict[str, list[tuple[str, int]]])
_STR = msgspec.json.Decoder(str)
_FACT_WINDOW = msgspec.json.Decoder(dict[str, tuple[tuple[str, int], ...]])
_MISSING: Any = object()
#: entries of a part decoded at once when predictions are taken in file order
_WINDOW = 2048
_PARTS = ("answer", "sp")
_WS = b" \t\r\n"
_RELEASE_EVERY = 1 << 14


class _Part:
    """One map of the official object (answers or supporting facts) as arrays sorted by the
    ids' hashes: the low 32 bits of each id's hash, the offset and length of its key's text and
    of its value's text in the mapped file, the entry's place in the file and back (29 bytes an
    entry with its taken flag).

    :meth:`take` reads a *window*: the next ``_WINDOW`` entries in file order, decoded at once
    into a dict (keyed by the ids' real text) from the place of the entry asked for, which
    predictions written in the gold's order then consume one by one. An id not in the window is
    looked up by its hash (bisection, confirmed by the key's text); entries leaving the window
    are flagged taken, except those still in it."""

    def __init__(self, mapped: mmap.mmap, decoder: msgspec.json.Decoder[dict[str, Any]]
                 ) -> None:
        self.mapped = mapped
        self.decoder = decoder
        self.window: dict[str, Any] = {}
        self.low = self.high = 0  # the window's places in the file
        wide = len(mapped) >= 1 << 32
        #: the low 32 bits of each id's hash (equal ones are told apart by the ids' text)
        self.hashes: array[int] = array("I")
        self.key_start: array[int] = array("Q" if wide else "I")
        self.key_length: array[int] = array("I")
        self.value_start: array[int] = array("Q" if wide else "I")
        self.value_length: array[int] = array("I")
        self.place: array[int] = array("I")  # sorted entry -> its place in the file
        self.by_file: array[int] = array("I")  # place in the file -> sorted entry
        self.taken = bytearray()

    def add(self, spans: Spans) -> None:
        """The entries of one window, in file order."""
        hashes = np.fromiter(map(hash, spans.decoded), np.int64, len(spans.decoded))
        for column, values in ((self.hashes, hashes & _LOW),
                               (self.key_start, spans.key_start),
                               (self.key_length, spans.key_end - spans.key_start),
                               (self.value_start, spans.value_start),
                               (self.value_length, spans.value_end - spans.value_start)):
            column.frombytes(values.astype(_DTYPES[column.typecode]).tobytes())

    def sort(self) -> None:
        """Sorted by hash, one column at a time (the temporary arrays stay few)."""
        order = np.argsort(np.frombuffer(self.hashes, np.uint32), kind="stable")
        for name in ("hashes", "key_start", "key_length", "value_start", "value_length"):
            column = getattr(self, name)
            values = np.frombuffer(column, _DTYPES[column.typecode])[order]
            setattr(self, name, array(column.typecode, values.tobytes()))
            del column, values
        self.place = array("I", order.astype(np.uint32).tobytes())
        by_file = np.empty(len(order), np.uint32)
        by_file[order] = np.arange(len(order), dtype=np.uint32)
        self.by_file = array("I", by_file.tobytes())
        self.taken = bytearray(len(self.hashes))

    def __len__(self) -> int:
        return len(self.hashes)

    def key(self, i: int) -> str:
        start = self.key_start[i]
        text = self.mapped[start:start + self.key_length[i]]
        return text[1:-1].decode() if b"\\" not in text else _STR.decode(text)

    def find(self, key_hash: int, example_id: str) -> int:
        """The entry of ``example_id`` (its hash ``key_hash``), or -1: equal hashes are
        confirmed by the key's text."""
        hashes = self.hashes
        i = bisect_left(hashes, key_hash)
        while i < len(hashes) and hashes[i] == key_hash:
            if self.key(i) == example_id:
                return i
            i += 1
        return -1

    def take(self, key_hash: int, example_id: str) -> Any:
        """The value of ``example_id``, or ``_MISSING`` (absent, or taken before)."""
        value = self.window.pop(example_id, _MISSING)
        if value is not _MISSING:
            return value
        i = self.find(key_hash, example_id)
        if i < 0 or self.taken[i] or self.low <= self.place[i] < self.high:
            return _MISSING  # taken from an earlier window, or from this one
        self.load(self.place[i])
        return self.window.pop(example_id)

    def load(self, low: int) -> None:
        """The window of the entries from place ``low`` in the file (those taken before
        left out)."""
        self.evict()
        high = min(low + _WINDOW, len(self.by_file))
        first, last = self.by_file[low], self.by_file[high - 1]
        text = self.mapped[self.key_start[first]:self.value_start[last] + self.value_length[last]]
        window = self.decoder.decode(b"{" + text + b"}")
        rows = np.frombuffer(self.by_file, np.uint32)[low:high]
        done = np.flatnonzero(np.frombuffer(self.taken, np.uint8)[rows])
        if len(done):
            keys = list(window)  # in file order (no key is repeated)
            for j in done:
                del window[keys[j]]
        self.window, self.low, self.high = window, low, high

    def evict(self) -> None:
        """Flag the window's entries taken, except those still in it; empty it."""
        if self.high > self.low:
            taken = np.frombuffer(self.taken, np.uint8)
            taken[np.frombuffer(self.by_file, np.uint32)[self.low:self.high]] = 1
            for key in self.window:
                taken[self.find(hash(key) & _LOW, key)] = 0
        self.window = {}
        self.low = self.high = 0

    def repeats(self) -> bool:
        """Whether an id is a key twice (equal hashes are confirmed by the ids' text)."""
        hashes = self.hashes
        sorted_hashes = np.frombuffer(hashes, np.uint32)
        for i in np.flatnonzero(sorted_hashes[1:] == sorted_hashes[:-1]) + 1:
            mine = self.key(int(i))
            k = int(i) - 1
            while k >= 0 and hashes[k] == hashes[i]:
                if self.key(k) == mine:
                    return True
                k -= 1
        return False

    def in_file_order(self, entries: Iterable[int]) -> list[int]:
        return sorted(entries, key=self.place.__getitem__)

    def left(self) -> list[int]:
        """The entries not taken, in file order."""
        self.evict()
        return self.in_file_order(
            int(i) for i in np.flatnonzero(np.frombuffer(self.taken, np.uint8) == 0))


_LOW = 0xFFFFFFFF
_DTYPES = {"I": np.uint32, "Q": np.uint64}


class OfficialIndex(Generic[P]):
    """The official predictions, held compactly and decoded one example at a time.

    :meth:`take` hands out an id's prediction once (scoring asks for each gold id once);
    :meth:`unmatched` lists the ids never asked for, in the file's order.
    """

    def __init__(self, make: Callable[..., P], mapped: mmap.mmap, answers: _Part,
                 facts: _Part, total: int) -> None:
        self._make = make
        self._mapped = mapped
        self._answers = answers
        self._facts = facts
        self._total = total
        self._taken = 0

    def __len__(self) -> int:
        return self._total

    def take(self, example_id: str) -> P | None:
        answers, facts = self._answers, self._facts
        answer = answers.window.pop(example_id, _MISSING)  # the usual case, inline
        if answer is _MISSING:
            answer = answers.take(hash(example_id) & _LOW, example_id)
        sp = facts.window.pop(example_id, _MISSING)
        if sp is _MISSING:
            sp = facts.take(hash(example_id) & _LOW, example_id)
        if answer is _MISSING and sp is _MISSING:
            return None
        self._taken += 1
        if not self._taken % _RELEASE_EVERY:
            release(self._mapped)
        return self._make(id=example_id, answer=None if answer is _MISSING else answer,
                          sp=None if sp is _MISSING else sp)

    def unmatched(self) -> list[str]:
        answers, facts = self._answers, self._facts
        left = [answers.key(i) for i in answers.left()]
        for i in facts.left():
            key = facts.key(i)
            if answers.find(hash(key) & _LOW, key) < 0:
                left.append(key)
        return left


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
    except (msgspec.DecodeError, Unusual):
        index = None
    release(mapped)
    return index


def _index(path: Path, mapped: mmap.mmap, make: Callable[..., P]) -> Predictions[P] | None:
    start = 3 if mapped[:3] == b"\xef\xbb\xbf" else 0
    with memoryview(mapped) as view, view[start:] as text:
        top = _TOP.decode(text)  # the whole file checked as JSON
        lengths = {key: len(value) for key, value in top.items()}
        del top
    release(mapped)  # each pass reads the file's pages: dropped after it, not kept resident
    if "answer" not in lengths or not set(lengths) <= set(_PARTS):
        return None
    places = _top_places(mapped, start, lengths)
    answers = _part(mapped, places["answer"], _ANSWER_MAP, b'"', b'"', _ANSWER_MAP)
    facts = _part(mapped, places.get("sp"), _FACT_MAP, b"[", b"]", _FACT_WINDOW)
    if answers.repeats() or facts.repeats():
        return None  # the checked reader names the repeated key
    _, warnings = read_official_parts(path, {key: {} for key in lengths}, _PARTS)
    lacking = _lacking(answers, facts) if "sp" in lengths else []
    total = len(answers) + len(facts) - (len(answers) - len(lacking) if "sp" in lengths else 0)
    predictions: Predictions[P] = Predictions(
        {}, str(path), "official", warnings,
        stream=OfficialIndex(make, mapped, answers, facts, total))
    warning = unpredicted_warning(str(path), "sp", "supporting-fact and joint metrics",
                                  [answers.key(i) for i in lacking], total)
    if warning:
        predictions.warnings.append(warning)
    return predictions


def _top_places(mapped: mmap.mmap, start: int,
                lengths: dict[str, int]) -> dict[str, tuple[int, int]]:
    """Where each part's object lies in the file (``lengths``: each part's text length, from
    the whole file's decoding). Raises :class:`Unusual` for a key written with escapes or
    given twice."""
    places: dict[str, tuple[int, int]] = {}
    at = _skip(mapped, start) + 1  # past the "{"
    while True:
        at = _skip(mapped, at)
        if mapped[at:at + 1] == b"}":
            return places
        for part in lengths:
            name = b'"' + part.encode() + b'"'
            if mapped[at:at + len(name)] == name:
                break
        else:
            raise Unusual("a top-level key written with escapes")
        if part in places:
            raise Unusual("a top-level key twice")
        at = _skip(mapped, _skip(mapped, at + len(name)) + 1)  # past the ":"
        places[part] = (at, at + lengths[part])
        at = _skip(mapped, at + lengths[part])
        if mapped[at:at + 1] == b",":
            at += 1


def _skip(mapped: mmap.mmap, at: int) -> int:
    while mapped[at:at + 1] in (b" ", b"\t", b"\r", b"\n"):
        at += 1
    return at


def _part(mapped: mmap.mmap, place: tuple[int, int] | None,
          decoder: msgspec.json.Decoder[dict[str, Any]], opener: bytes, closer: bytes,
          window: msgspec.json.Decoder[dict[str, Any]]) -> _Part:
    part = _Part(mapped, window)
    if place is not None:
        for spans in object_spans(mapped, *place, decoder, opener, closer):
            part.add(spans)
    part.sort()
    return part


def _lacking(answers: _Part, facts: _Part) -> list[int]:
    """The answers' entries whose id has no supporting facts, in file order. Equal hashes are
    confirmed by the ids' text: byte for byte (vectorized), else decoded."""
    answer_hashes = np.frombuffer(answers.hashes, np.uint32)
    fact_hashes = np.frombuffer(facts.hashes, np.uint32)
    same = np.zeros(len(answer_hashes), bool)
    if len(fact_hashes):
        at = np.minimum(np.searchsorted(fact_hashes, answer_hashes), len(fact_hashes) - 1)
        found = np.flatnonzero(fact_hashes[at] == answer_hashes)
        # in file order, a few thousand at a time: the pages read stay few
        found = found[np.argsort(np.frombuffer(answers.place, np.uint32)[found], kind="stable")]
        a_start = np.frombuffer(answers.key_start, _DTYPES[answers.key_start.typecode])
        a_length = np.frombuffer(answers.key_length, np.uint32).astype(np.int64)
        f_start = np.frombuffer(facts.key_start, _DTYPES[facts.key_start.typecode])
        f_length = np.frombuffer(facts.key_length, np.uint32).astype(np.int64)
        text = np.frombuffer(answers.mapped, np.uint8)
        for low in range(0, len(found), 1 << 12):
            mine = found[low:low + (1 << 12)]
            theirs = at[mine]
            equal = a_length[mine] == f_length[theirs]
            mine, theirs = mine[equal], theirs[equal]
            length = a_length[mine]
            if not len(mine):
                continue
            starts = np.cumsum(length) - length
            ramp = np.arange(int(length.sum())) - np.repeat(starts, length)
            differs = (text[np.repeat(a_start[mine], length) + ramp]
                       != text[np.repeat(f_start[theirs], length) + ramp])
            same[mine[~np.logical_or.reduceat(differs, starts)]] = True
            release(answers.mapped)
        del text
        for i in np.flatnonzero(~same)[np.isin(np.flatnonzero(~same), found)]:
            key = answers.key(int(i))  # same hash, other bytes: escapes, or another id
            same[i] = facts.find(hash(key) & _LOW, key) >= 0
    return answers.in_file_order(int(i) for i in np.flatnonzero(~same))
