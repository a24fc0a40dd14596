"""The read-only SQL executor: worker processes that cannot write and cannot hang.

:class:`SqlExecutor` runs each query in one of a few worker processes (one per core by
default) with a memory limit. A query that passes its deadline is stopped by SQLite's progress
handler inside the worker; a worker that still does not answer shortly after the deadline (a
single long SQLite operation) is killed and replaced. The statement check
(:mod:`hopscore.sql.guard`) runs first in the calling process; the read-only connection and the
authorizer (:mod:`hopscore.sql.query`, in the workers) are the boundary.

:meth:`SqlExecutor.grade` runs a whole record in one worker (gold query, agent queries,
comparison; :mod:`hopscore.sql.grading`) under one deadline and the worker's memory limit, so
neither time nor memory of grading is unbounded. Databases with a WAL or journal file are read
from private checkpointed copies (:mod:`hopscore.sql.snapshots`); workers die with this process
(:mod:`hopscore.sql.processes`).

Use it from threads freely (each call takes a free worker); ``asyncio`` code can call
``await asyncio.to_thread(executor.execute, ...)``. Error texts start with the reference's
prefixes (``Rejected:``, ``SQL error:``, ``Query timed out after``, ``Database file not
found:``), and :data:`ERROR_PREFIXES` lists every prefix this executor and ``run_sql`` use, so a
trajectory reader can tell a failed call from a result.
"""

from __future__ import annotations

import marshal
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hopscore.sql.guard import check_query
from hopscore.sql.processes import Worker
from hopscore.sql.snapshots import Snapshots

#: Every prefix of an error text from the executor or the ``run_sql`` tool.
ERROR_PREFIXES = (
    "Error:", "Rejected:", "SQL error", "Query timed out", "Query ran out of memory",
    "Query result too large", "Query killed", "Query failed", "Database file not found",
    "SQLite connect failed",
)


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


def _side_failure(error: str, kind: str) -> dict[str, Any]:
    return {"ok": False, "error": error, "kind": kind, "columns": [], "row_count": 0,
            "truncated": False, "duplicate_column_names": False}


class SqlExecutor:
    """Runs read-only queries on SQLite files in sandboxed worker processes.

    ``workers`` processes are started on demand (default: one per core, at least 2).
    ``memory_mb`` bounds the whole process tree: this process keeps a share of it
    (:attr:`reserve_mb`, an eighth, at least 192 and at most 512 MiB) and each worker's address
    space is limited to an equal part of the rest (:attr:`worker_memory_mb`, at least 160 MiB).
    ``max_result_mb`` bounds the size of the rows one query may send back (serialized);
    ``kill_grace_s`` is how long past its deadline a worker may stay silent before it is killed.
    ``allow_pragma`` admits PRAGMA/EXPLAIN statements (as the reference's ``run_sql`` does);
    PRAGMA assignments are refused either way.

    Workers die with this process, however it ends (SIGKILL included); :meth:`terminate` kills
    them at once (Ctrl-C).
    """

    def __init__(self, workers: int | None = None, *, memory_mb: int = 2048,
                 max_result_mb: int = 512, kill_grace_s: float = 1.0,
                 allow_pragma: bool = True) -> None:
        self.workers = max(1, workers if workers is not None else max(2, os.cpu_count() or 1))
        self.memory_mb = memory_mb
        self.reserve_mb = min(512, max(192, memory_mb // 8))
        self.worker_memory_mb = max(160, (memory_mb - self.reserve_mb) // self.workers)
        self.max_result_mb = min(max_result_mb, self.worker_memory_mb)
        self.kill_grace_s = kill_grace_s
        self.allow_pragma = allow_pragma
        self._idle: queue.Queue[Worker | None] = queue.Queue()
        for _ in range(self.workers):
            self._idle.put(None)
        self._closed = False
        self._lock = threading.Lock()
        #: every worker process started and not yet stopped (idle or busy)
        self._live: set[Worker] = set()
        self._snapshots = Snapshots()

    def __enter__(self) -> SqlExecutor:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is not None and not issubclass(exc_type, Exception):
            self.terminate()  # Ctrl-C or a cancelled task: busy workers are killed, not awaited
        else:
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

    def worker_pids(self) -> list[int]:
        """The process ids of the workers alive now."""
        with self._lock:
            return [w.proc.pid for w in self._live if w.proc.poll() is None]

    def _start(self) -> Worker:
        worker = Worker(self.worker_memory_mb * 1024 * 1024)
        with self._lock:
            self._live.add(worker)
            closed = self._closed
        if closed:
            worker.kill()
        return worker

    def _stopped(self, worker: Worker) -> None:
        with self._lock:
            self._live.discard(worker)

    def _view(self, db_path: str | Path) -> tuple[Path, QueryResult | None]:
        """The file a worker reads for ``db_path``, or the failure that stops the query."""
        path = Path(db_path).expanduser().resolve()
        if not path.is_file():
            return path, failure(f"Database file not found: {path}", "not_found")
        try:
            return self._snapshots.view(path), None
        except (OSError, sqlite3.Error) as exc:
            return path, failure(f"SQLite connect failed: cannot copy {path} with its WAL or "
                                 f"journal file for reading: {exc}", "connect")

    def _memory_error(self) -> str:
        return (f"Query ran out of memory (limit {self.worker_memory_mb} MiB per worker, "
                f"--memory-mb {self.memory_mb}).")

    def execute(self, db_path: str | Path, sql: str, *, max_rows: int = 500,
                timeout_s: float | None = 120.0, max_cell_chars: int = 0) -> QueryResult:
        """Run ``sql`` on the SQLite file ``db_path``, read-only; never raises for bad SQL.

        At most ``max_rows`` rows are kept (``truncated`` says whether more existed); the query
        is stopped after ``timeout_s`` seconds (None or <= 0: no limit); ``max_cell_chars`` > 0
        cuts longer text and BLOB cells in the worker, so they never cross to this process.
        """
        started = time.monotonic()
        rejected = check_query(sql, allow_pragma=self.allow_pragma)
        if rejected is not None:
            return failure(rejected, "rejected")
        view, problem = self._view(db_path)
        if problem is not None:
            return problem
        timeout = float(timeout_s) if timeout_s is not None and timeout_s > 0 else 0.0
        payload = marshal.dumps(("query", str(view), sql, max(1, int(max_rows)), timeout,
                                 self.max_result_mb * 1024 * 1024, max(0, int(max_cell_chars))))
        reply = self._dispatch(payload, timeout)
        if isinstance(reply, QueryResult):
            return replace(reply, elapsed_s=time.monotonic() - started)
        kind = reply["kind"]
        error = self._memory_error() if kind == "memory" else reply["error"]
        return QueryResult(
            ok=bool(reply["ok"]), columns=tuple(reply["columns"]), rows=reply["rows"],
            truncated=bool(reply["truncated"]), error=error, kind=kind,
            elapsed_s=time.monotonic() - started,
        )

    def grade(self, db_path: str | Path, gold_sql: str, agent_sqls: list[str], *,
              max_rows: int, timeout_s: float | None, compare: str, order_matters: bool,
              table_rows: int, max_cell_chars: int) -> dict[str, Any]:
        """Run the gold query and each agent query and compare them, all in one worker and
        within one deadline of ``timeout_s`` seconds (see :mod:`hopscore.sql.grading` for the
        reply). A worker that does not answer by the deadline is killed: what it finished is
        kept, the step it was in is reported as killed (a query) or ``compare_timeout``."""
        rejected = check_query(gold_sql, allow_pragma=self.allow_pragma)
        if rejected is not None:
            return {"gold": _side_failure(rejected, "rejected"), "agents": []}
        view, problem = self._view(db_path)
        if problem is not None:
            return {"gold": _side_failure(problem.error or "", problem.kind or ""), "agents": []}
        checks = [check_query(sql, allow_pragma=self.allow_pragma) for sql in agent_sqls]
        admitted = [sql for sql, check in zip(agent_sqls, checks, strict=True) if check is None]
        timeout = float(timeout_s) if timeout_s is not None and timeout_s > 0 else 0.0
        request = {"path": str(view), "gold_sql": gold_sql, "agents": admitted,
                   "max_rows": max(1, int(max_rows)), "timeout": timeout, "compare": compare,
                   "order_matters": bool(order_matters), "table_rows": int(table_rows),
                   "max_cell_chars": int(max_cell_chars)}
        seen: dict[str, Any] = {"phase": "gold", "index": 0, "gold": None, "agents": {}}

        def on_progress(data: bytes) -> None:
            phase, index, side = marshal.loads(data)
            seen["phase"], seen["index"] = phase, index
            if phase == "gold_done":
                seen["gold"] = side
            elif phase == "agent_done":
                seen["agents"][index] = side

        reply = self._dispatch(marshal.dumps(("grade", request)), timeout, on_progress)
        if isinstance(reply, QueryResult):
            reply = self._partial(reply, seen, len(admitted))
        elif "gold" not in reply:  # the worker ran out of memory (or failed) replying
            limit = "result_too_large" if reply.get("kind") == "memory" else "worker_died"
            gold = seen["gold"] or _side_failure(reply.get("error") or "", reply["kind"])
            reply = {"gold": gold,
                     "agents": [{**seen["agents"].get(i, _side_failure("", "memory")),
                                 "comparison": None, "limit": limit}
                                for i in range(len(admitted)) if gold["ok"]]}
        for side in (reply["gold"], *reply["agents"]):
            if side.get("kind") == "memory":
                side["error"] = self._memory_error()
        answers = iter(reply["agents"])
        agents: list[dict[str, Any]] = []
        if reply["gold"]["ok"]:
            for check in checks:
                agents.append(_side_failure(check, "rejected") if check is not None
                              else next(answers))
        return {"gold": reply["gold"], "agents": agents}

    @staticmethod
    def _partial(failed: QueryResult, seen: dict[str, Any], count: int) -> dict[str, Any]:
        """A grading reply put together from the progress of a worker that was killed (or
        died): finished sides kept, the step it was in failed."""
        error, kind = failed.error or "", failed.kind or "crashed"
        gold = seen["gold"]
        if gold is None:
            return {"gold": _side_failure(error, kind), "agents": []}
        agents: list[dict[str, Any]] = []
        for index in range(count):
            side = seen["agents"].get(index)
            if side is not None:
                limit = "compare_timeout" if kind == "killed" else "worker_died"
                agents.append({**side, "comparison": None, "limit": limit})
            elif index == seen["index"] and seen["phase"] == "agent":
                agents.append(_side_failure(error, kind))
            else:
                agents.append({**_side_failure(error, kind), "limit": "compare_timeout"})
        return {"gold": gold, "agents": agents}

    def _dispatch(self, payload: bytes, timeout: float,
                  on_progress: Callable[[bytes], None] | None = None,
                  ) -> dict[str, Any] | QueryResult:
        with self._lock:
            if self._closed:
                raise RuntimeError("SqlExecutor is closed")
        worker = self._idle.get()
        keep: Worker | None = None
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
                    data = worker.receive(deadline, on_progress)
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
                if reply.pop("retire", False):
                    worker.close()  # it ran out of memory: a fresh one takes over
                    self._stopped(worker)
                    worker = None
                else:
                    keep = worker
                return reply
            return failure("Query failed: the SQL worker process could not start.", "crashed")
        finally:
            if keep is not None and self._closed:
                keep.close()
                self._stopped(keep)
                keep = None
            self._idle.put(keep)
