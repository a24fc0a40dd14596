"""The providers' batch APIs: submit many chat requests as one job, poll it, read the results.

Two providers offer one at about half the price of the same requests sent one by one, with
results within 24 hours:

* **OpenAI's Batch API** (and servers that copy it): the requests go up as one JSON Lines file
  (``POST {base}/files``, ``purpose=batch``; each line ``{custom_id, method, url, body}``), a
  batch is made from it (``POST {base}/batches`` with ``endpoint=/v1/chat/completions``,
  ``completion_window=24h``) and polled (``GET {base}/batches/{id}``: ``validating``,
  ``in_progress``, ``finalizing``, then ``completed``, ``failed``, ``expired`` or
  ``cancelled``). Answers are in its output file, failures in its error file
  (``GET {base}/files/{id}/content``), one line per request, matched by ``custom_id``; an
  expired or cancelled batch keeps the answers it finished.
* **Anthropic's Message Batches**: ``POST /v1/messages/batches`` with ``{custom_id, params}``
  per request, polled at ``GET /v1/messages/batches/{id}`` (``processing_status``
  ``in_progress``, ``canceling``, ``ended``); the results (``results_url``) are JSON Lines
  ``{custom_id, result: {type: succeeded|errored|canceled|expired, message|error}}``.

A client here only moves bytes and reads them: what is submitted, and what becomes of a request
the batch did not answer, is :mod:`hopscore.engine.batch_mode`'s business.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hopscore.engine.anthropic import API_VERSION, completion_of, request_body
from hopscore.engine.classify import error_message
from hopscore.engine.types import CallError, ChatRequest, ChatResponse
from hopscore.errors import HopscoreError

#: the OpenAI statuses after which a batch changes no more
OPENAI_FINAL = ("completed", "failed", "expired", "cancelled")
#: the most requests one batch may hold (OpenAI 50,000; Anthropic 100,000)
MAX_REQUESTS = {"openai": 50_000, "anthropic": 100_000}
#: the most bytes one batch's requests may take (OpenAI 200 MB, Anthropic 256 MB), kept under
MAX_BYTES = {"openai": 190_000_000, "anthropic": 240_000_000}


class BatchError(HopscoreError):
    """The batch endpoint refused or failed a call (not one request's failure inside a batch)."""


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """Where a batch stands: the provider's own status word, whether it is over, and counts."""

    batch_id: str
    status: str
    final: bool
    done: int = 0
    failed: int = 0
    total: int = 0
    #: OpenAI: the output and error files; Anthropic: the results URL (when there are any)
    outputs: tuple[str, ...] = ()

    def describe(self) -> str:
        counts = f"{self.done + self.failed} of {self.total} answered" if self.total else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return f"batch {self.batch_id}: {self.status}" + (f" ({counts}{failed})" if counts
                                                           else "")


@dataclass(frozen=True, slots=True)
class BatchAnswer:
    """One request's outcome in a batch: a response, or why there is none (``error``)."""

    response: ChatResponse | None
    error: str = ""


class BatchClient(Protocol):
    provider: str

    async def submit(self, requests: Sequence[tuple[str, ChatRequest]]) -> str: ...

    async def status(self, batch_id: str) -> BatchStatus: ...

    async def results(self, status: BatchStatus) -> dict[str, BatchAnswer]: ...

    async def aclose(self) -> None: ...


class _Http:
    """One aiohttp session, JSON in and out, every failure a :class:`BatchError` that says
    which call failed and why."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers
        self._session: Any = None

    def session(self) -> Any:
        if self._session is None:
            import aiohttp

            self._session = aiohttp.ClientSession(
                headers=self.headers, timeout=aiohttp.ClientTimeout(total=300))
        return self._session

    async def call(self, method: str, url: str, what: str, **kwargs: Any) -> bytes:
        import aiohttp

        try:
            async with self.session().request(method, url, **kwargs) as reply:
                data: bytes = await reply.read()
                status = reply.status
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise BatchError(f"{what}: {method} {url} failed: {type(exc).__name__}: {exc}") \
                from None
        if not 200 <= status < 300:
            text = error_message(status, data.decode("utf-8", "replace"))
            raise BatchError(f"{what}: {method} {url} answered HTTP {status}: {text}")
        return data

    async def json(self, method: str, url: str, what: str, **kwargs: Any) -> dict[str, Any]:
        data = await self.call(method, url, what, **kwargs)
        try:
            body = json.loads(data)
        except ValueError:
            raise BatchError(f"{what}: {url} sent a body that is not JSON: "
                             f"{data[:120]!r}") from None
        if not isinstance(body, dict):
            raise BatchError(f"{what}: {url} sent JSON that is not an object")
        return body

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


def _lines(data: bytes, what: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise BatchError(f"{what}, line {number}: not JSON: {line[:120]!r}") from None
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _counts(body: dict[str, Any]) -> dict[str, Any]:
    found = body.get("request_counts")
    return found if isinstance(found, dict) else {}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class OpenAIBatches:
    """OpenAI's Batch API at an OpenAI-compatible ``endpoint`` (``.../v1``)."""

    provider = "openai"

    def __init__(self, endpoint: str, api_key: str) -> None:
        self.base = endpoint.rstrip("/")
        self.http = _Http({"Authorization": f"Bearer {api_key or 'EMPTY'}",
                           "User-Agent": "hopscore"})

    async def submit(self, requests: Sequence[tuple[str, ChatRequest]]) -> str:
        import aiohttp

        lines = [json.dumps({"custom_id": custom_id, "method": "POST",
                             "url": "/v1/chat/completions",
                             "body": {"model": r.model, "messages": r.messages, **r.body()}},
                            ensure_ascii=False)
                 for custom_id, r in requests]
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", ("\n".join(lines) + "\n").encode("utf-8"),
                       filename="hopscore-batch.jsonl", content_type="application/jsonl")
        uploaded = await self.http.json("POST", f"{self.base}/files", "uploading the requests",
                                        data=form)
        file_id = uploaded.get("id")
        if not isinstance(file_id, str) or not file_id:
            raise BatchError(f"uploading the requests: {self.base}/files gave no file id")
        made = await self.http.json(
            "POST", f"{self.base}/batches", "creating the batch",
            json={"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                  "completion_window": "24h", "metadata": {"made_by": "hopscore"}})
        batch_id = made.get("id")
        if not isinstance(batch_id, str) or not batch_id:
            raise BatchError(f"creating the batch: {self.base}/batches gave no batch id")
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        body = await self.http.json("GET", f"{self.base}/batches/{batch_id}",
                                    f"polling batch {batch_id}")
        status = str(body.get("status") or "?")
        counts = _counts(body)
        outputs = tuple(str(body[k]) for k in ("output_file_id", "error_file_id") if body.get(k))
        return BatchStatus(batch_id, status, status in OPENAI_FINAL,
                           done=_count(counts.get("completed")),
                           failed=_count(counts.get("failed")),
                           total=_count(counts.get("total")), outputs=outputs)

    async def results(self, status: BatchStatus) -> dict[str, BatchAnswer]:
        answers: dict[str, BatchAnswer] = {}
        for file_id in status.outputs:
            what = f"reading file {file_id} of batch {status.batch_id}"
            data = await self.http.call("GET", f"{self.base}/files/{file_id}/content", what)
            for row in _lines(data, what):
                custom_id = row.get("custom_id")
                if isinstance(custom_id, str):
                    answers[custom_id] = openai_answer(row)
        return answers


    async def aclose(self) -> None:
        await self.http.aclose()


def openai_answer(row: dict[str, Any]) -> BatchAnswer:
    """One line of an OpenAI batch's output or error file."""
    error = row.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else None
        code = error.get("code") if isinstance(error, dict) else None
        return BatchAnswer(None, f"{code or 'error'}: {message or error}")
    reply = row.get("response")
    if not isinstance(reply, dict):
        return BatchAnswer(None, "the batch's line has no response")
    status = reply.get("status_code")
    body = reply.get("body")
    if status != 200 or not isinstance(body, dict):
        text = error_message(int(status) if isinstance(status, int) else 0,
                             json.dumps(body) if body is not None else "")
        return BatchAnswer(None, f"HTTP {status}: {text}")
    try:
        return BatchAnswer(ChatResponse.from_body(body, 200))
    except CallError as exc:
        return BatchAnswer(None, exc.message)


class AnthropicBatches:
    """Anthropic's Message Batches at ``base_url`` (the API root, without ``/v1``)."""

    provider = "anthropic"

    def __init__(self, base_url: str, api_key: str) -> None:
        self.base = base_url.rstrip("/")
        self.http = _Http({"x-api-key": api_key or "EMPTY", "anthropic-version": API_VERSION,
                           "User-Agent": "hopscore"})

    async def submit(self, requests: Sequence[tuple[str, ChatRequest]]) -> str:
        body = {"requests": [{"custom_id": custom_id, "params": request_body(r)}
                             for custom_id, r in requests]}
        made = await self.http.json("POST", f"{self.base}/v1/messages/batches",
                                    "creating the message batch", json=body)
        batch_id = made.get("id")
        if not isinstance(batch_id, str) or not batch_id:
            raise BatchError("creating the message batch: the reply gave no batch id")
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        body = await self.http.json("GET", f"{self.base}/v1/messages/batches/{batch_id}",
                                    f"polling message batch {batch_id}")
        status = str(body.get("processing_status") or "?")
        counts = _counts(body)
        done = _count(counts.get("succeeded"))
        failed = sum([_count(counts.get(k)) for k in ("errored", "canceled", "expired")])
        url = body.get("results_url")
        return BatchStatus(batch_id, status, status == "ended", done=done, failed=failed,
                           total=done + failed + _count(counts.get("processing")),
                           outputs=(str(url),) if url else ())

    async def results(self, status: BatchStatus) -> dict[str, BatchAnswer]:
        answers: dict[str, BatchAnswer] = {}
        for url in status.outputs:
            what = f"reading the results of message batch {status.batch_id}"
            for row in _lines(await self.http.call("GET", url, what), what):
                custom_id = row.get("custom_id")
                if isinstance(custom_id, str):
                    answers[custom_id] = anthropic_answer(row)
        return answers


    async def aclose(self) -> None:
        await self.http.aclose()


def anthropic_answer(row: dict[str, Any]) -> BatchAnswer:
    """One line of a message batch's results."""
    result = row.get("result")
    if not isinstance(result, dict):
        return BatchAnswer(None, "the batch's line has no result")
    kind = result.get("type")
    if kind != "succeeded":
        error = result.get("error")
        detail = error.get("error", error) if isinstance(error, dict) else error
        message = detail.get("message") if isinstance(detail, dict) else detail
        return BatchAnswer(None, f"{kind}" + (f": {message}" if message else ""))
    message = result.get("message")
    if not isinstance(message, dict):
        return BatchAnswer(None, "a succeeded result without its message")
    try:
        return BatchAnswer(ChatResponse.from_body(completion_of(message), 200))
    except CallError as exc:
        return BatchAnswer(None, exc.message)
