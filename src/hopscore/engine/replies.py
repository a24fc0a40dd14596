"""What the server behind an (endpoint, model) says of itself in every reply: the reply's
``model`` and ``system_fingerprint`` (OpenAI's backend configuration; llama.cpp's build).

The response cache (:mod:`hopscore.engine.cache`) keeps, per endpoint and model, what the
latest fresh reply said (table ``replies``). A cached reply is reused only when its own body
says the same (a cache in which nothing was recorded yet reuses everything). When a fresh reply
says another thing than the replies cached before (the recorded one, else the first one this
process reused), a warning says so once, naming the URL and both, and the replies cached under
the old one are not reused from then on, in this process and every later one.

All of it is held in memory (loaded once per scope on a cache thread): a lookup or a write
costs a comparison, not a query.
"""

from __future__ import annotations

import sqlite3
import threading

from hopscore.engine.types import ChatResponse

#: (endpoint, model) of a request
Scope = tuple[str, str]
#: a reply's (model, system_fingerprint)
ReplyId = tuple[str | None, str | None]
#: the old and the new identity of a scope whose replies changed
Change = tuple[Scope, ReplyId, ReplyId]


def reply_id(response: ChatResponse) -> ReplyId:
    fingerprint = response.raw.get("system_fingerprint")
    return response.model, fingerprint if isinstance(fingerprint, str) else None


def describe(identity: ReplyId) -> str:
    model, fingerprint = identity
    return f"model {model or 'not given'}, system_fingerprint {fingerprint or 'not given'}"


def change_warning(change: Change, path: object) -> str:
    (endpoint, model), old, new = change
    return (f"warning: {endpoint} now answers requests for {model} with {describe(new)}; the "
            f"replies cached in {path} were made with {describe(old)}: those are not reused "
            "from now on, their requests are sent again")


class ReplyIdentities:
    """The latest reply identity of each scope, what was reused, and what is to be saved."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: scope -> what its latest fresh reply said (None: nothing recorded); loaded scopes only
        self._latest: dict[Scope, ReplyId | None] = {}
        #: scope -> the identity of the first cached reply this process reused
        self._reused: dict[Scope, ReplyId] = {}
        #: scope -> identity to write to the table with the next write
        self._dirty: dict[Scope, ReplyId] = {}
        self._warned: set[Scope] = set()

    def loaded(self, scope: Scope) -> bool:
        return scope in self._latest

    def load(self, db: sqlite3.Connection, scope: Scope) -> None:
        """Read what was recorded for ``scope`` (once per process; on a cache thread)."""
        if scope in self._latest:
            return
        try:
            row = db.execute("SELECT reply_model, fingerprint FROM replies WHERE endpoint = ? "
                             "AND model = ?", scope).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            row = None
        with self._lock:
            self._latest.setdefault(scope, (row[0], row[1]) if row else None)

    def reusable(self, scope: Scope, response: ChatResponse) -> bool:
        """Whether a cached reply of ``scope`` was made with what the server says now."""
        identity = reply_id(response)
        with self._lock:
            latest = self._latest.get(scope)
            if latest is not None and identity != latest:
                return False
            self._reused.setdefault(scope, identity)
            return True

    def fresh(self, scope: Scope, response: ChatResponse) -> Change | None:
        """Note a fresh reply of a loaded ``scope``; the change to warn of, the first time the
        server says another thing than its cached replies were made with."""
        identity = reply_id(response)
        with self._lock:
            latest = self._latest.get(scope)
            if latest == identity:
                return None
            old = latest if latest is not None else self._reused.get(scope)
            self._latest[scope] = self._dirty[scope] = identity
            if old is None or old == identity or scope in self._warned:
                return None
            self._warned.add(scope)
        return scope, old, identity

    def save(self, db: sqlite3.Connection) -> None:
        """Write what changed (in the caller's transaction, on the writer thread)."""
        with self._lock:
            dirty, self._dirty = self._dirty, {}
        if not dirty:
            return
        db.execute("CREATE TABLE IF NOT EXISTS replies (endpoint TEXT NOT NULL, model TEXT NOT "
                   "NULL, reply_model TEXT, fingerprint TEXT, PRIMARY KEY (endpoint, model))")
        db.executemany("INSERT OR REPLACE INTO replies (endpoint, model, reply_model, "
                       "fingerprint) VALUES (?, ?, ?, ?)",
                       [(*scope, *identity) for scope, identity in dirty.items()])
