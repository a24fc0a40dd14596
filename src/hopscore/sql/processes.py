"""SQL worker processes: started from one long-lived thread, dying with their parent.

:class:`Worker` is one ``python -I -B`` process running :func:`hopscore.sql.worker.serve`, with
its pipes; each frame is an 8-byte big-endian length followed by the payload (replies start with
``R``, progress notes with ``P``).
"""

from __future__ import annotations

import contextlib
import os
import queue
import selectors
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

FRAME = struct.Struct(">Q")
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from hopscore.sql.worker import serve; " \
        "serve(int(sys.argv[2]), int(sys.argv[3]))"
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])  # the folder holding hopscore/
#: One BLAS thread per worker: the workers already use every core, and each thread would
#: reserve address space under the worker's memory limit.
_WORKER_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: how often a thread waiting for a reply looks whether its worker was killed meanwhile
_KILLED_POLL_S = 0.2


class Spawner:
    """Starts every worker process from one thread that lives as long as this process.

    A worker asks the kernel to kill it when its parent dies (``PR_SET_PDEATHSIG``), and the
    kernel means the parent *thread*: a worker started from a pool thread would die with that
    thread. So all workers are started here, by a daemon thread that ends only with the process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: queue.Queue[tuple[list[str], queue.Queue[Any]]] = queue.Queue()
        self._thread: threading.Thread | None = None

    def popen(self, command: list[str]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name="sql-worker-spawner",
                                                daemon=True)
                self._thread.start()
        answer: queue.Queue[Any] = queue.Queue(maxsize=1)
        self._requests.put((command, answer))
        result = answer.get()
        if isinstance(result, BaseException):
            raise result
        assert isinstance(result, subprocess.Popen)
        return result

    def _serve(self) -> None:
        while True:
            command, answer = self._requests.get()
            try:
                answer.put(subprocess.Popen(
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, cwd="/", close_fds=True,
                    env={**os.environ, **_WORKER_ENV}))
            except BaseException as exc:  # handed to the caller, who raises it
                answer.put(exc)


_SPAWNER = Spawner()


class Worker:
    """One worker process and its pipes."""

    def __init__(self, memory_bytes: int) -> None:
        self.proc = _SPAWNER.popen([sys.executable, "-I", "-B", "-c", _BOOT, _PACKAGE_PARENT,
                                    str(memory_bytes), str(os.getpid())])
        self._finalizer = weakref.finalize(self, _kill, self.proc)
        #: set by :meth:`kill` (from any thread): a reply being waited for will not come
        self.killed = False

    def send(self, payload: bytes) -> None:
        """Send one request (OSError when the process is gone)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(FRAME.pack(len(payload)) + payload)
            self.proc.stdin.flush()
        except ValueError:  # its pipe was closed: killed (kill() from another thread)
            raise BrokenPipeError("worker was killed") from None

    def receive(self, deadline: float | None,
                on_progress: Callable[[bytes], None] | None = None) -> bytes | None:
        """The reply, or None when the deadline passed first (EOFError when the process died).

        Each progress frame met on the way is handed to ``on_progress``. A worker killed from
        another thread (:meth:`kill`, Ctrl-C) ends the wait within :data:`_KILLED_POLL_S`
        with EOFError: the wait does not rely on the pipe's end of file alone, since killing
        closes the pipe, and a pipe closed while (or just before) it is polled may never
        report one (its descriptor can even be reused by another file meanwhile)."""
        assert self.proc.stdout is not None
        if self.killed:
            raise EOFError("worker was killed")
        try:
            fd = self.proc.stdout.fileno()
        except ValueError:  # closed: killed meanwhile
            raise EOFError("worker was killed") from None
        buffer = bytearray()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while True:
                while len(buffer) >= FRAME.size:
                    need = FRAME.size + FRAME.unpack(buffer[: FRAME.size])[0]
                    if len(buffer) < need:
                        break
                    kind, data = buffer[FRAME.size:FRAME.size + 1], \
                        bytes(buffer[FRAME.size + 1:need])
                    del buffer[:need]
                    if kind == b"R":
                        return data
                    if on_progress is not None:
                        on_progress(data)
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return None
                ready = selector.select(_KILLED_POLL_S if wait is None
                                        else min(wait, _KILLED_POLL_S))
                if self.killed:
                    raise EOFError("worker was killed")
                if not ready:
                    continue  # the deadline is looked at above
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError("worker closed its output")
                buffer += chunk

    def kill(self) -> None:
        self.killed = True
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


