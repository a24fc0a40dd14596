"""Reading the files hopscore deals with, with located errors, and writing JSON text.

Readers never return raw exceptions to the user: malformed JSON, a missing file or a record of
the wrong shape becomes an :class:`~hopscore.errors.InputError` naming the file and the line
(JSON Lines, CSV) or the record (JSON list or object). The fields of one record are read through
:class:`hopscore.files.fields.Fields`; files are written whole by :mod:`hopscore.files.atomic`.
"""

from __future__ import annotations

import csv
import gc
import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import msgspec

from hopscore.errors import InputError, Location
from hopscore.files.jsontext import dumps_encodable


def _unreadable(p: Path, exc: OSError, expected: str) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(p, "file not found")
    if isinstance(exc, IsADirectoryError):
        return InputError(p, f"is a directory, expected {expected}")
    return InputError(p, f"cannot read: {exc.strerror}")


def read_bytes(path: Path | str, expected: str = "a file") -> bytes:
    """A file's bytes; a missing or unreadable file (or a directory) is a located InputError."""
    p = Path(path)
    try:
        return p.read_bytes()
    except OSError as exc:
        raise _unreadable(p, exc, expected) from None


def open_binary(path: Path | str, expected: str = "a file") -> BinaryIO:
    """A file opened for binary reading, with :func:`read_bytes`'s errors."""
    p = Path(path)
    try:
        return p.open("rb")
    except OSError as exc:
        raise _unreadable(p, exc, expected) from None


def read_text(path: Path | str) -> str:
    """Read a UTF-8 text file (a leading BOM is ignored)."""
    p = Path(path)
    data = read_bytes(p)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(Location(str(p), line=line), "not valid UTF-8") from None


def _json_error(path: Path, text: str, exc: json.JSONDecodeError, line_offset: int = 0) -> NoReturn:
    where = Location(str(path), line=exc.lineno + line_offset)
    raise InputError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


class _DuplicateKey(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def load_json(path: Path | str) -> Any:
    """Parse a whole JSON document; a key repeated inside one object is an error, not last-wins."""
    p = Path(path)
    text = read_text(p)
    if not text.strip():
        raise InputError(p, "file is empty, expected JSON")
    try:
        with bulk_load():
            return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        _json_error(p, text, exc)
    except RecursionError:
        raise InputError(p, "invalid JSON: nested too deeply to read") from None
    except _DuplicateKey as exc:
        raise InputError(p, f"duplicate key {exc.args[0]!r} in one JSON object") from None


def iter_jsonl(path: Path | str) -> Iterator[tuple[Location, Any]]:
    """Yield ``(location, value)`` for every non-blank line of a JSON Lines file, streaming."""
    where_path = str(path)
    for number, value in iter_jsonl_numbered(path):
        yield Location(where_path, line=number), value


def iter_jsonl_numbered(path: Path | str) -> Iterator[tuple[int, Any]]:
    """Like :func:`iter_jsonl`, but yield the 1-based line number instead of a location.

    For the hot loops of large files: build a :class:`Location` only when it is needed.
    Lines are parsed with msgspec; a line that it rejects is parsed again with the standard
    library, which either accepts it (``NaN``, integers beyond 64 bits, lone surrogates) or gives
    the error message.
    """
    p = Path(path)
    handle = open_binary(p)
    loads = _DECODER.decode
    decode_error = msgspec.DecodeError
    with handle:
        number = 0
        for raw in handle:
            number += 1
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                value = loads(raw)
            except (decode_error, RecursionError):
                if not raw.strip():
                    continue
                value = _parse_line_slowly(p, number, raw)
            yield number, value


def iter_jsonl_checked(path: Path | str) -> Iterator[tuple[Location, Any]]:
    """Like :func:`iter_jsonl`, but a line that cannot be read is yielded as its
    :class:`InputError` (instead of raised), so a caller can report every bad line."""
    p = Path(path)
    loads = _DECODER.decode
    decode_error = msgspec.DecodeError
    with open_binary(p) as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                value = loads(raw)
            except (decode_error, RecursionError):
                if not raw.strip():
                    continue
                try:
                    value = _parse_line_slowly(p, number, raw)
                except InputError as exc:
                    value = exc
            yield Location(str(p), line=number), value


def _parse_line_slowly(path: Path, number: int, raw: bytes) -> Any:
    where = Location(str(path), line=number)
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(where, f"not valid UTF-8 (byte {exc.start + 1})") from None
    return parse_json_line(line, where)


def parse_json_line(text: str | bytes, where: Location) -> Any:
    """One JSON value from one line; every way it can fail is a located :class:`InputError`:
    invalid JSON, nesting deeper than Python's recursion limit, an integer with more digits
    than Python converts (4,300), invalid UTF-8."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise InputError(where, f"not valid UTF-8 (byte {exc.start + 1})") from None
    except RecursionError:
        raise InputError(where, "invalid JSON: nested too deeply to read") from None
    except ValueError as exc:  # an integer beyond int_max_str_digits
        if "integer string conversion" in str(exc):
            limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
            raise InputError(where, f"invalid JSON: an integer has more than {limit:,} digits"
                             ) from None
        raise InputError(where, f"invalid JSON: {exc}") from None


_DECODER = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


def loads(raw: bytes) -> Any:
    """``json.loads(raw)``: msgspec parses it (about twice as fast), and what msgspec rejects is
    parsed by the standard library, which accepts it (``NaN``, integers beyond 64 bits, lone
    surrogates) or raises its own error."""
    try:
        return _DECODER.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return json.loads(raw)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``json.dumps`` with UTF-8 characters unescaped that is always encodable as UTF-8."""
    separators = (",", ":") if indent is None else None
    return dumps_encodable(value, indent=indent, separators=separators)


def json_line(value: Any) -> str:
    """One JSON Lines line (with its newline): compact, UTF-8 characters unescaped.

    msgspec writes it; a value it cannot serialise (or a string holding a lone surrogate, which
    it refuses) falls back to the standard library, with lone surrogates escaped.
    """
    try:
        return _ENCODER.encode(value).decode("utf-8") + "\n"
    except (TypeError, UnicodeEncodeError):
        return json_text(value) + "\n"


def json_bytes(value: Any) -> bytes:
    """:func:`json_line`'s text as UTF-8, without the newline (the same bytes)."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, UnicodeEncodeError):
        return json_text(value).encode("utf-8")


@contextmanager
def bulk_load() -> Iterator[None]:
    """Pause the cyclic garbage collector while large input files are parsed into records.

    Parsing creates millions of container objects and no reference cycles, so collections
    during it only cost time (about half of the parse). On exit what was built goes straight to
    the oldest generation (``gc.freeze`` then ``gc.unfreeze``, two list splices), so the young
    collections that follow do not each walk it again; it is collected as usual from there.
    Nested uses are fine: only the outermost one acts.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not _frozen_by_another():  # never undo a freeze made by someone else
            gc.freeze()
            gc.unfreeze()
        gc.enable()


#: objects in the permanent generation when this module was loaded, taken for the
#: interpreter's own: CPython 3.12 keeps a few hundred there (3.11 and 3.13 none), and puts
#: them back after ``gc.unfreeze`` at its next full collection; read as another's freeze, they
#: turned :func:`bulk_load` and :func:`frozen_heap` off on 3.12. A program that freezes its
#: heap before it imports hopscore has that freeze taken for the interpreter's too.
_at_start = gc.get_freeze_count()


def _frozen_by_another() -> bool:
    return gc.get_freeze_count() > _at_start


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep the objects that exist now out of the garbage collector's walks for a while.

    A batch of requests starts with everything it reads already built (the modules, the
    prepared prompts or input rows: hundreds of thousands of objects), and each collection of
    the oldest generation during the batch walked them all again (a sixth of a 4,000-row run's
    CPU). They are put in the permanent generation (``gc.freeze``) and given back on exit
    (``gc.unfreeze``: the oldest generation). Collections go on for what the batch makes, so
    its reference cycles are freed, but the youngest generation is collected every
    :data:`YOUNG_THRESHOLD` objects instead of 700: the hundreds of requests in flight survive
    each young collection and were walked again by every one of them (a collection that finds
    little to free costs what it walks). Nothing is done when the collector is off or
    something else holds a freeze; nested uses are fine.
    """
    if not gc.isenabled() or _frozen_by_another():
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


#: objects allocated (net) between two collections of the youngest generation in a batch
YOUNG_THRESHOLD = 10_000


def sniff_json_kind(path: Path | str) -> str:
    """Tell a JSON document (``"json"``) from JSON Lines (``"jsonl"``) by content, not by name.

    A file is JSON Lines when its first non-blank line is a complete JSON object and more
    non-blank text follows it. Only the start of the file is decoded: a document that starts
    with anything but ``{`` is JSON at once, and a one-line document (however long) is scanned
    for its end of line, never decoded, since no text follows it.
    """
    p = Path(path)
    with open_binary(p) as handle:
        block = handle.read(_SNIFF_BLOCK)
        if block.startswith(b"\xef\xbb\xbf"):
            block = block[3:]
        start = 0
        line = 1
        while True:  # the first non-blank byte, counting the lines before it
            stripped = block.lstrip()
            if stripped:
                break
            line += block.count(b"\n")
            block = handle.read(_SNIFF_BLOCK)
            if not block:
                raise InputError(p, "file is empty")
        start = len(block) - len(stripped)
        line += block.count(b"\n", 0, start)
        if stripped[:1] != b"{":
            _check_utf8(p, line, stripped[:4096], cut=len(stripped) > 4096)
            return "json"
        first = [stripped]
        while True:  # the rest of the first line, then whether non-blank text follows it
            end = first[-1].find(b"\n")
            if end >= 0:
                rest = first[-1][end + 1:]
                first[-1] = first[-1][:end]
                break
            block = handle.read(_SNIFF_BLOCK)
            if not block:
                return "json"
            first.append(block)
        while not rest.strip():
            rest = handle.read(_SNIFF_BLOCK)
            if not rest:
                return "json"
    text = b"".join(first)
    _check_utf8(p, line, text, cut=False)
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return "json"
    return "jsonl"


_SNIFF_BLOCK = 1 << 16


def _check_utf8(path: Path, line: int, data: bytes, *, cut: bool) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not (cut and exc.start >= len(data) - 3):  # not a character cut by the sample's end
            raise InputError(Location(str(path), line=line), "not valid UTF-8") from None


def csv_rows(
    path: Path | str, lines: Iterable[str], delimiter: str = ","
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of CSV text. A cell may be as long as the file (the csv
    module's default limit is 131,072 characters); text csv cannot read is an error naming
    the file and line."""
    limit = sys.maxsize
    while csv.field_size_limit() < limit:
        try:
            csv.field_size_limit(limit)
        except OverflowError:  # a C long is 32 bits (Windows)
            limit //= 2
    reader = csv.reader(lines, delimiter=delimiter)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(Location(str(path), line=reader.line_num + 1),
                             f"not valid CSV: {exc}") from None
        yield reader.line_num, row


def iter_delimited(
    path: Path | str, delimiter: str | None = None
) -> Iterator[tuple[Location, dict[str, str]]]:
    """Yield ``(location, row)`` for a CSV or TSV file with a header line.

    The delimiter is taken from the extension (``.tsv`` means tab) unless given.
    """
    p = Path(path)
    if delimiter is None:
        delimiter = "\t" if p.suffix.lower() in {".tsv", ".tab"} else ","
    text = read_text(p)
    rows = csv_rows(p, text.splitlines(keepends=True), delimiter)
    first = next(rows, None)
    if first is None:
        raise InputError(p, "file is empty, expected a header line")
    header = [h.strip() for h in first[1]]
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise InputError(
                Location(str(p), line=line), f"{len(row)} cells but the header has {len(header)}"
            )
        yield (
            Location(str(p), line=line),
            dict(zip(header, row + [""] * (len(header) - len(row)), strict=True)),
        )
