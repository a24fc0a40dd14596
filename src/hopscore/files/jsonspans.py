"""Where the entries of a large JSON object lie in its file, found a window at a time.

:func:`object_spans` walks the text of one JSON object ``{key: value, ...}`` whose values all
open and close with one known byte (``"..."`` strings, ``[...]`` lists) and gives, window by
window, the entries decoded by the caller's typed decoder together with the byte offsets of
each key's and each value's text. A caller can then keep the offsets (a few integers an
entry, in arrays) instead of the decoded values and decode one entry when it needs it.

The offsets come from a vectorized scan (numpy) of the window: the unescaped quotes (a quote
after an odd run of backslashes is escaped) tell which bytes lie inside strings; every colon
outside a string ends a key (the values hold no objects); a value starts at the first opening
byte after its colon and ends at the last closing byte before the next entry's key. A window
is cut at the comma before its last key, and the text up to the cut is decoded by msgspec
(bracketed ``{...}``): it checks the whole text, and the number of entries it returns must
equal the number of colons found, so a key repeated in a window, or anything the scan
misread, is noticed. Anything unusual raises :class:`Unusual`; the caller then reads the file
with its checked reader.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from hopscore.files.jsonstream import release

#: bytes scanned at a time (a window grows while it holds no whole entry)
WINDOW = 1 << 20
_QUOTE, _BACKSLASH, _COLON, _COMMA = 0x22, 0x5C, 0x3A, 0x2C

Positions = npt.NDArray[np.int64]


class Unusual(Exception):
    """The object's text is not what :func:`object_spans` reads (the caller reads it another
    way, which names any problem)."""


class Spans:
    """The entries of one window: ``decoded`` (the caller's decoder's dict, in file order) and
    the absolute offsets of each key's text (with its quotes) and each value's text."""

    __slots__ = ("decoded", "key_end", "key_start", "value_end", "value_start")

    def __init__(self, decoded: dict[str, Any], key_start: Positions, key_end: Positions,
                 value_start: Positions, value_end: Positions) -> None:
        self.decoded = decoded
        self.key_start = key_start
        self.key_end = key_end
        self.value_start = value_start
        self.value_end = value_end


def object_spans(data: mmap.mmap, start: int, end: int,
                 decoder: msgspec.json.Decoder[dict[str, Any]], opener: bytes, closer: bytes,
                 *, window: int | None = None) -> Iterator[Spans]:
    """The entries of the object ``data[start:end]`` (``{`` ... ``}``), a window at a time;
    each value's text opens with ``opener`` and closes with ``closer``. Raises
    :class:`Unusual` (see the module's text)."""
    if data[start:start + 1] != b"{" or data[end - 1:end] != b"}":
        raise Unusual("not an object")
    window = window or WINDOW
    size = window
    at = start  # the "{" or the "," before the window's first key
    while at < end - 1:
        high = min(at + size, end)
        text = data[at:high]
        quotes, colons, after = _outside_colons(text)
        last = high == end
        if not last:
            if len(colons) < 2:  # no whole entry yet: a wider window
                size *= 2
                continue
            if after[-1] < 2:
                raise Unusual("a colon before any key")
            cut = text.rfind(b",", 0, int(quotes[after[-1] - 2]))
            keep = int(np.searchsorted(colons, cut))
            colons, after, text = colons[:keep], after[:keep], text[:cut + 1]
        yield _spans(text, at, quotes, colons, after, decoder, opener, closer)
        at += len(text) - 1
        size = window
        release(data)  # the window's pages: the file is not kept resident while scanned


def _outside_colons(text: bytes) -> tuple[Positions, Positions, Positions]:
    """The unescaped quotes of ``text``, its colons outside strings and, for each of those,
    the index in ``quotes`` of the first quote after it (``text`` starts outside a string)."""
    raw = np.frombuffer(text, np.uint8)
    quotes = np.flatnonzero(raw == _QUOTE)
    slashes = np.flatnonzero(raw == _BACKSLASH)
    if len(slashes) and len(quotes):
        run = np.ones(len(slashes), bool)  # where a run of backslashes starts
        run[1:] = slashes[1:] != slashes[:-1] + 1
        run_start = slashes[np.maximum.accumulate(np.where(run, np.arange(len(slashes)), 0))]
        before = np.maximum(np.searchsorted(slashes, quotes) - 1, 0)
        escaped = (slashes[before] == quotes - 1) & ((quotes - run_start[before]) % 2 == 1)
        quotes = quotes[~escaped]
    colons = np.flatnonzero(raw == _COLON)
    after = np.searchsorted(quotes, colons)
    outside = after % 2 == 0
    return quotes, colons[outside], after[outside]


def _spans(text: bytes, at: int, quotes: Positions, colons: Positions, after: Positions,
           decoder: msgspec.json.Decoder[dict[str, Any]], opener: bytes,
           closer: bytes) -> Spans:
    try:
        decoded = decoder.decode(b"{" + text[1:-1] + b"}")
    except msgspec.DecodeError:
        raise Unusual("not read by the typed decoder") from None
    if len(decoded) != len(colons) or (len(colons) and after[0] < 2):
        raise Unusual("a key repeated, or text the scan misread")
    raw = np.frombuffer(text, np.uint8)
    key_start = quotes[after - 2]
    key_end = quotes[after - 1] + 1
    opens = np.flatnonzero(raw == opener[0])
    closes = np.flatnonzero(raw == closer[0])
    bound = np.empty_like(key_start)  # where the next entry (or the window) begins
    bound[:-1] = key_start[1:]
    bound[-1:] = len(text) - 1
    try:
        value_start = opens[np.searchsorted(opens, colons)]
        value_end = closes[np.searchsorted(closes, bound) - 1] + 1
    except IndexError:
        raise Unusual("text the scan misread") from None
    if len(colons) and not (bool(np.all(value_start > colons))
                            and bool(np.all(value_end > value_start))):
        raise Unusual("text the scan misread")
    return Spans(decoded, key_start + at, key_end + at, value_start + at, value_end + at)
