"""A persistent response cache: SQLite, keyed by the request's cache key, safe to share.

Only successful responses are stored (a failure is never cached, so a re-run retries it). The
default file (``~/.cache/hopscore/responses.sqlite``) is shared by every run on the machine, so:

* it is read and written off the event loop, on two threads of its own (one reader, one
  writer, each with its own connection): a lock held by another process never stalls requests;
* lookups made in the same turn of the event loop go to the reader together (one
  ``SELECT ... IN``), and writes are gathered for up to :data:`WRITE_DELAY_S` (or
  :data:`WRITE_BATCH` of them) into one transaction: 1,000 replies cost about 50 hand-offs
  to the writer instead of one per reply or two, each of which made the event loop wait for the
  interpreter lock. A process killed meanwhile loses those last writes to the cache only (the
  results file, written per row, is what a resumed run reads);
* the database is in WAL mode (readers never wait for a writer), every statement has a short
  busy timeout, and every write is one short transaction;
* on any failure (locked beyond the busy timeout, a table of another schema, a corrupt or
  foreign file, a read-only location, a full disk) it warns once, naming the file and the
  reason, and the run goes on without a cache. A cache problem never fails a run.

A cached reply is reused only while the server behind its endpoint and model says the same of
itself: in its model listing and ``/props`` (:meth:`ResponseCache.note_server`) and in the
``model`` and ``system_fingerprint`` of its fresh replies (:mod:`hopscore.engine.replies`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from hopscore.engine.replies import ReplyIdentities, change_warning
from hopscore.engine.replies import Scope as Scope
from hopscore.engine.types import ChatResponse
from hopscore.files.cachedir import default_cache_dir as default_cache_dir

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_CACHE_FILE = "responses.sqlite"
#: seconds a statement waits for another process's lock before the cache is given up
BUSY_TIMEOUT_S = 5.0
COLUMNS = ("key", "body", "latency_s", "created")
#: seconds a write waits for others to share its transaction
WRITE_DELAY_S = 0.05
#: ... unless this many are waiting
WRITE_BATCH = 256

Warn = Callable[[str], None]
Lookup = asyncio.Future[tuple[ChatResponse, float | None] | None]
#: a write: key, reply, latency, and the (endpoint, model) it came from (None: not known)
Entry = tuple[str, ChatResponse, float | None, Scope | None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class CacheUnusable(Exception):
    """The cache file cannot be used (the reason is the message)."""


class ResponseCache:
    """Maps a request cache key to the response body it got.

    :meth:`aget` and :meth:`put` are what the engine calls (from the event loop); :meth:`get`
    and :meth:`put_sync` do the same synchronously (tests, tools). After the first failure
    :attr:`disabled` is true and every call is a miss / a no-op.
    """

    def __init__(self, path: Path, *, warn: Warn | None = None,
                 busy_timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self._warn = warn or _stderr
        self.disabled = False
        self.reason: str | None = None
        self._lock = threading.Lock()
        self._local = threading.local()
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="hopscore-cache-read")
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="hopscore-cache-write")
        self._schema_checked = False
        self._closed = False
        # what the event loop asked for in this turn, handed to the threads together
        self._reads: list[tuple[str, Scope | None, Lookup]] = []
        self._writes: list[Entry] = []
        self._writes_scheduled = False
        # queued or in-flight writes, by key, until committed: this process reads its own
        # writes at once, however long they wait for their transaction
        self._pending: dict[str, tuple[ChatResponse, float | None]] = {}
        #: (endpoint, model) -> replies cached before this time are not reused
        self._since: dict[tuple[str, str], float] = {}
        #: what fresh replies said of the server, per (endpoint, model)
        self.replies = ReplyIdentities()

    @classmethod
    def in_dir(cls, directory: Path, *, warn: Warn | None = None) -> ResponseCache:
        return cls(directory / DEFAULT_CACHE_FILE, warn=warn)

    # -- failure ---------------------------------------------------------------------------

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            if self.disabled:
                return
            self.disabled = True
            self.reason = _describe(exc)
        self._warn(f"warning: the response cache {self.path} cannot be used ({self.reason}); "
                   "this run goes on without it: responses are neither read from it nor saved")

    # -- connections (one per thread) ------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        if self.path.is_dir():
            raise CacheUnusable("it is a directory")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None,
                             check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            with self._lock:
                first = not self._schema_checked
            if first:
                self._prepare(db)
                with self._lock:
                    self._schema_checked = True
            db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            db.close()
            raise
        self._local.db = db
        return db

    def _prepare(self, db: sqlite3.Connection) -> None:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if str(mode).lower() != "wal":
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise CacheUnusable(f"it cannot be put in WAL mode (journal mode {mode})")
        columns = [row[1] for row in db.execute("PRAGMA table_info(responses)")]
        if not columns:
            db.execute("CREATE TABLE IF NOT EXISTS responses ("
                       " key TEXT PRIMARY KEY, body TEXT NOT NULL, latency_s REAL,"
                       " created REAL NOT NULL)")
        elif tuple(columns) != COLUMNS:
            raise CacheUnusable(
                f"its responses table has another schema (columns {', '.join(columns)}; "
                f"expected {', '.join(COLUMNS)}): another tool or version wrote it")

    # -- synchronous operations (run on the cache threads) ---------------------------------

    def get(self, key: str, scope: Scope | None = None
            ) -> tuple[ChatResponse, float | None] | None:
        """The cached response and the latency it had when it was fetched, or None."""
        with self._lock:
            pending = self._pending.get(key)
        return pending if pending is not None else self._get_many([key], [scope]).get(key)

    def put_sync(self, key: str, response: ChatResponse, latency_s: float | None,
                 scope: Scope | None = None) -> None:
        self._put_many([(key, response, latency_s, scope)])

    def _get_many(self, keys: Sequence[str], scopes: Sequence[Scope | None] = ()
                  ) -> dict[str, tuple[ChatResponse, float | None]]:
        """The cached responses of those of ``keys`` that have one (``scopes``: the (endpoint,
        model) of each key, whose replies from before the server's last change are left)."""
        found: dict[str, tuple[ChatResponse, float | None]] = {}
        if self.disabled:
            return found
        unique = list(dict.fromkeys(keys))
        rows: list[tuple[str, str, float | None, float]] = []
        try:
            db = self._db()
            for start in range(0, len(unique), 500):
                chunk = unique[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows.extend(db.execute(
                    f"SELECT key, body, latency_s, created FROM responses WHERE key IN ({marks})",
                    chunk).fetchall())
            scope_of = {key: scope for key, scope in zip(keys, scopes, strict=False)
                        if scope is not None}
            since = {key: self._since_of(db, scope) for key, scope in scope_of.items()}
            for scope in set(scope_of.values()):
                self.replies.load(db, scope)
        except Exception as exc:
            self._fail(exc)
            return found
        for key, body, latency, created in rows:
            if created < since.get(key, 0.0):
                continue  # made by the server before its model or template changed
            try:
                response = ChatResponse.from_body(json.loads(body))
            except Exception:
                continue  # a corrupt entry is a miss, overwritten by the next fetch
            made_for = scope_of.get(key)
            if made_for is None or self.replies.reusable(made_for, response):
                found[key] = (response, latency)
        return found

    def _since_of(self, db: sqlite3.Connection, scope: Scope) -> float:
        known = self._since.get(scope)
        if known is None:
            try:
                row = db.execute("SELECT since FROM servers WHERE endpoint = ? AND model = ?",
                                 scope).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                row = None
            known = self._since[scope] = float(row[0]) if row else 0.0
        return known

    def note_server(self, endpoint: str, model: str, identity: str) -> bool:
        """Record what the server at ``endpoint`` says about ``model`` (a hash); True when it
        differs from what the cached replies were made with: those are not reused from now
        on (this process, and every later one), and a warning says so once."""
        if self.disabled:
            return False
        try:
            db = self._db()
            db.execute("CREATE TABLE IF NOT EXISTS servers (endpoint TEXT NOT NULL, "
                       "model TEXT NOT NULL, identity TEXT NOT NULL, since REAL NOT NULL, "
                       "PRIMARY KEY (endpoint, model))")
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT identity, since FROM servers WHERE endpoint = ? AND "
                                 "model = ?", (endpoint, model)).fetchone()
                changed = row is not None and row[0] != identity
                since = time.time() if changed else (float(row[1]) if row else 0.0)
                if row is None or changed:
                    db.execute("INSERT OR REPLACE INTO servers (endpoint, model, identity, "
                               "since) VALUES (?, ?, ?, ?)", (endpoint, model, identity, since))
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except Exception as exc:
            self._fail(exc)
            return False
        with self._lock:
            self._since[(endpoint, model)] = since
        if changed:
            self._warn(f"warning: {endpoint} now says another thing about model {model} "
                       f"(its model listing or /props: another model or chat template) than "
                       f"when its replies were cached in {self.path}; those replies are not "
                       "reused, the requests are sent again")
        return changed

    def _put_many(self, entries: Sequence[Entry]) -> None:
        """Store ``entries`` in one transaction."""
        if self.disabled or not entries:
            return
        try:
            self._commit(entries)
        finally:
            with self._lock:  # committed or given up: the database answers from now on
                for key, response, _, _ in entries:
                    if key in self._pending and self._pending[key][0] is response:
                        del self._pending[key]

    def _commit(self, entries: Sequence[Entry]) -> None:
        changes = []
        try:
            now = time.time()
            values = [(key, json.dumps(response.raw, ensure_ascii=False), latency, now)
                      for key, response, latency, _ in entries]
            db = self._db()
            for _, response, _, scope in entries:  # those put() could not compare yet
                if scope is not None:
                    self.replies.load(db, scope)
                    changes.append(self.replies.fresh(scope, response))
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("INSERT OR REPLACE INTO responses (key, body, latency_s, created) "
                               "VALUES (?, ?, ?, ?)", values)
                self.replies.save(db)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except Exception as exc:
            self._fail(exc)
        for change in changes:
            if change is not None:
                self._warn(change_warning(change, self.path))

    # -- what the engine calls -------------------------------------------------------------

    async def aget(self, key: str, scope: Scope | None = None
                   ) -> tuple[ChatResponse, float | None] | None:
        """The cached response of ``key`` (None: a miss; ``scope``: the request's (endpoint,
        model), whose replies from before the server changed are misses). Lookups made in the
        same turn of the event loop are answered by one query on the reader thread."""
        if self.disabled or self._closed:
            return None
        with self._lock:
            pending = self._pending.get(key)
        if pending is not None:
            return pending
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[ChatResponse, float | None] | None] = loop.create_future()
        if not self._reads:
            loop.call_soon(self._send_reads, loop)
        self._reads.append((key, scope, future))
        return await future

    def _send_reads(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._reads = self._reads, []
        try:
            keys = [key for key, _, _ in batch]
            scopes = [scope for _, scope, _ in batch]
            job = self._reader.submit(self._get_many, keys, scopes) if any(scopes) else \
                self._reader.submit(self._get_many, keys)
        except RuntimeError:  # shut down meanwhile
            _answer(batch, {})
            return
        done = asyncio.wrap_future(job, loop=loop)
        done.add_done_callback(
            lambda f: _answer(batch, {} if f.cancelled() or f.exception() else f.result()))

    def put(self, key: str, response: ChatResponse, latency_s: float | None,
            scope: Scope | None = None) -> None:
        """Queue a write; it happens on the writer thread (never blocks the caller). Writes
        queued within :data:`WRITE_DELAY_S` of each other are one transaction. ``scope``: the
        request's (endpoint, model), whose reply identity is followed (:mod:`.replies`)."""
        if self.disabled or self._closed:
            return
        if scope is not None and self.replies.loaded(scope):
            change = self.replies.fresh(scope, response)  # at once: the next lookup knows
            if change is not None:
                self._warn(change_warning(change, self.path))
        with self._lock:
            self._writes.append((key, response, latency_s, scope))
            self._pending[key] = (response, latency_s)
            full = len(self._writes) >= WRITE_BATCH
            if self._writes_scheduled and not full:
                return
            self._writes_scheduled = True
        if full:
            self._send_writes()
            return
        try:
            asyncio.get_running_loop().call_later(WRITE_DELAY_S, self._send_writes)
        except RuntimeError:  # not on an event loop: hand it over now
            self._send_writes()

    def _send_writes(self) -> None:
        with self._lock:
            batch, self._writes = self._writes, []
            self._writes_scheduled = False
        if batch:
            with contextlib.suppress(RuntimeError):
                self._writer.submit(self._put_many, batch)

    def __len__(self) -> int:
        if self.disabled:
            return 0
        future = self._reader.submit(self._count)
        return future.result()

    def _count(self) -> int:
        try:
            count: int = self._db().execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        except Exception as exc:
            self._fail(exc)
            return 0
        return count

    def flush(self) -> None:
        """Wait until every queued write is done (or given up)."""
        if not self._closed:
            self._send_writes()
            self._writer.submit(lambda: None).result()

    def close(self) -> None:
        """Finish the queued writes, then close both connections."""
        if self._closed:
            return
        self._send_writes()
        for executor in (self._writer, self._reader):
            with contextlib.suppress(RuntimeError):
                executor.submit(self._close_local).result()
            executor.shutdown(wait=True)
        self._closed = True

    async def aclose(self) -> None:
        self._send_writes()
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def _close_local(self) -> None:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None:
            self._local.db = None
            with contextlib.suppress(sqlite3.Error):
                db.close()


def _answer(batch: list[tuple[str, Scope | None, Lookup]],
            found: dict[str, tuple[ChatResponse, float | None]]) -> None:
    for key, _, future in batch:
        if not future.done():
            future.set_result(found.get(key))


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
        return f"{text}: another process has held its lock for more than " \
               f"{BUSY_TIMEOUT_S:g} s"
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
        return f"{text}: the file is corrupt or not a hopscore cache"
    if "unable to open" in text or "readonly" in text or "read-only" in text:
        return f"{text}: the file or its folder cannot be written (read-only?)"
    return text


def warn_printer(console: Console | None) -> Warn | None:
    """Print cache warnings on ``console`` (None: on stderr)."""
    if console is None:
        return None
    return lambda message: console.print(message, style="yellow", markup=False, highlight=False)


def cache_for(directory: Path | None, warn: Warn | None = None) -> ResponseCache | None:
    """The cache in ``directory`` (None: no cache)."""
    return None if directory is None else ResponseCache.in_dir(directory, warn=warn)

