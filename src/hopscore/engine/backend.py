"""Backends send one attempt of a chat request; the engine around them retries, caches, limits.

:class:`ChatBackend` is the whole contract, so a model that runs in-process (a local GGUF model,
a test double) plugs into the same engine as an HTTP endpoint. :class:`OpenAIBackend` talks to
any OpenAI-compatible endpoint through the official async client, with the SDK's own retries
switched off so that the engine's policy is the only one in force.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from hopscore.engine.retry import parse_retry_after
from hopscore.engine.types import (
    BACKEND_ERROR,
    CLIENT_ERROR,
    CONNECTION,
    FATAL,
    MALFORMED_BODY,
    RATE_LIMIT,
    SERVER_ERROR,
    TIMEOUT,
    CallError,
    ChatRequest,
    ChatResponse,
)

if TYPE_CHECKING:
    import openai

CONNECTIONS_PER_CLIENT = 8


class ChatBackend(Protocol):
    """Sends one attempt. Raise :class:`CallError` on failure; the engine handles retries."""

    #: Identifies what answers (base URL, or e.g. "local:smollm2"); part of every cache key.
    endpoint: str

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse: ...

    async def aclose(self) -> None: ...


class OpenAIBackend:
    """Chat completions on an OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...).

    ``concurrency`` is a hint: requests are spread round-robin over one client per
    :data:`CONNECTIONS_PER_CLIENT` concurrent requests. The HTTP pool under the SDK scans all
    of its connections on every request, so one pool of 64 connections costs noticeably more
    CPU per request than eight pools of 8 (see bench/judge_throughput.py).
    """

    def __init__(self, base_url: str | None, api_key: str | None, *, concurrency: int = 1) -> None:
        import openai  # deferred: importing the SDK takes about a second

        self.endpoint = endpoint_of(base_url)
        count = max(1, -(-concurrency // CONNECTIONS_PER_CLIENT))
        self._clients = [
            openai.AsyncOpenAI(base_url=base_url or None, api_key=api_key or "EMPTY", max_retries=0)
            for _ in range(count)
        ]
        self._next = 0

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        import openai

        try:
            # The client's generic post (the SDK's documented way to call any endpoint) sends
            # the body as is and returns the raw text: no per-request transformation of typed
            # parameters (about half the client's CPU time per call) and the body is parsed here,
            # where malformed, empty and null replies are classified.
            body = {"model": request.model, "messages": request.messages, **request.body()}
            client = self._clients[self._next]
            self._next = (self._next + 1) % len(self._clients)
            text = await client.post(
                "/chat/completions", cast_to=str, body=body, options={"timeout": timeout}
            )
        except openai.APITimeoutError:
            raise CallError(TIMEOUT, f"no response within {timeout:g} s") from None
        except openai.APIConnectionError as exc:
            raise CallError(CONNECTION, _describe_connection_error(exc)) from None
        except openai.APIStatusError as exc:
            headers = dict(exc.response.headers)
            raise status_error(exc.status_code, _error_message(exc), headers) from None
        except openai.APIResponseValidationError as exc:
            raise CallError(MALFORMED_BODY, str(exc)) from None
        except openai.OpenAIError as exc:
            raise CallError(BACKEND_ERROR, f"{type(exc).__name__}: {exc}") from None
        return parse_body(text)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()


def endpoint_of(base_url: str | None) -> str:
    """The endpoint an :class:`OpenAIBackend` for ``base_url`` reports (part of cache keys)."""
    return (base_url or "https://api.openai.com/v1").rstrip("/")


def status_error(status: int, message: str, headers: dict[str, str]) -> CallError:
    """Classify an HTTP error status: 429 and 5xx (and 408/409) are retried, 401/403/404 stop."""
    retry_after = parse_retry_after(headers)
    if status == 429:
        return CallError(RATE_LIMIT, message, status=status, retry_after=retry_after)
    if status >= 500 or status in (408, 409):
        return CallError(SERVER_ERROR, message, status=status, retry_after=retry_after)
    if status in (401, 403, 404):
        return CallError(FATAL, message, status=status)
    return CallError(CLIENT_ERROR, message, status=status)


def parse_body(text: str) -> ChatResponse:
    """Parse a 2xx body into a :class:`ChatResponse`; anything else is a retryable failure."""
    try:
        body = json.loads(text)
    except ValueError:
        snippet = text[:120].replace("\n", " ")
        raise CallError(MALFORMED_BODY, f"response body is not JSON: {snippet!r}") from None
    if not isinstance(body, dict):
        raise CallError(MALFORMED_BODY, "response body is not a JSON object")
    if "choices" not in body and "error" in body:
        # Some gateways answer 200 with an error object (e.g. an upstream provider failed).
        raise CallError(MALFORMED_BODY, f"error object in a 200 response: {_short(body['error'])}")
    return ChatResponse.from_body(body)


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    text = exc.response.text if exc.response is not None else ""
    return text[:200] or str(exc)


def _describe_connection_error(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    if cause is not None:
        return f"{exc.message} ({type(cause).__name__}: {cause})"
    return exc.message


def _short(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return str(value["message"])[:200]
    return json.dumps(value)[:200]
