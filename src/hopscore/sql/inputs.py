"""Reading ``hopscore sql-match`` input lines: every line becomes a value or a located error.

Whatever a line holds, reading it never raises and never holds more than a bounded amount of
memory: invalid UTF-8, invalid JSON, nesting deeper than Python reads, an integer of thousands
of digits, a NUL byte or a line longer than :data:`MAX_LINE_BYTES` each give an
:class:`~hopscore.errors.InputError` naming the file and line (a too-long line is skipped in
chunks, never read whole). Each line also carries the SHA-256 of its bytes, the content part of
its resume key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import InputError, Location
from hopscore.files.io import open_binary, parse_json_line

#: Longest input line read (bytes); a longer one is an ``invalid_input`` row.
MAX_LINE_BYTES = 32 * 1024 * 1024
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class InputLine:
    """One non-blank input line: where it is, the SHA-256 of its bytes, and its JSON value
    (or the :class:`InputError` that says why it has none)."""

    where: Location
    digest: str
    value: Any

    @property
    def line(self) -> int:
        return self.where.line or 0


def _too_long(where: Location, size: int, limit: int) -> InputError:
    mib = 1024 * 1024
    shown = f"{limit // mib} MiB" if limit % mib == 0 else f"{limit:,} bytes"
    return InputError(where, f"line is longer than {shown} ({size:,} bytes); it is not read")


def read_lines(path: Path, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[InputLine]:
    """Every non-blank line of ``path`` in order (see the module docstring); blank lines are
    skipped but counted, so line numbers are the file's."""
    with open_binary(path) as handle:
        number = 0
        while True:
            raw = handle.readline(max_line_bytes + 1)
            if not raw:
                return
            number += 1
            where = Location(str(path), line=number)
            if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
                digest = hashlib.sha256(raw)
                size = len(raw)
                while True:  # skip the rest of the line without keeping it
                    chunk = handle.readline(_CHUNK)
                    if not chunk:
                        break
                    digest.update(chunk)
                    size += len(chunk)
                    if chunk.endswith(b"\n"):
                        break
                yield InputLine(where, digest.hexdigest(), _too_long(where, size, max_line_bytes))
                continue
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            digest_text = hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()
            yield InputLine(where, digest_text, parse_line(raw, where))


def parse_line(raw: bytes, where: Location) -> Any:
    """The JSON value of one line, or the located :class:`InputError` (returned, not raised)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InputError(where, f"not valid UTF-8 (byte {exc.start + 1})")
    try:
        return parse_json_line(text, where)
    except InputError as exc:
        return exc
