"""The request engine: bounded concurrency, a hard per-attempt timeout, retries, a response cache.

``await engine.complete(request)`` returns a :class:`CallResult` holding either a response or a
typed failure; it never raises for a network or API problem. Cache hits do not take a
concurrency slot, and a request waiting out its back-off gives its slot to another request.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from hopscore.engine.backend import ChatBackend
from hopscore.engine.cache import ResponseCache
from hopscore.engine.retry import RetryPolicy
from hopscore.engine.types import (
    BACKEND_ERROR,
    EMPTY_CONTENT,
    TIMEOUT,
    CallError,
    CallFailure,
    CallResult,
    ChatRequest,
    ChatResponse,
)


@dataclass(slots=True)
class EngineStats:
    """Running totals, for summaries and progress bars."""

    requests_sent: int = 0
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures_by_kind: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, int]:
        """The ``requests`` block of a run's config.json."""
        return {"sent": self.requests_sent, "retries": self.retries,
                "cache_hits": self.cache_hits, "failures": self.failures}


class ChatEngine:
    """Sends chat requests through a backend with the project's retry, timeout and cache rules."""

    def __init__(
        self,
        backend: ChatBackend,
        *,
        concurrency: int = 8,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        cache: ResponseCache | None = None,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.backend = backend
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.cache = cache
        self.stats = EngineStats()
        self._slots = asyncio.Semaphore(concurrency)
        self._rng = rng or random.Random()
        self._sleep = sleep

    def cache_key(self, request: ChatRequest) -> str:
        return request.cache_key(self.backend.endpoint)

    async def complete(self, request: ChatRequest) -> CallResult:
        """Send ``request`` (or answer it from the cache); retry transient failures."""
        key = self.cache_key(request)
        started = time.perf_counter()
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                response, latency = hit
                elapsed = time.perf_counter() - started
                return CallResult(key, response, None, 0, latency, elapsed, cached=True)
        attempts = 0
        while True:
            attempts += 1
            attempt_started = time.perf_counter()
            try:
                async with self._slots:
                    attempt_started = time.perf_counter()
                    self.stats.requests_sent += 1
                    response = await self._attempt(request)
            except CallError as error:
                if not error.retryable or attempts > self.retry.max_retries:
                    return self._failed(key, error, attempts, started)
                self.stats.retries += 1
                await self._sleep(self.retry.delay(attempts, error.retry_after, self._rng))
                continue
            latency = time.perf_counter() - attempt_started
            self.stats.prompt_tokens += response.usage.prompt_tokens
            self.stats.completion_tokens += response.usage.completion_tokens
            if self.cache is not None:
                self.cache.put(key, response, latency)
            return CallResult(key, response, None, attempts, latency, time.perf_counter() - started)

    async def _attempt(self, request: ChatRequest) -> ChatResponse:
        try:
            # The backend gets the timeout too (the SDK's read timeout); wait_for is the hard
            # deadline that also catches a server trickling bytes forever.
            response = await asyncio.wait_for(
                self.backend.send(request, self.timeout), timeout=self.timeout + 1.0
            )
        except asyncio.TimeoutError:
            raise CallError(TIMEOUT, f"no response within {self.timeout:g} s") from None
        except CallError:
            raise
        except Exception as exc:  # a backend bug must not kill a whole batch
            raise CallError(BACKEND_ERROR, f"{type(exc).__name__}: {exc}") from None
        blank = not (response.content or "").strip()
        if request.require_content and blank and not response.tool_calls:
            what = "null" if response.content is None else "blank"
            raise CallError(EMPTY_CONTENT, f"the reply's content is {what}, with no tool calls")
        return response

    def _failed(self, key: str, error: CallError, attempts: int, started: float) -> CallResult:
        self.stats.failures += 1
        self.stats.failures_by_kind[error.kind] = self.stats.failures_by_kind.get(error.kind, 0) + 1
        failure = CallFailure(error.kind, error.message, error.status)
        return CallResult(key, None, failure, attempts, None, time.perf_counter() - started)

    async def aclose(self) -> None:
        await self.backend.aclose()
        if self.cache is not None:
            self.cache.close()
