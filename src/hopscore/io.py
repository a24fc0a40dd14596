"""Reading and writing the files hopscore deals with, with located errors.

Readers never return raw exceptions to the user: malformed JSON, a missing file or a record of
the wrong shape becomes an :class:`~hopscore.errors.InputError` naming the file and the line
(JSON Lines, CSV) or the record (JSON list or object).
"""

from __future__ import annotations

import builtins
import csv
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from hopscore.errors import InputError, Location

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


def read_text(path: Path | str) -> str:
    """Read a UTF-8 text file (a leading BOM is ignored)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(p, "file not found") from None
    except IsADirectoryError:
        raise InputError(p, "is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(p, f"cannot read: {exc.strerror}") from None
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
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        _json_error(p, text, exc)
    except _DuplicateKey as exc:
        raise InputError(p, f"duplicate key {exc.args[0]!r} in one JSON object") from None


def iter_jsonl(path: Path | str) -> Iterator[tuple[Location, Any]]:
    """Yield ``(location, value)`` for every non-blank line of a JSON Lines file, streaming."""
    p = Path(path)
    try:
        handle = p.open("rb")
    except FileNotFoundError:
        raise InputError(p, "file not found") from None
    except IsADirectoryError:
        raise InputError(p, "is a directory, expected a file") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            where = Location(str(p), line=number)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(where, "not valid UTF-8") from None
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            yield where, value


def sniff_json_kind(path: Path | str) -> str:
    """Tell a JSON document (``"json"``) from JSON Lines (``"jsonl"``) by content, not by name.

    A file is JSON Lines when its first non-blank line is a complete JSON object and more
    non-blank text follows it.
    """
    p = Path(path)
    text = read_text(p)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(p, "file is empty")
    if stripped[0] != "{":
        return "json"
    first, _, rest = stripped.partition("\n")
    if not rest.strip():
        return "json"
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return "json"
    return "jsonl"


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
    reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(p, "file is empty, expected a header line") from None
    header = [h.strip() for h in header]
    for row in reader:
        line = reader.line_num
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


def write_json_atomic(path: Path | str, value: Any, *, indent: int | None = 2) -> None:
    """Write JSON to ``path`` via a temporary file and a rename (readers never see half a file)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, ensure_ascii=False, indent=indent)
            handle.write("\n")
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Fields:
    """Typed, located access to the fields of one JSON object.

    Every getter raises :class:`InputError` naming the file, line/record and field when the value
    is absent or of the wrong type, so loaders read like a schema.
    """

    __slots__ = ("data", "where")

    def __init__(self, data: Any, where: Location) -> None:
        if not isinstance(data, dict):
            raise InputError(where, f"expected a JSON object, got {json_type(data)}")
        self.data: builtins.dict[builtins.str, Any] = data
        self.where = where

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
        return self._typed(name, (list,), "a list", default, nullable)

    def dict(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._typed(name, (dict,), "an object", default, nullable)

    def id(self, name: builtins.str = "id") -> builtins.str:
        """An example id: a non-empty string, or an integer (turned into its decimal string)."""
        value = self.raw(name)
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.error(name, f"expected a string id, got {json_type(value)}")
        text = str(value)
        if not text.strip():
            raise self.error(name, "id is empty")
        return text
