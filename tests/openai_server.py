"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benchmarks.

Replies are chosen by the request's prompt text: ``responder(prompt, attempt)`` returns a
:class:`Reply`, where ``attempt`` counts the requests already seen with that exact prompt
(0 for the first). A :class:`Reply` can be a normal completion or an injected fault: any HTTP
status with headers (429 + Retry-After), a stalled connection, a malformed body, empty choices,
null content, a body trickled a byte at a time (``trickle``). Every request is logged
(:attr:`FakeOpenAI.log`) so tests can assert exactly which prompts were sent and how often.

A :class:`ServerBehaviour` makes it behave like the real servers hopscore was run against
(see docs/servers.md): llama-cpp-python answering HTTP 500 to an assistant tool-call turn whose
content is null or missing, a plain chat template dropping the offered tools, vLLM refusing
tools without a tool parser, vLLM / Ollama refusing replayed arguments that are not a JSON
object, Mistral's 9-character call ids, strict gateways refusing unknown message fields, and a
context window answered with the 400 of llama-cpp-python (or silently cut, as Ollama does).

Run standalone (``python tests/openai_server.py --port 0 --latency 0.2``) it answers every
prompt with a fixed judge reply and prints its base URL; the benchmark uses that mode.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import socket
import sys
import threading
import time
from collections import deque
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
    #: the choice's finish_reason (default: "tool_calls" with tool calls, else "stop")
    finish_reason: str | None = None
    #: send the body one byte every ``trickle`` seconds (a server that never times out a read)
    trickle: float = 0.0
    #: usage details as OpenAI reports them: reasoning tokens (added to the completion's, in
    #: ``completion_tokens_details``) and cached prompt tokens (``prompt_tokens_details``;
    #: at most the prompt's)
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None


def judge_reply(correct: bool, answer: str = "x", confidence: str = "90%") -> Reply:
    verdict = "yes" if correct else "no"
    return Reply(
        f"extracted_final_answer: {answer}\nreasoning: scripted.\n"
        f"correct: {verdict}\nconfidence: {confidence}"
    )


@dataclass(frozen=True)
class ServerBehaviour:
    """Faults of real servers, checked on every request before the responder runs."""

    #: llama-cpp-python: a tool-call turn with content null -> 500 (pydantic), missing -> 500
    null_content_500: bool = False
    #: a plain chat template: the tools field (and tool_choice) never reach the model
    ignore_tools: bool = False
    #: vLLM without --enable-auto-tool-choice: any request with tools -> 400
    reject_tools: bool = False
    #: vLLM / Ollama: replayed tool-call arguments must be a JSON object (else 400)
    json_arguments: bool = False
    #: Mistral: tool-call ids of exactly 9 letters and digits (else 400)
    mistral_ids: bool = False
    #: a strict gateway: tool messages carry only role, tool_call_id and content (else 400)
    strict_fields: bool = False
    #: context window in tokens (4 characters a token): longer prompts get llama-cpp-python's 400
    context_limit: int | None = None
    #: with context_limit: cut a longer prompt silently instead (Ollama at num_ctx) and report
    #: the tokens kept, num_ctx / 2 + 2 (ollama/ollama#17427)
    truncate: bool = False


def estimate_tokens(body: dict[str, Any]) -> int:
    """The prompt's tokens as this server counts them: 4 characters of messages + tools each."""
    text = json.dumps(body.get("messages", []), ensure_ascii=False)
    if body.get("tools"):
        text += json.dumps(body["tools"], ensure_ascii=False)
    return len(text) // 4 + 1


_ID9 = re.compile(r"[A-Za-z0-9]{9}")


def behaviour_fault(behaviour: ServerBehaviour, body: dict[str, Any]) -> Reply | None:
    """The error a real server would answer ``body`` with, or None."""
    messages = body.get("messages", [])
    if behaviour.reject_tools and body.get("tools"):
        return Reply(status=400, body=json.dumps({"error": {
            "message": '"auto" tool choice requires --enable-auto-tool-choice and '
                       "--tool-call-parser to be set", "type": "BadRequestError",
            "code": 400}}).encode())
    for index, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if message.get("role") == "assistant" and calls and behaviour.null_content_500:
            if "content" not in message:
                return Reply(status=500, body=b'{"error": {"message": "\'dict object\' has no '
                             b'attribute \'content\'", "type": "internal_server_error"}}')
            if message["content"] is None:
                return Reply(status=500, body=json.dumps({"error": {
                    "message": f"7 validation errors: messages.{index}.content",
                    "type": "internal_server_error"}}).encode())
        for call in calls:
            arguments = (call.get("function") or {}).get("arguments")
            if behaviour.json_arguments:
                try:
                    ok = isinstance(json.loads(arguments), dict)
                except (TypeError, ValueError):
                    ok = False
                if not ok:
                    return Reply(status=400, body=b'{"error": {"message": "invalid tool call '
                                 b'arguments"}}')
            if behaviour.mistral_ids and not _ID9.fullmatch(str(call.get("id"))):
                return Reply(status=400, body=json.dumps({"error": {
                    "message": f"Tool call id was {call.get('id')} but must be a-z, A-Z, 0-9, "
                               "with a length of 9."}}).encode())
        if message.get("role") == "tool" and behaviour.strict_fields:
            extra = set(message) - {"role", "tool_call_id", "content"}
            if extra:
                return Reply(status=400, body=json.dumps({"error": {
                    "message": f"Additional properties are not allowed ({sorted(extra)} "
                               f"unexpected) - 'messages.{index}'"}}).encode())
    if behaviour.context_limit is not None and not behaviour.truncate:
        tokens = estimate_tokens(body)
        if tokens + int(body.get("max_tokens") or 0) > behaviour.context_limit:
            return Reply(status=400, body=json.dumps({"error": {
                "message": f"This model's maximum context length is {behaviour.context_limit} "
                           f"tokens. However, you requested {tokens} tokens. Please reduce "
                           "the length of the messages or completion.",
                "type": "invalid_request_error", "code": "context_length_exceeded"}}).encode())
    return None


class Slots:
    """A server's slots: at most ``count`` holders at once, the others served first come,
    first served, as llama.cpp, vLLM and Ollama take their queues. (A threading.Semaphore
    lets a newcomer take a freed slot ahead of those waiting: at 16 in flight on 4 slots the
    newest requests were answered in 0.15 s and the oldest waited 2 s, which no real server
    here does.)"""

    def __init__(self, count: int) -> None:
        self.count = count
        self._free = count
        self._lock = threading.Lock()
        self._queue: deque[threading.Event] = deque()
        #: busy-slot seconds since the last :meth:`occupancy` mark, and when that was
        self._busy_s = 0.0
        self._changed = self._mark = time.monotonic()

    def _account(self) -> None:
        """Add the busy-slot seconds since the last change (under the lock)."""
        now = time.monotonic()
        self._busy_s += (self.count - self._free) * (now - self._changed)
        self._changed = now

    def occupancy(self, reset: bool = False) -> float:
        """Time-weighted busy slots on average since the last reset (or the start)."""
        with self._lock:
            self._account()
            now = time.monotonic()
            busy = self._busy_s / max(now - self._mark, 1e-9)
            if reset:
                self._busy_s, self._mark = 0.0, now
            return busy

    def __enter__(self) -> None:
        with self._lock:
            if self._free and not self._queue:
                self._account()
                self._free -= 1
                return
            turn = threading.Event()
            self._queue.append(turn)
        turn.wait()  # the slot is handed over by the holder that leaves (__exit__)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            if self._queue:
                self._queue.popleft().set()  # the slot passes to the oldest waiter
            else:
                self._account()
                self._free += 1


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
                 body_responder: BodyResponder | None = None, slots: int | None = None,
                 behaviour: ServerBehaviour | None = None, models: list[str] | None = None,
                 props: dict[str, Any] | None = None, api_key: str | None = None,
                 port: int = 0) -> None:
        if (responder is None) == (body_responder is None):
            raise ValueError("give exactly one of responder and body_responder")
        #: GET /v1/models lists these (None: no listing, 404 as some servers answer)
        self.models = models
        #: GET /props answers this, as llama.cpp's server does (None: 404); may be changed
        #: while the server runs (a server restarted with another chat template)
        self.props = props
        #: seconds GET /v1/models waits before it answers (a slow but alive server)
        self.listing_delay = 0.0
        #: every completion's ``system_fingerprint`` (None: left out, as vLLM does); may be
        #: changed while the server runs (another build or configuration behind the URL)
        self.system_fingerprint: str | None = None
        #: every completion's ``model`` (None: the request's, as llama.cpp's server echoes it)
        self.reply_model: str | None = None
        #: every request (GET or POST) without "Authorization: Bearer <api_key>" gets a 401
        self.api_key = api_key
        #: the paths of the GET requests seen
        self.gets: list[str] = []
        self.responder = responder
        self.body_responder = body_responder
        self.latency = latency
        self.behaviour = behaviour
        #: like llama.cpp's server: at most this many requests are worked on at once, the
        #: others wait in its queue, served in the order they came (the latency is paid per
        #: request, one after the other)
        self.slots = Slots(slots) if slots else None
        self.log: list[LoggedRequest] = []
        #: (status, request body) of every answer a behaviour fault produced
        self.faults: list[tuple[int, dict[str, Any]]] = []
        #: the ``usage`` object of every completion sent, and the body of its request
        self.reported: list[dict[str, Any]] = []
        self.reported_bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._attempts: dict[str, int] = {}
        self._stopping = threading.Event()
        #: the sockets of the open connections (:meth:`kill` resets them)
        self._connections: set[socket.socket] = set()
        self.in_flight = 0
        #: the client ports of the requests being answered now (which process is waiting)
        self.in_flight_ports: set[int] = set()
        #: the most requests that were being answered at the same moment
        self.max_in_flight = 0
        #: port 0: any free one; a given port lets a test start a server again where one died
        self._server = _Server(("127.0.0.1", port), _handler_class(self))
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

    def kill(self) -> None:
        """Die as a killed server does: stop listening and reset every open connection (the
        requests being answered get no reply)."""
        self.stop()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def prompts(self) -> list[str]:
        with self._lock:
            return [entry.prompt for entry in self.log]

    def ports_in_flight(self) -> set[int]:
        """The client ports of the requests being answered at this moment."""
        with self._lock:
            return set(self.in_flight_ports)

    def count(self, needle: str) -> int:
        """How many requests had ``needle`` in their prompt."""
        return sum(needle in prompt for prompt in self.prompts())

    def _next(self, prompt: str, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            attempt = self._attempts.get(prompt, 0)
            self._attempts[prompt] = attempt + 1
            self.log.append(LoggedRequest(prompt, attempt, body, time.time(), headers))
        if self.behaviour is not None:
            fault = behaviour_fault(self.behaviour, body)
            if fault is not None:
                with self._lock:
                    self.faults.append((fault.status, body))
                return fault
            if self.behaviour.ignore_tools:
                body = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
        if self.body_responder is not None:
            return self.body_responder(body, attempt)
        assert self.responder is not None
        return self.responder(prompt, attempt)


def _completion(reply: Reply, body: dict[str, Any], prompt: str,
                behaviour: ServerBehaviour | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls is not None:
        message["tool_calls"] = reply.tool_calls
    prompt_tokens = len(prompt.split())
    if behaviour is not None and behaviour.context_limit is not None:
        prompt_tokens = estimate_tokens(body)
        if prompt_tokens > behaviour.context_limit:  # only reached with truncate
            prompt_tokens = behaviour.context_limit // 2 + 2
    completion_tokens = len((reply.content or "").split()) + (reply.reasoning_tokens or 0)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if reply.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reply.reasoning_tokens}
    if reply.cached_tokens is not None:
        usage["prompt_tokens_details"] = {
            "cached_tokens": min(reply.cached_tokens, prompt_tokens)}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": message,
                     "finish_reason": reply.finish_reason
                     or ("tool_calls" if reply.tool_calls else "stop")}],
        "usage": usage,
    }


def _handler_class(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out as separate writes

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def _refused(self) -> bool:
            """A 401 as OpenAI words it, when the server wants a key it did not get."""
            if server.api_key is None or \
                    self.headers.get("Authorization") == f"Bearer {server.api_key}":
                return False
            self._send(401, json.dumps({"error": {
                "message": "Incorrect API key provided. You can find your API key at "
                           "https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error", "code": "invalid_api_key"}}).encode(), {})
            return True

        def do_GET(self) -> None:
            with server._lock:
                server.gets.append(self.path)
            if self._refused():
                return
            path = self.path.rstrip("/")
            if path.endswith("/models") and server.listing_delay and \
                    server._stopping.wait(server.listing_delay):
                return
            if path.endswith("/models") and server.models is not None:
                listing = {"object": "list", "data": [
                    {"id": name, "object": "model", "created": int(time.time()),
                     "owned_by": "stand-in"} for name in server.models]}
                self._send(200, json.dumps(listing).encode(), {})
            elif path == "/props" and server.props is not None:
                self._send(200, json.dumps(server.props).encode(), {})
            else:
                self._send(404, b'{"error": {"message": "File Not Found"}}', {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self._refused():
                return
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
                server.in_flight_ports.add(self.client_address[1])
            try:
                if server.slots is not None:
                    with server.slots:
                        self._answer(reply, body, prompt)
                else:
                    self._answer(reply, body, prompt)
            finally:
                with server._lock:
                    server.in_flight -= 1
                    server.in_flight_ports.discard(self.client_address[1])

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
                payload = _completion(reply, body, prompt, server.behaviour)
                if server.reply_model is not None:
                    payload["model"] = server.reply_model
                if server.system_fingerprint is not None:
                    payload["system_fingerprint"] = server.system_fingerprint
                with server._lock:
                    server.reported.append(dict(payload["usage"]))
                    server.reported_bodies.append(body)
            self._send(reply.status, json.dumps(payload).encode(), reply.headers, reply.trickle)

        def _send(self, status: int, data: bytes, headers: dict[str, str],
                  trickle: float = 0.0) -> None:
            try:
                self.send_response(status)
                if not any(k.lower() == "content-type" for k in headers):
                    self.send_header("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if not trickle:
                    self.wfile.write(data)
                    return
                self.wfile.flush()
                for index in range(len(data)):
                    if server._stopping.wait(trickle):
                        return
                    self.wfile.write(data[index:index + 1])
                    self.wfile.flush()
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
