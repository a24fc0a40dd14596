"""A scripted Anthropic Messages API server on 127.0.0.1 (``POST /v1/messages``), for tests.

It checks every request the way the real API does and answers 400 (``invalid_request_error``)
when one breaks a rule: a key (``x-api-key`` or a bearer) and ``anthropic-version``, ``model``
and integer ``max_tokens``, a ``system`` string or text blocks, turns that start with ``user``
and alternate roles, no empty text blocks, ``tool_use`` blocks with an id, a name and an object
input, each answered by a ``tool_result`` (first in the next user turn, same id), tools with a
name and an ``input_schema``, and a known ``tool_choice``. Replies are chosen by
``responder(body, attempt)`` (``attempt`` counts earlier requests with the same messages): text,
tool uses, or an injected fault (any status with headers, a raw body). Every request is logged.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Message:
    """One scripted reply: text and/or tool uses (name, input), or a fault."""

    text: str | None = "ok"
    tool_uses: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    stop_reason: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    #: a raw body sent as is (with ``status``)
    body: bytes | None = None
    delay: float = 0.0
    #: extended thinking: a ``thinking`` block before the text
    thinking: str | None = None


Responder = Callable[[dict[str, Any], int], Message]


class InvalidRequest(Exception):
    pass


def _check_blocks(content: Any, role: str, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content:
            raise InvalidRequest(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise InvalidRequest(f"{where}: content must be a non-empty string or list")
    for i, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if not isinstance(block.get("text"), str) or not block["text"]:
                raise InvalidRequest(f"{where}.content.{i}: text content blocks must be "
                                     "non-empty")
        elif kind == "tool_use":
            if role != "assistant":
                raise InvalidRequest(f"{where}.content.{i}: tool_use only in assistant turns")
            if not block.get("id") or not block.get("name") or not isinstance(
                    block.get("input"), dict):
                raise InvalidRequest(f"{where}.content.{i}: tool_use needs id, name, input")
        elif kind == "tool_result":
            if role != "user":
                raise InvalidRequest(f"{where}.content.{i}: tool_result only in user turns")
            if not block.get("tool_use_id"):
                raise InvalidRequest(f"{where}.content.{i}: tool_result needs tool_use_id")
        else:
            raise InvalidRequest(f"{where}.content.{i}: unknown block type {kind!r}")
    return content


def _check_thinking(body: dict[str, Any]) -> None:
    """Extended thinking as the API checks it: enabled with budget_tokens >= 1024 and below
    max_tokens, and no temperature then; or disabled."""
    thinking = body.get("thinking")
    if thinking is None or thinking == {"type": "disabled"}:
        return
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        raise InvalidRequest("thinking: type must be enabled or disabled")
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise InvalidRequest("thinking.enabled.budget_tokens: must be >= 1024")
    if isinstance(body.get("max_tokens"), int) and budget >= body["max_tokens"]:
        raise InvalidRequest("max_tokens must be greater than thinking.budget_tokens")
    if "temperature" in body and body["temperature"] != 1:
        raise InvalidRequest("temperature may only be set to 1 when thinking is enabled")


def validate(body: Any, headers: dict[str, str]) -> None:
    if not headers.get("x-api-key") and not headers.get("authorization", "").startswith(
            "Bearer "):
        raise InvalidRequest("x-api-key header (or an Authorization bearer) is required")
    if not headers.get("anthropic-version"):
        raise InvalidRequest("anthropic-version header is required")
    if not isinstance(body, dict):
        raise InvalidRequest("body must be an object")
    unknown = set(body) - {"model", "messages", "max_tokens", "system", "temperature",
                           "stop_sequences", "tools", "tool_choice", "top_p", "top_k",
                           "metadata", "stream", "thinking"}
    if unknown:
        raise InvalidRequest(f"{sorted(unknown)[0]}: Extra inputs are not permitted")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise InvalidRequest("model: Field required")
    if not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1:
        raise InvalidRequest("max_tokens: Field required")
    _check_thinking(body)
    system = body.get("system")
    if system is not None and not isinstance(system, (str, list)):
        raise InvalidRequest("system: must be a string or a list of text blocks")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: at least one message is required")
    pending: set[str] = set()
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in ("user", "assistant"):
            raise InvalidRequest(f"{where}.role: must be user or assistant")
        if index == 0 and role != "user":
            raise InvalidRequest("messages: first message must use the user role")
        if index and messages[index - 1]["role"] == role:
            raise InvalidRequest(f"{where}: roles must alternate between user and assistant")
        blocks = _check_blocks(message.get("content"), role, where)
        if pending:
            results = [b for b in blocks if b.get("type") == "tool_result"]
            leading = blocks[:len(results)]
            if {b.get("tool_use_id") for b in results} != pending or leading != results:
                raise InvalidRequest(f"{where}: tool_use ids were found without tool_result "
                                     "blocks immediately after")
            pending = set()
        elif any(b.get("type") == "tool_result" for b in blocks):
            raise InvalidRequest(f"{where}: unexpected tool_result block")
        if role == "assistant":
            pending = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    for i, tool in enumerate(body.get("tools") or []):
        if not tool.get("name") or not isinstance(tool.get("input_schema"), dict):
            raise InvalidRequest(f"tools.{i}: name and input_schema are required")
        if set(tool) - {"name", "description", "input_schema"}:
            raise InvalidRequest(f"tools.{i}: Extra inputs are not permitted")
    choice = body.get("tool_choice")
    if choice is not None and (not isinstance(choice, dict) or choice.get("type") not in (
            "auto", "any", "none", "tool")):
        raise InvalidRequest("tool_choice: unknown type")


class FakeAnthropic:
    """Start with ``with FakeAnthropic(responder) as server: ... server.base_url``."""

    def __init__(self, responder: Responder, latency: float = 0.0, *,
                 api_key: str | None = None) -> None:
        self.responder = responder
        #: every request without this x-api-key gets the API's 401 (None: any key passes)
        self.api_key = api_key
        #: the paths of the GET requests seen
        self.gets: list[str] = []
        self.latency = latency
        self.log: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        #: the key each request carried (x-api-key, else the Authorization header)
        self.keys: list[str] = []
        self._attempts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def next(self, body: dict[str, Any]) -> Message:
        key = json.dumps([body.get("system"), body.get("messages")], sort_keys=True)
        with self._lock:
            attempt = self._attempts.get(key, 0)
            self._attempts[key] = attempt + 1
            self.log.append(body)
        return self.responder(body, attempt)


def reply_body(message: Message, body: dict[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if message.thinking is not None:
        content.append({"type": "thinking", "thinking": message.thinking, "signature": "sig"})
    if message.text:
        content.append({"type": "text", "text": message.text})
    for index, (name, tool_input) in enumerate(message.tool_uses):
        content.append({"type": "tool_use", "id": f"toolu_{len(body['messages'])}_{index}",
                        "name": name, "input": tool_input})
    stop = message.stop_reason or ("tool_use" if message.tool_uses else "end_turn")
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 7, "cache_read_input_tokens": 2}}


def _handler(server: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _refused(self) -> bool:
            if server.api_key is None or self.headers.get("x-api-key") == server.api_key:
                return False
            self._send(401, {"type": "error", "error": {"type": "authentication_error",
                                                        "message": "invalid x-api-key"}})
            return True

        def do_GET(self) -> None:
            server.gets.append(self.path)
            if self._refused():
                return
            if self.path.split("?")[0].rstrip("/") == "/v1/models":
                self._send(200, {"data": [{"type": "model", "id": "claude-test",
                                           "display_name": "Claude (stand-in)",
                                           "created_at": "2025-01-01T00:00:00Z"}],
                                 "has_more": False, "first_id": "claude-test",
                                 "last_id": "claude-test"})
            else:
                self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "no such route"}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self._refused():
                return
            if self.path.rstrip("/") != "/v1/messages":
                self._send(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "no such route"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.keys.append(headers.get("x-api-key")
                               or headers.get("authorization", "").removeprefix("Bearer "))
            try:
                body = json.loads(raw)
                validate(body, headers)
            except (ValueError, InvalidRequest) as exc:
                server.rejected.append(str(exc))
                self._send(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": str(exc)}})
                return
            message = server.next(body)
            wait = server.latency + message.delay
            if wait and server._stopping.wait(wait):
                return
            if message.body is not None:
                self._send_raw(message.status, message.body, message.headers)
            elif message.status >= 400:
                self._send(message.status, {"type": "error", "error": {
                    "type": "overloaded_error" if message.status == 529 else "api_error",
                    "message": f"scripted status {message.status}"}}, message.headers)
            else:
                self._send(200, reply_body(message, body), message.headers)

        def _send(self, status: int, payload: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            self._send_raw(status, json.dumps(payload).encode(), headers or {})

        def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def as_openai(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages API request read back as OpenAI chat messages (to reuse OpenAI-side scripts)."""
    messages: list[dict[str, Any]] = []
    if body.get("system"):
        messages.append({"role": "system", "content": body["system"]})
    for turn in body["messages"]:
        blocks = turn["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        if turn["role"] == "assistant":
            calls = [{"id": b["id"], "type": "function",
                      "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
                     for b in blocks if b["type"] == "tool_use"]
            entry: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                entry["tool_calls"] = calls
            messages.append(entry)
            continue
        for b in blocks:
            if b["type"] == "tool_result":
                messages.append({"role": "tool", "tool_call_id": b["tool_use_id"],
                                 "content": b["content"]})
        if text:
            messages.append({"role": "user", "content": text})
    out = {"model": body["model"], "messages": messages}
    if body.get("tools"):
        out["tools"] = [{"type": "function", "function": {
            "name": t["name"], "description": t.get("description", ""),
            "parameters": t["input_schema"]}} for t in body["tools"]]
    return out

