"""Resume keys of ``hopscore sql-match`` verdicts: the row's content plus everything that can
change its verdict.

A verdict row is reused by a later run only when its key is the one this run computes for the
same input line. The key hashes:

* the settings fingerprint (:func:`settings_fingerprint`): the comparison version, compare mode,
  extraction, row cap, timeout, memory limit, database template and root;
* the identity of the record's database file (:func:`DatabaseIdentity`): its path, size,
  modification time and inode, and the same of its ``-wal`` and ``-journal`` files, so a database
  that changed (a WAL that grew, a file replaced) is graded again;
* the line number and the SHA-256 of the line's bytes, so an edited line (a gold query fixed in
  place) is graded again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

#: Bumped whenever a change to extraction, execution or comparison can change a verdict.
COMPARISON_VERSION = "2"
#: The side files whose content SQLite reads together with a database.
SIDE_FILES = ("-wal", "-journal")


def settings_fingerprint(settings: dict[str, Any]) -> str:
    """A short hash of ``settings`` (with :data:`COMPARISON_VERSION`)."""
    text = json.dumps({"version": COMPARISON_VERSION, **settings}, sort_keys=True,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev]


def file_identity(path: Path) -> str:
    """What a database's content depends on: stat of the file and of its side files."""
    text = str(path)
    parts = {"path": text, "db": _stat(text)}
    for suffix in SIDE_FILES:
        parts[suffix] = _stat(text + suffix)
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8", "surrogatepass")
                          ).hexdigest()[:16]


class DatabaseIdentity:
    """:func:`file_identity` of each database, taken once per run (thread-safe)."""

    def __init__(self) -> None:
        self._known: dict[Path, str] = {}
        self._lock = threading.Lock()

    def __call__(self, path: Path | None) -> str:
        if path is None:
            return ""
        with self._lock:
            if path not in self._known:
                self._known[path] = file_identity(path)
            return self._known[path]


def row_key(settings: str, database: str, line: int, digest: str) -> str:
    """The resume key of one input line's verdict."""
    text = f"{settings}|{database}|{line}|{digest}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
