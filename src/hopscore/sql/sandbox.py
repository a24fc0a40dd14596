"""The read-only SQL executor: worker processes that cannot write and cannot hang.

:class:`SqlExecutor` runs each query in one of a few worker processes (one per core by
default) with a memory limit. A query that passes its deadline is stopped by SQLite's progress
handler inside the worker; a worker that still does not answer shortly after the deadline (a
single long SQLite operation) is killed and replaced. The statement check
(:mod:`hopscore.sql.guard`) runs first in the calling process; the read-only connection and the
authorizer (:mod:`hopscore.sql.worker`) are the boundary.

Use it from threads freely (each call takes a free worker); ``asyncio`` code can call
``await asyncio.to_thread(executor.execute, ...)``. Error texts start with the reference's
prefixes (``Rejected:``, ``SQL error:``, ``Query timed out after``, ``Database file not
found:``), and :data:`ERROR_PREFIXES` lists every prefix this executor and ``run_sql`` use, so a
trajectory reader can tell a failed call from a result.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import queue
import selectors
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hopscore.sql.guard import check_query

#: Every prefix of an error text from the executor or the ``run_sql`` tool.
ERROR_PREFIXES = (
    "Error:", "Rejected:", "SQL error", "Query timed out", "Query ran out of memory",
    "Query result too large", "Query killed", "Query failed", "Database file not found",
    "SQLite connect failed",
)
_FRAME = struct.Struct(">Q")
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from hopscore.sql.worker import serve; " \
        "serve(int(sys.argv[2]))"
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding hopscore/


def sqlite_version() -> str:
    """The SQLite library version the workers run (they use this interpreter's sqlite3)."""
    return sqlite3.sqlite_version


@dataclass(frozen=True, slots=True)
class QueryResult:
    """What one query gave: rows read by position, or an error text.

    ``columns`` are the result's column names, also for an empty result; ``rows`` hold at most
    ``max_rows`` tuples and ``truncated`` says whether more existed. ``kind`` classifies an
    error: ``rejected``, ``timeout``, ``sql_error``, ``not_found``, ``connect``, ``memory``,
    ``too_large``, ``killed`` or ``crashed``.
    """

    ok: bool
    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    kind: str | None = None
    elapsed_s: float = 0.0

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def duplicate_column_names(self) -> bool:
        """Whether two columns share a name, ignoring case (``a.id``, ``b.id``)."""
        lowered = [name.lower() for name in self.columns]
        return len(set(lowered)) != len(lowered)


def failure(error: str, kind: str) -> QueryResult:
    return QueryResult(ok=False, error=error, kind=kind)


class _Worker:
    """One worker process and its pipes."""

    def __init__(self, memory_bytes: int) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-B", "-c", _BOOT, _PACKAGE_PARENT, str(memory_bytes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd="/", close_fds=True,
        )
        self._finalizer = weakref.finalize(self, _kill, self.proc)

    def send(self, payload: bytes) -> None:
        """Send one request (OSError when the process is gone)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(_FRAME.pack(len(payload)) + payload)
        self.proc.stdin.flush()

    def receive(self, deadline: float | None) -> bytes | None:
        """The reply, or None when the deadline passed first (EOFError when the process died)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buffer = bytearray()
        need = _FRAME.size
        header_done = False
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                while len(buffer) >= need:
                    if header_done:
                        return bytes(buffer[_FRAME.size:need])
                    need = _FRAME.size + _FRAME.unpack(buffer[: _FRAME.size])[0]
                    header_done = True
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return None
                if not selector.select(wait):
                    return None
                chunk = os.read(fd, max(65536, need - len(buffer)))
                if not chunk:
                    raise EOFError("worker closed its output")
                buffer += chunk

    def kill(self) -> None:
        self._finalizer()

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self._finalizer()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


class _Snapshots:
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
        for suffix in ("", *_Snapshots.SIDE_FILES):
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


class SqlExecutor:
    """Runs read-only queries on SQLite files in sandboxed worker processes.

    ``workers`` processes are started on demand (default: one per core, at least 2);
    ``memory_mb`` bounds each worker's address space; ``max_result_mb`` bounds the size of the
    rows one query may send back (serialized); ``kill_grace_s`` is how long past its deadline
    a worker may stay silent before it is killed. ``allow_pragma`` admits PRAGMA/EXPLAIN
    statements (as the reference's ``run_sql`` does); PRAGMA assignments are refused either way.
    """

    def __init__(self, workers: int | None = None, *, memory_mb: int = 2048,
                 max_result_mb: int = 512, kill_grace_s: float = 5.0,
                 allow_pragma: bool = True) -> None:
        self.workers = max(1, workers if workers is not None else max(2, os.cpu_count() or 1))
        self.memory_mb = memory_mb
        self.max_result_mb = max_result_mb
        self.kill_grace_s = kill_grace_s
        self.allow_pragma = allow_pragma
        self._idle: queue.Queue[_Worker | None] = queue.Queue()
        for _ in range(self.workers):
            self._idle.put(None)
        self._closed = False
        self._lock = threading.Lock()
        #: every worker process started and not yet stopped (idle or busy)
        self._live: set[_Worker] = set()
        self._snapshots = _Snapshots()

    def __enter__(self) -> SqlExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every idle worker; workers in use stop when their query returns."""
        with self._lock:
            self._closed = True
        self._snapshots.close()
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return
            if worker is not None:
                worker.close()
                self._stopped(worker)

    def terminate(self) -> None:
        """Kill every worker now, busy ones included (a call waiting on one returns a
        failure at once), and refuse new work: for Ctrl-C and other aborts."""
        with self._lock:
            self._closed = True
            live = list(self._live)
        for worker in live:
            worker.kill()
        self.close()

    def _start(self) -> _Worker:
        worker = _Worker(self.memory_mb * 1024 * 1024)
        with self._lock:
            self._live.add(worker)
            closed = self._closed
        if closed:
            worker.kill()
        return worker

    def _stopped(self, worker: _Worker) -> None:
        with self._lock:
            self._live.discard(worker)

    def execute(self, db_path: str | Path, sql: str, *, max_rows: int = 500,
                timeout_s: float | None = 120.0) -> QueryResult:
        """Run ``sql`` on the SQLite file ``db_path``, read-only; never raises for bad SQL.

        At most ``max_rows`` rows are kept (``truncated`` says whether more existed); the query
        is stopped after ``timeout_s`` seconds (None or <= 0: no limit).
        """
        started = time.monotonic()
        rejected = check_query(sql, allow_pragma=self.allow_pragma)
        if rejected is not None:
            return failure(rejected, "rejected")
        path = Path(db_path).expanduser().resolve()
        if not path.is_file():
            return failure(f"Database file not found: {path}", "not_found")
        try:
            view = self._snapshots.view(path)
        except (OSError, sqlite3.Error) as exc:
            return failure(f"SQLite connect failed: cannot copy {path} with its WAL or journal "
                           f"file for reading: {exc}", "connect")
        timeout = float(timeout_s) if timeout_s is not None and timeout_s > 0 else 0.0
        payload = marshal.dumps((str(view), sql, max(1, int(max_rows)), timeout,
                                 self.max_result_mb * 1024 * 1024))
        reply = self._dispatch(payload, timeout)
        if isinstance(reply, QueryResult):
            return replace(reply, elapsed_s=time.monotonic() - started)
        kind = reply["kind"]
        error = reply["error"]
        if kind == "memory":
            error = f"Query ran out of memory (limit {self.memory_mb} MiB)."
        return QueryResult(
            ok=bool(reply["ok"]), columns=tuple(reply["columns"]), rows=reply["rows"],
            truncated=bool(reply["truncated"]), error=error, kind=kind,
            elapsed_s=time.monotonic() - started,
        )

    def _dispatch(self, payload: bytes, timeout: float) -> dict[str, Any] | QueryResult:
        with self._lock:
            if self._closed:
                raise RuntimeError("SqlExecutor is closed")
        worker = self._idle.get()
        keep: _Worker | None = None
        try:
            for _attempt in range(2):
                if worker is None:
                    worker = self._start()
                try:
                    worker.send(payload)
                except OSError:
                    worker.kill()  # it died while idle: start a fresh one, once
                    self._stopped(worker)
                    worker = None
                    continue
                deadline = time.monotonic() + timeout + self.kill_grace_s if timeout else None
                try:
                    data = worker.receive(deadline)
                except (OSError, EOFError):
                    worker.kill()
                    self._stopped(worker)
                    status = worker.proc.returncode
                    worker = None
                    return failure(
                        f"Query failed: the SQL worker process died (exit status {status}).",
                        "crashed")
                if data is None:
                    worker.kill()
                    self._stopped(worker)
                    worker = None
                    return failure(
                        f"Query killed after {timeout + self.kill_grace_s:g}s: the worker did "
                        "not stop at its deadline.", "killed")
                reply: dict[str, Any] = marshal.loads(data)
                keep = worker
                return reply
            return failure("Query failed: the SQL worker process could not start.", "crashed")
        finally:
            if keep is not None and self._closed:
                keep.close()
                self._stopped(keep)
                keep = None
            self._idle.put(keep)
