"""Private, checkpointed copies of SQLite databases with a WAL or journal file beside them."""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path


class Snapshots:
    """Private, checkpointed copies of databases that SQLite would read with a side file.

    A worker opens databases ``immutable``, which reads the main file alone. When a database has
    a non-empty ``-wal`` (committed transactions not yet checkpointed) or ``-journal`` (a write
    interrupted mid-way) beside it, that reading differs from what SQLite shows any other
    reader. Such a database is copied once per executor, with its side files, into a private
    temporary folder; the copy is checkpointed (WAL) or rolled back (journal) there and put in
    rollback-journal mode, and the workers read the copy. Nothing is ever created or changed
    beside the original (no ``-shm``, no checkpoint); the copies are removed on close.
    """

    SIDE_FILES = ("-wal", "-journal")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: str | None = None
        self._copies: dict[Path, Path] = {}

    @staticmethod
    def _state(path: Path) -> list[tuple[int, int] | None]:
        state: list[tuple[int, int] | None] = []
        for suffix in ("", *Snapshots.SIDE_FILES):
            try:
                info = os.stat(str(path) + suffix)
                state.append((info.st_size, info.st_mtime_ns))
            except OSError:
                state.append(None)
        return state

    def view(self, path: Path) -> Path:
        """The file a worker should open for ``path`` (OSError, sqlite3.Error on failure)."""
        sides = [suffix for suffix in self.SIDE_FILES
                 if os.path.isfile(str(path) + suffix) and os.path.getsize(str(path) + suffix)]
        if not sides:
            return path
        with self._lock:
            if path in self._copies:
                return self._copies[path]
            if self._folder is None:
                self._folder = tempfile.mkdtemp(prefix="hopscore-sqlite-")
            target = Path(self._folder) / f"{len(self._copies)}.sqlite"
            for _attempt in range(5):  # a writer may be at work: copy until nothing moved
                before = self._state(path)
                shutil.copyfile(path, target)
                for suffix in self.SIDE_FILES:
                    source = Path(str(path) + suffix)
                    if source.is_file():
                        shutil.copyfile(source, str(target) + suffix)
                if self._state(path) == before:
                    break
            conn = sqlite3.connect(str(target), isolation_level=None)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # rolls back
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                conn.execute("PRAGMA journal_mode = DELETE").fetchall()
            finally:
                conn.close()
            self._copies[path] = target
            return target

    def close(self) -> None:
        with self._lock:
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
            self._copies.clear()


