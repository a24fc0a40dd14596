"""A JSON list read one element at a time: large gold files in bounded memory.

:func:`iter_json_list` reads a file holding one JSON list in windows of a few MiB. Each window
is cut after the last ``}`` followed by a comma that closes an element: the candidate is
checked by decoding ``[`` + the text before it + ``]`` with msgspec, which succeeds only when
the cut lies between two elements (a cut inside a string leaves it unterminated, a cut inside
an element leaves a bracket open). The decoded elements are handed on as :class:`msgspec.Raw`
slices (or typed, with a decoder of the caller's), and the window's bytes are dropped.

Anything msgspec does not take (a syntax error, ``NaN``, invalid UTF-8) sends the rest of the
file through the standard library, element by element, which either reads it (``NaN``) or
names the line and column of the problem, as :func:`hopscore.files.io.load_json` does for a whole
document.
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from hopscore.errors import InputError, Location
from hopscore.files.io import _DuplicateKey, _no_duplicate_keys, open_binary

#: bytes read at a time (a window grows when no element ends inside it)
WINDOW = 1 << 21
_BLOCK = 1 << 24
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_WS = b" \t\r\n"
_WS_TEXT = re.compile(r"[ \t\r\n]*")
#: decode attempts per window before it grows
_ATTEMPTS = 4


class Batch:
    """Consecutive elements of the list, from 0-based ``start``: ``typed`` (decoded by the
    caller's typed decoder), else ``raw`` (their JSON texts, when the typed decoder rejected
    something among them) or ``values`` (read by the standard library); the other two are
    None."""

    __slots__ = ("raw", "start", "typed", "values")

    def __init__(self, start: int, *, raw: list[msgspec.Raw] | None = None,
                 typed: list[Any] | None = None, values: list[Any] | None = None) -> None:
        self.start = start
        self.raw = raw
        self.typed = typed
        self.values = values


def is_json_list(path: Path) -> bool:
    """Whether the file's first non-blank byte (after a BOM) opens a list."""
    with open_binary(path) as handle:
        head = handle.read(1 << 16)
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        while head and not head.lstrip(_WS):
            head = handle.read(1 << 16)
    return head.lstrip(_WS)[:1] == b"["


def iter_json_list(path: Path, typed: msgspec.json.Decoder[list[Any]] | None = None, *,
                   window: int | None = None) -> Iterator[Batch]:
    """The elements of the JSON list in ``path``, in order, ``window`` bytes at a time.

    ``typed`` decodes a window's elements in one call when they all fit its type (else they
    come as ``raw``). The caller has checked :func:`is_json_list`. Raises a located
    :class:`InputError` for text that is not JSON, naming the line and column (and for a key
    repeated inside one object).

    The file is mapped copy-on-write: the separator before a window's first element is
    overwritten with ``[`` and the byte after its last one with ``]`` while it is decoded
    (then put back), so nothing is copied; the pages read are released as the reading moves
    on, so they do not stay in the process's resident memory.
    """
    with open_binary(path) as handle:
        try:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
        except ValueError:  # empty (is_json_list has said it is not)
            return
    with mapped:
        yield from _Reader(path, mapped, window or WINDOW, typed).elements()


def map_read(path: Path) -> mmap.mmap | None:
    """``path`` mapped read-only, or None when it cannot be (unreadable, or empty: a fast
    reader then leaves the file to the checked one, which says why)."""
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def release(mapped: mmap.mmap) -> None:
    """Drop the mapped file's pages from this process (they are read again when touched), so
    that the pages read so far do not stay in its resident memory."""
    if hasattr(mapped, "madvise"):
        mapped.madvise(mmap.MADV_DONTNEED)


def count_colons(mapped: mmap.mmap, start: int) -> int:
    """The ``:`` bytes of ``mapped`` from ``start`` (an upper bound on the keys of a JSON
    object: a fast reader's check that no key was lost to a repeat), read 16 MiB at a time,
    each slice's pages released after it."""
    count = 0
    for offset in range(start, len(mapped), 1 << 24):
        count += mapped[offset:offset + (1 << 24)].count(b":")
        release(mapped)
    return count


class _Reader:
    def __init__(self, path: Path, mapped: mmap.mmap, window: int,
                 typed: msgspec.json.Decoder[list[Any]] | None) -> None:
        self.path = path
        self.typed = typed
        self.data = mapped
        self.window = window
        self.index = 0
        self.released = 0

    def elements(self) -> Iterator[Batch]:
        data = self.data
        size = len(data)
        start = 3 if data[:3] == b"\xef\xbb\xbf" else 0
        sep = data.find(b"[", start)  # is_json_list has checked only blanks come before it
        after_comma = False
        window = self.window
        while True:
            if sep + window >= size:  # the rest of the file: elements, "]", blanks
                decoded = self._decode(sep, size)
                if decoded is None or (after_comma and not decoded[1]):  # "[..., ]"
                    yield from self._slowly(sep if after_comma else sep + 1, after_comma)
                    return
                yield from self._emit(*decoded)
                return
            cut = self._cut(sep, sep + window)
            if cut is None:  # no element ends inside the window: read more at once
                window *= 2
                continue
            sep, decoded = cut
            yield from self._emit(*decoded)
            after_comma = True
            window = self.window
            self._release(sep)

    def _release(self, upto: int) -> None:
        """Drop the mapped pages before ``upto`` from this process (read again if touched)."""
        end = upto - upto % mmap.PAGESIZE
        if end - self.released >= (1 << 24) and hasattr(self.data, "madvise"):
            self.data.madvise(mmap.MADV_DONTNEED, self.released, end - self.released)
            self.released = end

    def _decode(self, sep: int, end: int) -> tuple[bool, list[Any]] | None:
        """``(typed, elements)`` of ``data[sep + 1:end - 1]`` bracketed, or None when that is
        not JSON to msgspec (``end`` = the file's size: the list's own ``]`` ends it)."""
        data = self.data
        first = data[sep]
        last = data[end - 1] if end < len(data) else None
        data[sep] = 0x5B  # "["
        if last is not None:
            data[end - 1] = 0x5D  # "]"
        try:
            with memoryview(data) as view, view[sep:end] as piece:
                if self.typed is not None:
                    try:
                        return True, self.typed.decode(piece)
                    except msgspec.ValidationError:
                        pass  # well-formed but of another type somewhere (or a syntax error)
                    except msgspec.DecodeError:
                        return None
                try:
                    raws = _RAW_LIST.decode(piece)
                except msgspec.DecodeError:
                    return None
                # the elements' text must outlive the mapping: copy it out
                copies = [msgspec.Raw(bytes(raw)) for raw in raws]
                del raws
                return False, copies
        finally:
            data[sep] = first
            if last is not None:
                data[end - 1] = last

    def _emit(self, typed: bool, values: list[Any]) -> Iterator[Batch]:
        index = self.index
        self.index += len(values)
        if values:
            yield Batch(index, typed=values) if typed else Batch(index, raw=values)

    def _cut(self, sep: int, high: int) -> tuple[int, tuple[bool, list[Any]]] | None:
        """The elements after ``sep`` up to the last good cut before ``high``, and the
        separator (``,``) that follows them."""
        data = self.data
        size = len(data)
        attempts = 0
        while attempts < _ATTEMPTS:
            close = data.rfind(b"}", sep + 1, high)
            if close < 0:
                return None
            high = close
            after = close + 1
            while after < size and data[after] in _WS:
                after += 1
            if after >= size or data[after] != 0x2C:  # ","
                continue
            attempts += 1
            decoded = self._decode(sep, close + 2)
            if decoded is not None:
                return after, decoded
        return None

    def _slowly(self, start: int, after_comma: bool) -> Iterator[Batch]:
        """The rest of the list (from ``start``: the comma after the elements read before when
        ``after_comma``, else the first element) read by the standard library, element by
        element."""
        self.base = start
        data = self.data[start:]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = self._line_of(self.base + exc.start)
            raise InputError(Location(str(self.path), line=line), "not valid UTF-8") from None
        del data
        decoder = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys)
        if after_comma:  # text[0] is the comma
            i = self._past_comma(text, 0)
        else:
            i = _WS_TEXT.match(text, 0).end()  # type: ignore[union-attr]
            if text.startswith("]", i):
                self._after_end(text, i + 1)
                return
        while True:
            try:
                value, i = decoder.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                self._fail(text, exc)
            except _DuplicateKey as exc:
                raise InputError(self.path, f"duplicate key {exc.args[0]!r} in one JSON object"
                                 ) from None
            except RecursionError:
                self._fail(text, json.JSONDecodeError("nested too deeply to read", text, i))
            yield Batch(self.index, values=[value])
            self.index += 1
            i = _WS_TEXT.match(text, i).end()  # type: ignore[union-attr]
            if text.startswith(",", i):
                i = self._past_comma(text, i)
                continue
            if text.startswith("]", i):
                self._after_end(text, i + 1)
                return
            self._fail(text, json.JSONDecodeError("Expecting ',' delimiter", text, i))

    def _past_comma(self, text: str, comma: int) -> int:
        """Where the next element starts after the ``,`` at ``comma``; a ``]`` there instead
        (a trailing comma) fails as the standard library's reading of the list would."""
        i = _WS_TEXT.match(text, comma + 1).end()  # type: ignore[union-attr]
        if text.startswith("]", i):
            self._fail(text, _trailing_comma(text, comma, i))
        return i

    def _after_end(self, text: str, i: int) -> None:
        i = _WS_TEXT.match(text, i).end()  # type: ignore[union-attr]
        if i < len(text):
            self._fail(text, json.JSONDecodeError("Extra data", text, i))

    def _fail(self, text: str, exc: json.JSONDecodeError) -> Any:
        """Raise ``exc`` (at a position of ``text``, the buffer) as the whole file's error."""
        offset = self.base + len(text[:exc.pos].encode("utf-8"))
        line = self._line_of(offset)
        column = exc.colno
        if exc.lineno == 1:  # the buffer starts inside the file's line
            column += len(self._line_start_text(self.base))
        raise InputError(Location(str(self.path), line=line),
                         f"invalid JSON: {exc.msg} (column {column})") from None

    def _line_of(self, offset: int) -> int:
        """The 1-based line of a file offset (the file is read again: errors only)."""
        with self.path.open("rb") as handle:
            lines = 1
            done = 0
            while done < offset:
                block = handle.read(min(_BLOCK, offset - done))
                if not block:
                    break
                lines += block.count(b"\n")
                done += len(block)
        return lines

    def _line_start_text(self, offset: int) -> str:
        """The text of the file's line before ``offset`` (errors only)."""
        with self.path.open("rb") as handle:
            before = handle.read(offset)
        start = before.rfind(b"\n") + 1
        if start == 0 and before.startswith(b"\xef\xbb\xbf"):
            start = 3
        return before[start:].decode("utf-8", errors="replace")


def _trailing_comma(text: str, comma: int, end: int) -> json.JSONDecodeError:
    """The standard library's error for the list's last ``,`` (at ``comma``) before its ``]``
    (at ``end``): Python 3.13 names it at the comma, earlier versions expect a value at the
    ``]``. The same few characters are decoded to learn which, then placed in ``text``."""
    try:
        json.loads("[0" + text[comma:end + 1])
    except json.JSONDecodeError as exc:
        return json.JSONDecodeError(exc.msg, text, comma + exc.pos - 2)
    raise AssertionError("a list ending in a comma was read")  # pragma: no cover
