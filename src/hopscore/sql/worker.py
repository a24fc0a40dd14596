"""The SQL worker program: a sandboxed process that runs read-only queries and grades records.

:func:`serve` is started by :class:`hopscore.sql.sandbox.SqlExecutor` (through
:mod:`hopscore.sql.processes`) as ``python -I -B``. It limits its own address space and file
sizes, dies with its parent, and answers each request frame on stdin: a query
(:func:`hopscore.sql.query.run_query`, where the read-only defences are) or a whole record to
grade (:func:`hopscore.sql.grading.grade`). This module needs only the standard library and
:mod:`hopscore.sql.query`, so a worker starts fast.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import struct
import sys
import time
from typing import Any

from hopscore.sql.query import run_query

_FRAME = struct.Struct(">Q")


def _vm_sizes() -> tuple[int, int]:
    """``(mapped, resident)`` bytes of this process (0, 0 where /proc is missing)."""
    sizes = {"VmSize:": 0, "VmRSS:": 0}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                parts = line.split()
                if parts and parts[0] in sizes:
                    sizes[parts[0]] = int(parts[1]) * 1024
    except OSError:
        pass
    return sizes["VmSize:"], sizes["VmRSS:"]


def _limit_process(memory_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    limits = [(resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_CORE, 0)]
    if memory_bytes > 0:
        # The address space already mapped (the interpreter, numpy and its BLAS buffers,
        # mostly reserved and not resident) is allowed on top, so that what can still grow is
        # ``memory_bytes`` less what is resident now.
        mapped, resident = _vm_sizes()
        limits.append((resource.RLIMIT_AS, mapped + max(64 << 20, memory_bytes - resident)))
    for which, value in limits:
        try:
            _soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value if hard == resource.RLIM_INFINITY else hard))
        except (ValueError, OSError):
            pass


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` ends, however it ends (SIGKILL included).

    On Linux the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``; the parent
    starts workers from one thread that lives as long as it does, since the signal follows the
    creating thread); everywhere a watchdog thread also checks every 0.2 s that the parent is
    still the parent, in case the kernel call is missing.
    """
    import signal
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the call above
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _read_exact(stream: Any, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _send(stdout: Any, kind: bytes, data: bytes) -> None:
    stdout.write(_FRAME.pack(len(data) + 1))
    stdout.write(kind)
    stdout.write(data)
    stdout.flush()


def serve(memory_bytes: int, parent: int = 0) -> None:
    """The worker loop: read a request frame from stdin, answer on stdout, until EOF.

    A request is ``("query", path, sql, max_rows, timeout_s, max_result_bytes,
    max_cell_chars)`` or ``("grade", request)`` (:func:`hopscore.sql.grading.grade`). Each
    answer frame starts with ``R`` (the reply) or ``P`` (a progress note: the phase a grading
    request has reached, so the parent knows what a deadline kill interrupted).
    """
    import signal

    if parent:
        die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # The comparison's modules (numpy) are loaded before the memory limit applies.
    with contextlib.suppress(ImportError):
        import hopscore.sql.grading  # noqa: F401
    _limit_process(memory_bytes)
    heap_limit = memory_bytes * 3 // 5 if memory_bytes > 0 else 0
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = _read_exact(stdin, _FRAME.size)
        if header is None:
            return
        payload = _read_exact(stdin, _FRAME.unpack(header)[0])
        if payload is None:
            return
        request = marshal.loads(payload)
        answer: Any = None
        try:
            if request[0] == "grade":
                from hopscore.sql.grading import grade

                answer = grade(request[1], heap_limit, lambda phase, index, side: _send(
                    stdout, b"P", marshal.dumps((phase, index, side))))
                sides = [answer["gold"], *answer["agents"]]
                retire = any(side.get("kind") == "memory" or side.get("limit") ==
                             "result_too_large" for side in sides)
            else:
                _op, path, sql, max_rows, timeout_s, max_result_bytes, cells = request
                answer = run_query(path, sql, max_rows, timeout_s, max_result_bytes,
                                   heap_limit, max_cell_chars=cells)
                retire = answer["kind"] == "memory"
            # After running out of memory the heap may stay fragmented: the parent replaces
            # this worker with a fresh one.
            answer["retire"] = retire
            data = marshal.dumps(answer)
        except MemoryError:
            answer = None
            data = marshal.dumps({"ok": False, "columns": [], "rows": [], "truncated": False,
                                  "error": "Query ran out of memory.", "kind": "memory",
                                  "elapsed": 0.0, "retire": True})
        except Exception as exc:  # a bug here must still answer, so the record is reported
            answer = None
            data = marshal.dumps({"ok": False, "columns": [], "rows": [], "truncated": False,
                                  "error": f"Query failed: {type(exc).__name__}: {exc}",
                                  "kind": "crashed", "elapsed": 0.0, "retire": True})
        _send(stdout, b"R", data)
        del answer, data, request


if __name__ == "__main__":  # pragma: no cover - started by the sandbox
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
