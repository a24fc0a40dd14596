"""A persistent response cache: SQLite, keyed by the request's cache key.

Only successful responses are stored (a failure is never cached, so a re-run retries it). The
database runs in WAL mode with a busy timeout, so several processes may share one cache file;
inside one process the engine calls it from the event-loop thread only.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from hopscore.engine.types import ChatResponse
from hopscore.errors import HopscoreError

DEFAULT_CACHE_FILE = "responses.sqlite"


def default_cache_dir() -> Path:
    """``$HOPSCORE_CACHE_DIR``, else ``$XDG_CACHE_HOME/hopscore``, else ``~/.cache/hopscore``."""
    explicit = os.environ.get("HOPSCORE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "hopscore"


class ResponseCache:
    """Maps a request cache key to the response body it got."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS responses ("
                " key TEXT PRIMARY KEY, body TEXT NOT NULL, latency_s REAL, created REAL NOT NULL)"
            )
        except (OSError, sqlite3.Error) as exc:
            raise HopscoreError(f"cannot open the response cache {path}: {exc}") from None

    @classmethod
    def in_dir(cls, directory: Path) -> ResponseCache:
        return cls(directory / DEFAULT_CACHE_FILE)

    def get(self, key: str) -> tuple[ChatResponse, float | None] | None:
        """The cached response and the latency it had when it was fetched, or None."""
        row = self._db.execute(
            "SELECT body, latency_s FROM responses WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        try:
            body = json.loads(row[0])
            return ChatResponse.from_body(body), row[1]
        except Exception:
            # A corrupt entry is a miss; it is overwritten by the next successful fetch.
            return None

    def put(self, key: str, response: ChatResponse, latency_s: float | None) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO responses (key, body, latency_s, created) VALUES (?, ?, ?, ?)",
            (key, json.dumps(response.raw, ensure_ascii=False), latency_s, time.time()),
        )

    def __len__(self) -> int:
        count: int = self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        return count

    def close(self) -> None:
        self._db.close()

