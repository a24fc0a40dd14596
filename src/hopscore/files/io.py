"""Reading and writing the files hopscore deals with, with located errors.

Readers never return raw exceptions to the user: malformed JSON, a missing file or a record of
the wrong shape becomes an :class:`~hopscore.errors.InputError` naming the file and the line
(JSON Lines, CSV) or the record (JSON list or object).
"""

from __future__ import annotations

import builtins
import csv
import gc
import json
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

import msgspec

from hopscore.errors import InputError, Location
from hopscore.files.jsontext import dumps_encodable

_MISSING: Any = object()


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


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
        if gc.get_freeze_count() == 0:  # never undo a freeze made by someone else
            gc.freeze()
            gc.unfreeze()
        gc.enable()


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


_UMASK: int | None = None


def umask() -> int:
    """The process's umask, read without changing it (Linux: /proc), else set and restored."""
    global _UMASK
    if _UMASK is None:
        try:
            with open("/proc/self/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("Umask:"):
                        _UMASK = int(line.split()[1], 8)
                        break
        except (OSError, ValueError):
            pass
        if _UMASK is None:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def temp_beside(path: Path) -> tuple[int, str]:
    """A temporary file next to ``path`` for an atomic replace, with the mode a new file would
    get (``mkstemp`` makes it 0600, which the rename would give the result)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with suppress(OSError):
        os.fchmod(fd, 0o666 & ~umask())
    return fd, tmp


def write_json_atomic(path: Path | str, value: Any, *, indent: int | None = 2) -> None:
    """Write JSON to ``path`` via a temporary file and a rename (readers never see half a file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_beside(p)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumps_encodable(value, indent=indent))
            handle.write("\n")
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write text to ``path`` via a temporary file and a rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_beside(p)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl_atomic(path: Path | str, rows: Iterable[Any]) -> None:
    """Write one JSON value per line, atomically."""
    write_text_atomic(path, "".join(
        dumps_encodable(r) + "\n" for r in rows))


class Fields:
    """Typed, located access to the fields of one JSON object.

    Every getter raises :class:`InputError` naming the file, line/record and field when the value
    is absent or of the wrong type, so loaders read like a schema.
    """

    __slots__ = ("_place", "_where", "data")

    def __init__(self, data: Any, where: Location) -> None:
        self.data: builtins.dict[builtins.str, Any] = data
        self._where: Location | builtins.str = where
        self._place: builtins.str | builtins.int = 0
        if not isinstance(data, dict):
            raise InputError(where, f"expected a JSON object, got {json_type(data)}")

    # The records of a large file are many; their Locations are built only when an error needs one.

    @classmethod
    def at_line(cls, data: Any, path: builtins.str, line: builtins.int) -> Fields:
        """The record on line ``line`` of a JSON Lines file ``path``."""
        return cls._lazy(data, path, line)

    @classmethod
    def at_index(cls, data: Any, path: builtins.str, index: builtins.int) -> Fields:
        """Record ``[index]`` of the JSON list in ``path``."""
        return cls._lazy(data, path, -1 - index)

    @classmethod
    def at_key(cls, data: Any, path: builtins.str, key: builtins.str) -> Fields:
        """The record under ``key`` of the JSON object in ``path``."""
        return cls._lazy(data, path, key)

    @classmethod
    def _lazy(cls, data: Any, path: builtins.str, place: builtins.str | builtins.int) -> Fields:
        record = cls.__new__(cls)
        record.data = data
        record._where = path
        record._place = place  # a key; a line number (> 0); or -1 - index
        if not isinstance(data, dict):
            raise InputError(record.where, f"expected a JSON object, got {json_type(data)}")
        return record

    @property
    def where(self) -> Location:
        where, place = self._where, self._place
        if isinstance(where, Location):
            return where
        if isinstance(place, builtins.str):
            located = Location(where, key=place)
        elif place > 0:
            located = Location(where, line=place)
        else:
            located = Location(where, index=-1 - place)
        self._where = located
        return located

    def error(self, field: builtins.str, message: builtins.str) -> InputError:
        return InputError(self.where, message, field=field)

    def has(self, name: builtins.str) -> builtins.bool:
        return name in self.data

    def raw(self, name: builtins.str, default: Any = _MISSING) -> Any:
        if name in self.data:
            return self.data[name]
        if default is _MISSING:
            raise self.error(name, "missing")
        return default

    def _typed(
        self,
        name: builtins.str,
        types: tuple[type, ...],
        label: builtins.str,
        default: Any,
        nullable: builtins.bool,
    ) -> Any:
        value = self.raw(name, default)
        if value is default and name not in self.data:
            return value
        if value is None and nullable:
            return None
        if isinstance(value, bool) and bool not in types:
            raise self.error(name, f"expected {label}, got {json_type(value)}")
        if not isinstance(value, types):
            raise self.error(name, f"expected {label}, got {json_type(value)}")
        return value

    def str(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        value = self.data.get(name, _MISSING)
        if type(value) is str:  # the common case, without the generic checks
            return value
        return self._typed(name, (str,), "a string", default, nullable)

    def int(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._typed(name, (int,), "an integer", default, nullable)

    def bool(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._typed(name, (bool,), "a boolean", default, nullable)

    def list(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._container(name, list, "a list", default, nullable)

    def dict(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._container(name, dict, "an object", default, nullable)

    def _container(self, name: builtins.str, kind: type, word: builtins.str, default: Any,
                   nullable: builtins.bool) -> Any:
        value = self.data.get(name, _MISSING)
        if type(value) is kind:  # the common case, without the generic checks
            return value
        return self._typed(name, (kind,), word, default, nullable)

    def id(self, name: builtins.str = "id") -> builtins.str:
        """An example id: a non-empty string, or an integer (turned into its decimal string)."""
        value = self.raw(name)
        if type(value) is str and value and not value[0].isspace():  # the common case
            return value
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.error(name, f"expected a string id, got {json_type(value)}")
        text = str(value)
        if not text.strip():
            raise self.error(name, "id is empty")
        return text
