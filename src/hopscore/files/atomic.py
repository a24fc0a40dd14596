"""Writing files atomically: a temporary file beside the target, then a rename.

Readers never see half a file; the result gets the mode a new file would get (the umask).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from hopscore.files.jsontext import dumps_encodable

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
