"""A loopback server with the providers' batch APIs, for tests: OpenAI's Batch API (files,
batches, file contents) and Anthropic's Message Batches, plus plain chat completions
and Messages for the requests a batch left unanswered.

Every request is answered by ``answer(prompt) -> str`` (the user message's text). How a batch
goes is set per server (:class:`Plan`): how many polls it stays in progress, whether it ends
``completed``, ``expired``, ``cancelled`` or ``failed`` (validation), and which requests fail
inside it (a prompt containing ``fail_marker``). ``hold`` keeps every batch in progress until
:meth:`BatchServer.release` (a test kills its client meanwhile). It counts what it was sent:
``submissions``, ``chat_requests`` (the normal path), ``polls``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Plan:
    #: polls answered "in progress" before the batch ends
    polls_in_progress: int = 1
    #: how the batch ends: completed, expired, cancelled, failed (OpenAI) / ended (Anthropic)
    end: str = "completed"
    #: with end expired or cancelled: how many requests were answered before it ended
    answered_before_end: int = 0
    #: requests whose prompt contains this fail inside the batch (HTTP 500 line / errored)
    fail_marker: str = "\x00never"
    #: the first polls answered HTTP 503 (an endpoint's bad minute)
    failed_polls: int = 0


@dataclass
class _Batch:
    id: str
    provider: str
    lines: list[dict[str, Any]]
    polls: int = 0
    results: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    status: str = "validating"


def _prompt(messages: list[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "\n".join(parts)


def completion(text: str, model: str) -> dict[str, Any]:
    return {"id": "chatcmpl-b", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def message(text: str, model: str) -> dict[str, Any]:
    return {"id": "msg_b", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5}}


class BatchServer:
    def __init__(self, answer: Callable[[str], str], plan: Plan | None = None) -> None:
        self.answer = answer
        self.plan = plan or Plan()
        self.batches: dict[str, _Batch] = {}
        self.files: dict[str, bytes] = {}
        self.submissions = 0
        self.chat_requests = 0
        self.polls = 0
        self.held = threading.Event()
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def hold(self) -> None:
        self.held.set()

    def release(self) -> None:
        self.held.clear()

    def __enter__(self) -> BatchServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- the batch's life ------------------------------------------------------------------

    def make(self, provider: str, lines: list[dict[str, Any]]) -> _Batch:
        with self.lock:
            self.submissions += 1
            batch = _Batch(f"batch_{self.submissions:04d}", provider, lines)
            self.batches[batch.id] = batch
        return batch

    def poll(self, batch: _Batch) -> None:
        with self.lock:
            self.polls += 1
            if batch.status in ("completed", "expired", "cancelled", "failed", "ended"):
                return
            batch.polls += 1
            if self.held.is_set() or batch.polls <= self.plan.polls_in_progress:
                batch.status = "in_progress"
                return
            self._finish(batch)

    def _finish(self, batch: _Batch) -> None:
        plan = self.plan
        if plan.end == "failed":
            batch.status = "failed"
            return
        answered = len(batch.lines)
        if plan.end in ("expired", "cancelled"):
            answered = plan.answered_before_end
        for number, line in enumerate(batch.lines):
            body = line["body"]
            prompt = _prompt(body["messages"])
            model = str(body.get("model"))
            if number >= answered:
                batch.errors.append(self._unanswered(batch.provider, line["custom_id"],
                                                     plan.end))
            elif plan.fail_marker in prompt:
                batch.errors.append(self._error(batch.provider, line["custom_id"]))
            elif batch.provider == "openai":
                batch.results.append({
                    "id": f"resp_{number}", "custom_id": line["custom_id"], "error": None,
                    "response": {"status_code": 200, "request_id": f"req_{number}",
                                 "body": completion(self.answer(prompt), model)}})
            else:
                batch.results.append({"custom_id": line["custom_id"], "result": {
                    "type": "succeeded", "message": message(self.answer(prompt), model)}})
        batch.status = plan.end if batch.provider == "openai" else "ended"

    @staticmethod
    def _unanswered(provider: str, custom_id: str, end: str) -> dict[str, Any]:
        if provider == "openai":
            code = "batch_expired" if end == "expired" else "batch_cancelled"
            return {"id": None, "custom_id": custom_id, "response": None,
                    "error": {"code": code, "message": f"This request was not run: {end}."}}
        kind = "expired" if end == "expired" else "canceled"
        return {"custom_id": custom_id, "result": {"type": kind}}

    @staticmethod
    def _error(provider: str, custom_id: str) -> dict[str, Any]:
        if provider == "openai":
            return {"id": None, "custom_id": custom_id, "error": None, "response": {
                "status_code": 500, "request_id": "r",
                "body": {"error": {"message": "internal error", "type": "server_error"}}}}
        return {"custom_id": custom_id, "result": {"type": "errored", "error": {
            "type": "error", "error": {"type": "api_error", "message": "internal error"}}}}

    def openai_view(self, batch: _Batch) -> dict[str, Any]:
        done = len(batch.results)
        over = batch.status in ("completed", "expired", "cancelled")
        view: dict[str, Any] = {
            "id": batch.id, "object": "batch", "status": batch.status,
            "endpoint": "/v1/chat/completions",
            "request_counts": {"total": len(batch.lines), "completed": done,
                               "failed": len(batch.errors)}}
        if over and batch.results:
            view["output_file_id"] = self._store(batch.results)
        if over and batch.errors:
            view["error_file_id"] = self._store(batch.errors)
        return view

    def anthropic_view(self, batch: _Batch) -> dict[str, Any]:
        ended = batch.status == "ended"
        kinds = [r["result"]["type"] for r in batch.results + batch.errors]
        view: dict[str, Any] = {
            "id": batch.id, "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else len(batch.lines),
                "succeeded": kinds.count("succeeded"), "errored": kinds.count("errored"),
                "canceled": kinds.count("canceled"), "expired": kinds.count("expired")},
            "results_url": None}
        if ended:
            view["results_url"] = f"{self.root_url}/v1/messages/batches/{batch.id}/results"
        return view

    def _store(self, rows: list[dict[str, Any]]) -> str:
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
        with self.lock:
            file_id = f"file-out-{len(self.files):04d}"
            self.files[file_id] = data
        return file_id


def _multipart_file(body: bytes, content_type: str) -> bytes:
    boundary = re.search(r"boundary=\"?([^\";]+)", content_type)
    if boundary is None:
        raise ValueError("no multipart boundary")
    for part in body.split(b"--" + boundary.group(1).encode()):
        head, _, data = part.partition(b"\r\n\r\n")
        if b'name="file"' in head:
            return data.rsplit(b"\r\n", 1)[0]
    raise ValueError("no file part")


def _handler(server: BatchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, status: int, value: Any) -> None:
            self._bytes(status, json.dumps(value).encode(), "application/json")

        def _bytes(self, status: int, data: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self) -> None:
            path = self.path
            if path.endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "judge", "object": "model"}]})
                return
            found = re.fullmatch(r"/v1/batches/([\w-]+)", path)
            if found and server.plan.failed_polls > 0:
                server.plan.failed_polls -= 1
                self._json(503, {"error": {"message": "try again later"}})
                return
            if found and found.group(1) in server.batches:
                batch = server.batches[found.group(1)]
                server.poll(batch)
                self._json(200, server.openai_view(batch))
                return
            found = re.fullmatch(r"/v1/files/([\w-]+)/content", path)
            if found and found.group(1) in server.files:
                self._bytes(200, server.files[found.group(1)], "application/jsonl")
                return
            found = re.fullmatch(r"/v1/messages/batches/([\w-]+)(/results)?", path)
            if found and found.group(1) in server.batches:
                batch = server.batches[found.group(1)]
                if found.group(2):
                    rows = batch.results + batch.errors
                    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
                    self._bytes(200, data, "application/binary")
                    return
                server.poll(batch)
                self._json(200, server.anthropic_view(batch))
                return
            self._json(404, {"error": {"message": f"no route {path}"}})

        def do_POST(self) -> None:
            path, raw = self.path, self._body()
            if path == "/v1/files":
                data = _multipart_file(raw, self.headers.get("Content-Type", ""))
                with server.lock:
                    file_id = f"file-in-{len(server.files):04d}"
                    server.files[file_id] = data
                self._json(200, {"id": file_id, "object": "file", "purpose": "batch"})
                return
            body = json.loads(raw or b"{}")
            if path == "/v1/batches":
                lines = [json.loads(x) for x in
                         server.files[body["input_file_id"]].decode().splitlines() if x.strip()]
                if body.get("endpoint") != "/v1/chat/completions" or any(
                        x.get("url") != "/v1/chat/completions" for x in lines):
                    self._json(400, {"error": {"message": "endpoint mismatch"}})
                    return
                batch = server.make("openai", lines)
                self._json(200, server.openai_view(batch))
                return
            if path == "/v1/messages/batches":
                lines = [{"custom_id": r["custom_id"], "body": r["params"]}
                         for r in body["requests"]]
                batch = server.make("anthropic", lines)
                self._json(200, server.anthropic_view(batch))
                return
            if path == "/v1/chat/completions":
                with server.lock:
                    server.chat_requests += 1
                text = server.answer(_prompt(body["messages"]))
                self._json(200, completion(text, str(body.get("model"))))
                return
            if path == "/v1/messages":
                with server.lock:
                    server.chat_requests += 1
                self._json(200, message(server.answer(_prompt(body["messages"])),
                                        str(body.get("model"))))
                return
            self._json(404, {"error": {"message": f"no route {path}"}})

    return Handler

