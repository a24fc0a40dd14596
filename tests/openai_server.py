"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

Replies are chosen by the request's prompt text: ``responder(prompt, attempt)`` returns a
:class:`Reply`, where ``attempt`` counts the requests already seen with that exact prompt
(0 for the first). A :class:`Reply` can be a normal completion or an injected fault: any HTTP
status with headers (429 + Retry-After), a stalled connection, a malformed body, empty choices,
null content. Every request is logged (:attr:`FakeOpenAI.log`) so tests can assert exactly
which prompts were sent and how often.

Run standalone (``python tests/openai_server.py --port 0 --latency 0.2``) it answers every
prompt with a fixed judge reply and prints its base URL; the benchmark uses that mode.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted reply. ``content`` is the assistant message unless another field overrides."""

    content: str | None = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: raw body bytes sent as is (malformed JSON, HTML error pages)
    body: bytes | None = None
    #: JSON body sent as is (e.g. {"choices": []})
    json_body: dict[str, Any] | None = None
    #: seconds to wait before answering
    delay: float = 0.0
    #: never answer: hold the connection until the server stops (a stalled upstream)
    stall: bool = False
    tool_calls: list[dict[str, Any]] | None = None


def judge_reply(correct: bool, answer: str = "x", confidence: str = "90%") -> Reply:
    verdict = "yes" if correct else "no"
    return Reply(
        f"extracted_final_answer: {answer}\nreasoning: scripted.\n"
        f"correct: {verdict}\nconfidence: {confidence}"
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default backlog of 5 drops connections at high concurrency


@dataclass(frozen=True)
class LoggedRequest:
    prompt: str
    attempt: int
    body: dict[str, Any]
    time: float
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[str, int], Reply]
#: Sees the whole request body (messages, tools, ...) instead of the prompt text.
BodyResponder = Callable[[dict[str, Any], int], Reply]


class FakeOpenAI:
    """Start with ``with FakeOpenAI(responder) as server: ... server.base_url``."""

    def __init__(self, responder: Responder | None = None, latency: float = 0.0, *,
                 body_responder: BodyResponder | None = None, slots: int | None = None) -> None:
        if (responder is None) == (body_responder is None):
            raise ValueError("give exactly one of responder and body_responder")
        self.responder = responder
        self.body_responder = body_responder
        self.latency = latency
        #: like llama.cpp's server: at most this many requests are worked on at once, the
        #: others wait in its queue (the latency is paid per request, one after the other)
        self.slots = threading.Semaphore(slots) if slots else None
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}
        self._stopping = threading.Event()
        self.in_flight = 0
        #: the most requests that were being answered at the same moment
        self.max_in_flight = 0
        self._server = _Server(("127.0.0.1", 0), _handler_class(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def prompts(self) -> list[str]:
        with self._lock:
            return [entry.prompt for entry in self.log]

    def count(self, needle: str) -> int:
        """How many requests had ``needle`` in their prompt."""
        return sum(needle in prompt for prompt in self.prompts())

    def _next(self, prompt: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            attempt = self._attempts.get(prompt, 0)
            self._attempts[prompt] = attempt + 1
            self.log.append(LoggedRequest(prompt, attempt, body, time.time(), headers))
        if self.body_responder is not None:
            return self.body_responder(body, attempt)
        assert self.responder is not None
        return self.responder(prompt, attempt)


def _completion(reply: Reply, body: dict[str, Any], prompt: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls is not None:
        message["tool_calls"] = reply.tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len((reply.content or "").split()),
            "total_tokens": len(prompt.split()) + len((reply.content or "").split()),
        },
    }


def _handler_class(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "no such route"}}', {})
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._send(400, b'{"error": {"message": "request body is not JSON"}}', {})
                return
            prompt = "\n".join(
                m["content"] for m in body.get("messages", []) if isinstance(m.get("content"), str)
            )
            reply = server._next(prompt, body, {k.lower(): v for k, v in self.headers.items()})
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                if server.slots is not None:
                    with server.slots:
                        self._answer(reply, body, prompt)
                else:
                    self._answer(reply, body, prompt)
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _answer(self, reply: Reply, body: dict[str, Any], prompt: str) -> None:
            wait = server.latency + reply.delay
            if wait > 0 and server._stopping.wait(wait):
                return
            if reply.stall:
                server._stopping.wait()
                return
            if reply.body is not None:
                self._send(reply.status, reply.body, reply.headers)
                return
            if reply.status >= 400:
                error = {"error": {"message": f"scripted status {reply.status}", "type": "test"}}
                self._send(reply.status, json.dumps(error).encode(), reply.headers)
                return
            payload = reply.json_body
            if payload is None:
                payload = _completion(reply, body, prompt)
            self._send(reply.status, json.dumps(payload).encode(), reply.headers)

        def _send(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                if not any(k.lower() == "content-type" for k in headers):
                    self.send_header("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    server = FakeOpenAI(lambda prompt, attempt: judge_reply(True), latency=args.latency).start()
    print(server.base_url, flush=True)
    try:
        sys.stdin.read()  # run until stdin closes
    finally:
        server.stop()


if __name__ == "__main__":
    _main()
