"""One read-only SQLite query, run in the calling process: the engine of the SQL workers.

This module only needs the standard library (and :mod:`hopscore.sql.tables`), so a worker
process starts fast. :func:`run_query` is used by the worker loop (:mod:`hopscore.sql.worker`),
by the grading of a record inside a worker (:mod:`hopscore.sql.grading`) and by tests.

Defences, each sufficient against writes on its own:

* the database is opened as a URI with ``mode=ro&immutable=1`` (path percent-escaped; the
  executor hands a private checkpointed copy instead when the database has a WAL or journal
  file, see :class:`hopscore.sql.sandbox.SqlExecutor`);
* an authorizer allows only reading actions (SELECT, column reads, function calls other than
  extension loading, recursive CTEs and a list of read-only PRAGMAs); ATTACH (which ``VACUUM
  INTO`` uses), DETACH, every write, transaction control and PRAGMA assignments are denied;
* extension loading stays disabled, ``SQLITE_LIMIT_ATTACHED`` is 0, temporary storage stays in
  memory and the worker process may not grow any file (``RLIMIT_FSIZE`` 0, set by
  :mod:`hopscore.sql.worker`).

Bounds: a progress handler aborts the query at its wall-clock deadline; SQLite's heap is
limited (``hard_heap_limit``; the worker also limits its address space, ``RLIMIT_AS``); the
rows kept are capped by count and by an estimate of their size.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import time
import urllib.parse
from typing import Any

from hopscore.sql.tables import DIGEST_OVER, cell_size, clip_cells, digest_blobs

# Action codes (sqlite3 module constants; spelled out so the table reads plainly).
_ALLOWED_ACTIONS = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}
_ACTION_NAMES = {
    getattr(sqlite3, "SQLITE_" + name): name.replace("_", " ")
    for name in (
        "CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE",
        "CREATE_TEMP_TRIGGER", "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE",
        "DROP_INDEX", "DROP_TABLE", "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER",
        "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW", "INSERT", "TRANSACTION", "UPDATE",
        "ATTACH", "DETACH", "ALTER_TABLE", "REINDEX", "ANALYZE", "CREATE_VTABLE",
        "DROP_VTABLE", "SAVEPOINT",
    )
    if hasattr(sqlite3, "SQLITE_" + name)
}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}
#: PRAGMAs that only report, whatever their argument (``PRAGMA table_info(t)``).
_INTROSPECTION_PRAGMAS = {
    "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
    "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
    "collation_list", "database_list", "function_list", "module_list", "pragma_list",
    "compile_options",
}
#: PRAGMAs that are allowed only in their reading form (no ``= value``).
_READ_FORM_PRAGMAS = {
    "user_version", "application_id", "schema_version", "data_version", "page_size",
    "page_count", "freelist_count", "encoding", "journal_mode", "auto_vacuum", "foreign_keys",
    "cache_size", "max_page_count", "query_only", "recursive_triggers", "legacy_file_format",
}
_PROGRESS_STEPS = 1000
_FETCH_BYTES = 8 * 1024 * 1024


class _Denied:
    """Remembers the first action the authorizer refused, for a readable error."""

    def __init__(self) -> None:
        self.what: str | None = None

    def __call__(self, action: int, arg1: str | None, arg2: str | None,
                 db: str | None, trigger: str | None) -> int:
        if action in _ALLOWED_ACTIONS:
            if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
                return self._deny(f"FUNCTION {arg2}()")
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_PRAGMA:
            name = (arg1 or "").lower()
            if name in _INTROSPECTION_PRAGMAS or (name in _READ_FORM_PRAGMAS and arg2 is None):
                return sqlite3.SQLITE_OK
            return self._deny(f"PRAGMA {arg1}" + ("" if arg2 is None else f" = {arg2}"))
        if action == sqlite3.SQLITE_UPDATE and arg1 in ("sqlite_master", "sqlite_schema"):
            # SQLite reports this while it declares an eponymous virtual table such as
            # pragma_table_info(); a real UPDATE of the schema table is still refused by the
            # read-only connection and by the statement check before it gets here.
            return sqlite3.SQLITE_OK
        name = _ACTION_NAMES.get(action, f"action {action}")
        return self._deny(name + (f" {arg1}" if arg1 else ""))

    def _deny(self, what: str) -> int:
        if self.what is None:
            self.what = what
        return sqlite3.SQLITE_DENY


def database_uri(path: str) -> str:
    """A read-only, immutable SQLite URI for an absolute path, percent-escaped."""
    return "file:" + urllib.parse.quote(path, safe="/") + "?mode=ro&immutable=1"


def _open(path: str, heap_limit: int) -> sqlite3.Connection:
    conn = sqlite3.connect(database_uri(path), uri=True, isolation_level=None,
                           check_same_thread=False)
    if hasattr(conn, "enable_load_extension"):
        conn.enable_load_extension(False)
    if hasattr(conn, "setlimit"):
        conn.setlimit(getattr(sqlite3, "SQLITE_LIMIT_ATTACHED", 7), 0)
        conn.setlimit(getattr(sqlite3, "SQLITE_LIMIT_LENGTH", 0), 100_000_000)
    conn.execute("PRAGMA temp_store = MEMORY")
    if heap_limit > 0:
        conn.execute(f"PRAGMA hard_heap_limit = {int(heap_limit)}")
    return conn


def run_query(path: str, sql: str, max_rows: int, timeout_s: float,
              max_result_bytes: int = 0, heap_limit: int = 0, *,
              deadline: float | None = None, max_cell_chars: int = 0,
              digest: bool = False) -> dict[str, Any]:
    """Run one query; return the reply dict (``ok``, ``columns``, ``rows``, ``truncated``,
    ``error``, ``kind``, ``elapsed``). Never raises for anything the query does.

    The query stops at ``deadline`` (a ``time.monotonic()`` value) when given, else
    ``timeout_s`` after it starts (0: no limit); ``timeout_s`` is the limit its error names.
    ``max_cell_chars`` > 0 cuts longer text and BLOB cells (so huge cells are never sent back);
    ``digest`` holds BLOBs over 64 KiB as their :class:`~hopscore.sql.tables.BlobDigest`
    (for grading in the worker: equal exactly when the BLOBs are).
    """
    start = time.monotonic()

    def reply(ok: bool, *, error: str | None = None, kind: str | None = None,
              columns: list[str] | None = None, rows: list[tuple[Any, ...]] | None = None,
              truncated: bool = False) -> dict[str, Any]:
        return {"ok": ok, "columns": columns or [], "rows": rows or [], "truncated": truncated,
                "error": error, "kind": kind, "elapsed": time.monotonic() - start}

    if not os.path.isfile(path):
        return reply(False, error=f"Database file not found: {path}", kind="not_found")
    if deadline is None and timeout_s > 0:
        deadline = start + timeout_s
    try:
        conn = _open(path, heap_limit)
    except sqlite3.Error as exc:
        return reply(False, error=f"SQLite connect failed: {exc}", kind="connect")
    denied = _Denied()
    timed_out = False

    def progress() -> int:
        nonlocal timed_out
        if deadline is not None and time.monotonic() >= deadline:
            timed_out = True
            return 1
        return 0

    rows: list[tuple[Any, ...]] = []
    try:
        conn.set_authorizer(denied)
        conn.set_progress_handler(progress, _PROGRESS_STEPS)
        if deadline is not None and time.monotonic() >= deadline:
            raise sqlite3.OperationalError("interrupted")
        cursor = conn.execute(sql)
        if cursor.description is None:
            # Only queries describe result columns; anything else (REINDEX, say) ran against a
            # read-only file without effect, but it is still not an answer.
            return reply(False, kind="rejected",
                         error="Rejected: the statement is not a query (it returns no columns).")
        columns = [d[0] for d in cursor.description]
        budget = 0
        truncated = False
        step = 1  # rows per fetch: grown while rows are small, so one fetch holds ~8 MB
        while True:
            chunk = cursor.fetchmany(min(step, max_rows + 1 - len(rows)))
            if not chunk:
                break
            if deadline is not None and time.monotonic() >= deadline:
                # Turning rows into Python values runs no SQLite instruction, so the progress
                # handler does not see a deadline passed there.
                timed_out = True
                raise sqlite3.OperationalError("interrupted")
            size = max(cell_size(chunk[0]), cell_size(chunk[-1]))  # a sample is enough
            step = max(1, min(1000, _FETCH_BYTES // size))
            if max_cell_chars > 0:
                chunk = clip_cells(chunk, max_cell_chars)
            if digest and size > DIGEST_OVER:  # only rows this big can hold a BLOB to digest
                chunk = digest_blobs(chunk)
            if max_result_bytes:
                budget += len(marshal.dumps(chunk))  # the size the reply will have
                if budget > max_result_bytes:
                    rows.clear()
                    limit_mib = max_result_bytes // (1024 * 1024)
                    return reply(False, kind="too_large",
                                 error=f"Query result too large (over {limit_mib} MiB).")
            rows.extend(chunk)
            if len(rows) > max_rows:
                truncated = True
                del rows[max_rows:]
                break
        return reply(True, columns=columns, rows=rows, truncated=truncated)
    except MemoryError:
        rows.clear()
        return reply(False, error="Query ran out of memory.", kind="memory")
    except sqlite3.Error as exc:
        rows.clear()
        message = str(exc)
        if timed_out or (deadline is not None and "interrupted" in message.lower()):
            return reply(False, error=f"Query timed out after {timeout_s:g}s.", kind="timeout")
        if denied.what is not None:
            return reply(False, kind="rejected",
                         error=f"Rejected: not allowed in a read-only query: {denied.what}.")
        if "out of memory" in message.lower():
            return reply(False, error="Query ran out of memory.", kind="memory")
        return reply(False, error=f"SQL error: {message}", kind="sql_error")
    except (ValueError, UnicodeError, OverflowError) as exc:
        rows.clear()
        return reply(False, error=f"SQL error: {exc}", kind="sql_error")
    finally:
        try:
            conn.set_progress_handler(None, 0)
            conn.close()
        except sqlite3.Error:
            pass
