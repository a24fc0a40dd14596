"""Universal JSON Lines predictions indexed in 16 bytes a line, for one scoring pass.

:func:`load_universal <hopscore.benchmarks.base.load_universal>` keeps every prediction as an
object (about 200 bytes each with its id). For one pass over the gold, :func:`index_universal`
keeps instead, per line, the hash of its id and the line's offset in the memory-mapped file,
sorted by hash (two ``array('q')``); :meth:`UniversalIndex.take` finds a gold id's line by
bisection and decodes it then. The index is built only for a plain file: every line a JSON
object with a string id whose prediction ``quick`` makes, no id twice (equal hashes are
confirmed by decoding both lines). Anything else returns None and the caller reads the file
with ``load_universal``, which gives the same predictions and names any problem.
"""

from __future__ import annotations

import mmap
from array import array
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

import msgspec

from hopscore.benchmarks.typed_records import Prediction, Predictions
from hopscore.files.jsonstream import map_read, release

P = TypeVar("P", bound=Prediction)

_DECODE = msgspec.json.Decoder().decode
_WINDOW = 1 << 22
#: lines an index takes (the line number is packed beside the hash while sorting)
_LINE_BITS = 28
_HALF = 1 << 63
#: pages of the mapped file are dropped from memory after this many decoded lines
_RELEASE_EVERY = 1 << 16


class UniversalIndex(Generic[P]):
    """:class:`~hopscore.benchmarks.typed_records.PredictionStream` over an indexed file."""

    def __init__(self, mapped: mmap.mmap, hashes: array[int], offsets: array[int],
                 make: Callable[[dict[str, Any], str], P | None], id_field: str) -> None:
        self._mapped = mapped
        self._hashes = hashes
        self._offsets = offsets
        self._taken = bytearray(len(hashes))
        self._make = make
        self._id_field = id_field
        self._decoded = 0

    def __len__(self) -> int:
        return len(self._hashes)

    def _line(self, i: int) -> dict[str, Any]:
        start = self._offsets[i]
        end = self._mapped.find(b"\n", start)
        value: dict[str, Any] = _DECODE(self._mapped[start:] if end < 0
                                        else self._mapped[start:end])
        self._decoded += 1
        if not self._decoded % _RELEASE_EVERY:
            release(self._mapped)
        return value

    def take(self, example_id: str) -> P | None:
        key = hash(example_id)
        hashes = self._hashes
        i = bisect_left(hashes, key)
        while i < len(hashes) and hashes[i] == key:
            value = self._line(i)
            if value[self._id_field] == example_id and not self._taken[i]:
                self._taken[i] = 1
                return self._make(value, example_id)
            i += 1
        return None

    def unmatched(self) -> list[str]:
        left = sorted(self._offsets[i] for i, taken in enumerate(self._taken) if not taken)
        field = self._id_field
        ids = []
        for offset in left:
            end = self._mapped.find(b"\n", offset)
            ids.append(str(_DECODE(self._mapped[offset:] if end < 0
                                   else self._mapped[offset:end])[field]))
        return ids


def index_universal(path: Path, make: Callable[[dict[str, Any], str], P | None], *,
                    id_field: str = "id") -> Predictions[P] | None:
    """The universal predictions of ``path`` as a :class:`UniversalIndex` (``make``: the
    benchmark's ``quick`` reader of a plain record), or None when the file is not plain."""
    mapped = map_read(path)
    if mapped is None:  # unreadable or empty: the usual reader says so
        return None
    built = _build(mapped, make, id_field)
    release(mapped)
    if built is None:
        mapped.close()
        return None
    hashes, offsets = built
    return Predictions({}, str(path), "universal",
                       stream=UniversalIndex(mapped, hashes, offsets, make, id_field))


def _build(mapped: mmap.mmap, make: Callable[[dict[str, Any], str], P | None],
           id_field: str) -> tuple[array[int], array[int]] | None:
    hashes: array[int] = array("q")
    offsets: array[int] = array("q")
    size = len(mapped)
    start = 3 if mapped[:3] == b"\xef\xbb\xbf" else 0
    decode = _DECODE
    while start < size:  # a window of whole lines at a time
        end = size if start + _WINDOW >= size else mapped.find(b"\n", start + _WINDOW)
        if end < 0:
            end = size
        offset = start
        for line in mapped[start:end].split(b"\n"):
            if line.strip():
                try:
                    value = decode(line)
                except msgspec.DecodeError:
                    return None
                if type(value) is not dict:
                    return None
                example_id = value.get(id_field)
                if not (type(example_id) is str and example_id
                        and not example_id[0].isspace()) or make(value, example_id) is None:
                    return None
                hashes.append(hash(example_id))
                offsets.append(offset)
            offset += len(line) + 1
        start = end + 1
        release(mapped)  # the window's pages: the file is not kept in memory while indexed
    release(mapped)
    if len(hashes) >= 1 << _LINE_BITS:
        return None
    # sorted by hash with the line number in the low bits: one int a line while sorting
    packed = [(h + _HALF) << _LINE_BITS | i for i, h in enumerate(hashes)]
    del hashes
    packed.sort()
    mask = (1 << _LINE_BITS) - 1
    sorted_hashes = array("q", ((p >> _LINE_BITS) - _HALF for p in packed))
    sorted_offsets = array("q", (offsets[p & mask] for p in packed))
    del packed, offsets
    for i in range(1, len(sorted_hashes)):  # equal hashes: the same id twice?
        if sorted_hashes[i] == sorted_hashes[i - 1] and _same_id(
                mapped, sorted_offsets, sorted_hashes, i, id_field):
            return None
    return sorted_hashes, sorted_offsets


def _same_id(mapped: mmap.mmap, offsets: array[int], hashes: array[int], i: int,
             id_field: str) -> bool:
    """Whether line ``i`` repeats the id of an earlier line with the same hash."""
    def id_at(k: int) -> Any:
        end = mapped.find(b"\n", offsets[k])
        return _DECODE(mapped[offsets[k]:] if end < 0 else mapped[offsets[k]:end])[id_field]

    mine = id_at(i)
    k = i - 1
    while k >= 0 and hashes[k] == hashes[i]:
        if id_at(k) == mine:
            return True
        k -= 1
    return False
