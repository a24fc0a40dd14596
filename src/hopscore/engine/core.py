"""The request engine: adaptive concurrency, a hard per-attempt timeout, retries within a
per-request deadline, a response cache.

``await engine.complete(request)`` returns a :class:`CallResult` holding either a response or a
typed failure, with a record of every attempt sent; it never raises for a network or API
problem. Cache hits do not take a concurrency slot, and a request waiting out its back-off gives
its slot to another request.

Time limits:

* ``timeout`` bounds one attempt, from the moment it is sent (time queued for a slot in this
  process does not count). An attempt of the opening wave (sent before the endpoint's first
  reply, :mod:`hopscore.engine.limit`) is cut only when ``timeout`` has passed both since it
  was sent and since the endpoint last answered one of the opening wave: a one-slot server
  working through the wave answers one every reply-latency, and an attempt waiting its turn
  there is not abandoned (to be computed twice);
* the retry policy's deadline bounds one request over all its attempts and back-off waits
  (again without queue time): a Retry-After that would end past it is not waited for, and the
  last attempt only gets the time that is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from hopscore.engine.backend import ChatBackend, OpenAIBackend
from hopscore.engine.budget import BUDGET, Budget
from hopscore.engine.cache import ResponseCache
from hopscore.engine.capacity import ask_async
from hopscore.engine.classify import error_reply
from hopscore.engine.limit import OK, OTHER, RATE_LIMIT, TIMEOUT, ConcurrencyLimit
from hopscore.engine.outage import MAX_OUTAGE, Breaker
from hopscore.engine.reasoning import reasoning_of
from hopscore.engine.retry import RetryPolicy
from hopscore.engine.types import (
    API_ERROR,
    BACKEND_ERROR,
    CONNECTION,
    EMPTY_CONTENT,
    FATAL,
    AttemptRecord,
    CallError,
    CallFailure,
    CallResult,
    ChatRequest,
    ChatResponse,
)
from hopscore.engine.types import RATE_LIMIT as RATE_LIMITED
from hopscore.engine.types import TIMEOUT as TIMED_OUT


@dataclass(slots=True)
class EngineStats:
    """Running totals, for summaries and progress bars."""

    requests_sent: int = 0
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    failures_by_kind: dict[str, int] = field(default_factory=dict)
    #: why attempts were retried, by failure kind
    retried_by_kind: dict[str, int] = field(default_factory=dict)
    #: what the concurrency limit did (set by the engine)
    concurrency: dict[str, Any] | None = None

    def settled(self) -> str | None:
        """Where the concurrency limit ended and why, in words; None when there is nothing to
        say (it never ran, or stayed at --concurrency with a server that said nothing)."""
        c = self.concurrency
        if not c or not c.get("final") or not (c.get("changes") or c.get("server_slots")):
            return None
        if not c.get("adaptive"):
            return f"{c['final']} (--fixed-concurrency)"
        return f"{c['final']} ({c.get('why')}; lowest {c.get('lowest')}, highest {c.get('peak')})"

    def to_json(self) -> dict[str, Any]:
        """The ``requests`` block of a run's config.json."""
        out: dict[str, Any] = {"sent": self.requests_sent, "retries": self.retries,
                               "cache_hits": self.cache_hits, "failures": self.failures,
                               "retried_by_kind": dict(self.retried_by_kind)}
        if self.concurrency is not None:
            out["concurrency"] = self.concurrency
        return out


#: the most slots a server may declare and get filled (:mod:`hopscore.engine.capacity`)
MOST_DECLARED = 256


def batch_workers(concurrency: int, *, declared: bool = True) -> int:
    """How many items a batch should keep going at ``concurrency``: the ceiling, plus a few
    ready and waiting for a slot, so that a slot freed by a reply gets a request at once
    (before that reply is read, scored and written), not only after. With ``declared``, the
    ceiling is at least :data:`MOST_DECLARED`: a server that says it has more slots than
    ``concurrency`` (asked once the batch runs) gets them filled; items beyond the limit only
    wait for a slot. Without (a limit fixed at ``concurrency``, as a Ray driver's share of a
    cluster-wide one), the items a batch takes are held from the other workers: no more than
    the limit needs."""
    most = max(concurrency, MOST_DECLARED) if declared else concurrency
    return most + max(1, most // 8)


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
        adaptive: bool = True,
        rng: random.Random | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_outage: float = MAX_OUTAGE,
        say: Callable[[str], None] | None = None,
        budget: Budget | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.backend = backend
        self.concurrency = concurrency
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self.deadline = self.retry.deadline_for(timeout)
        self.cache = cache
        self.stats = EngineStats()
        #: --max-cost, --max-tokens-total, --max-time (:mod:`hopscore.engine.budget`)
        self.budget = budget
        self.limit = ConcurrencyLimit(concurrency, timeout, adaptive=adaptive)
        #: pauses the requests while the endpoint is unreachable (:mod:`hopscore.engine.outage`)
        self.breaker = Breaker(getattr(backend, "endpoint", "the endpoint"), max_outage,
                               say=say or _to_stderr)
        self._rng = rng or random.Random()
        self._sleep = sleep
        #: the first failure that says every request would fail (a wrong key or model)
        self._fatal: CallError | None = None
        #: when the endpoint last answered an attempt of the opening wave (perf_counter)
        self._opening_answered = 0.0
        #: the server has been asked how many requests it takes at once (:meth:`_ask`)
        self._asked: asyncio.Future[None] | None = None
        #: applied to each request before its key is made (a run's reasoning settings)
        self.shape: Callable[[ChatRequest], ChatRequest] | None = None

    @property
    def start_interval(self) -> float:
        """How far apart :func:`~hopscore.engine.run_batch` should start its workers: not at all
        when the limit adapts (it opens the slots of a raise one by one itself)."""
        return 0.0 if self.limit.adaptive else 0.005

    @property
    def workers(self) -> int:
        """How many items a batch should keep going for this engine (:func:`batch_workers`)."""
        return batch_workers(self.concurrency)

    def cache_key(self, request: ChatRequest) -> str:
        return request.cache_key(self.backend.endpoint)

    async def complete(self, request: ChatRequest) -> CallResult:
        """Send ``request`` (or answer it from the cache); retry transient failures."""
        if self.shape is not None:
            request = self.shape(request)
        key = self.cache_key(request)
        started = time.perf_counter()
        if self.cache is not None:
            hit = await self.cache.aget(key, (self.backend.endpoint, request.model))
            if hit is not None:
                self.stats.cache_hits += 1
                response, latency = hit
                elapsed = time.perf_counter() - started
                return CallResult(key, response, None, 0, latency, elapsed, cached=True)
        if self._asked is None or not self._asked.done():
            await self._ask()
        log: list[AttemptRecord] = []
        spent = 0.0  # attempts and waits, not time queued for a slot
        excused = 0  # attempts that failed during an outage: they use up no retry
        while True:
            left = self.deadline - spent
            budget = min(self.timeout, left)
            await self.breaker.wait()
            ticket = await self.limit.acquire()
            if self._fatal is not None:  # the key or model is wrong: nothing more is sent
                self.limit.release(ticket, OTHER)
                return self._failed(key, self._fatal, log, started)
            # a budget reached (checked once a slot is held, just before sending): nothing
            # more is sent; the requests in flight finish
            why = None if self.budget is None else self.budget.reached()
            if why is not None:
                self.limit.release(ticket, OTHER)
                return self._failed(key, CallError(BUDGET, why), log, started)
            opening = self.limit.opening
            attempt_started = time.perf_counter()
            self.stats.requests_sent += 1
            outcome = OTHER
            try:
                if opening:
                    sending = self._opening_attempt(request, budget, budget < self.timeout)
                else:
                    sending = self._attempt(request, budget, budget < self.timeout)
                if self.budget is not None and self.budget.abandon:
                    response = await self._unless_abandoned(sending)
                else:
                    response = await sending
                outcome = OK
                if self.budget is not None:  # counted before the slot goes to another request
                    self.budget.charge(response.usage)
            except CallError as error:
                outcome = TIMEOUT if error.kind == TIMED_OUT else \
                    RATE_LIMIT if error.kind == RATE_LIMITED else OTHER
                failure: CallError | None = error
            else:
                failure = None
            finally:
                elapsed = time.perf_counter() - attempt_started
                self.limit.release(ticket, outcome, elapsed)
            if failure is not None and failure.kind == BUDGET:  # given up in flight
                log.append(AttemptRecord(None, f"{failure.kind}: {failure.message}", elapsed))
                return self._failed(key, failure, log, started)
            if failure is not None and (failure.kind == CONNECTION or (
                    failure.status == 503 and self.breaker.down_since is not None)):
                # (a server restarted after an outage answers 503 while it loads its model)
                if self.breaker.failed(failure.message):
                    log.append(AttemptRecord(None, f"{failure.kind}: {failure.message} "
                                             "(during an outage: sent again)", elapsed))
                    excused += 1
                    continue
            elif failure is None or failure.status is not None:
                self.breaker.answered()
            else:
                self.breaker.neither()
            # what an opening attempt waited in the server's queue beyond the timeout is queue
            # time, not the request's: it does not use up the deadline
            spent += min(elapsed, budget)
            if failure is None:
                log.append(AttemptRecord(response.status, None, elapsed))
                if self.limit.waiting:  # the request given this slot goes out first, then
                    await asyncio.sleep(0)  # this reply is read and its row written
                return self._succeeded(key, request, response, elapsed, log, started)
            log.append(AttemptRecord(failure.status, f"{failure.kind}: {failure.message}",
                                     elapsed))
            if failure.kind == FATAL:
                self._fatal = failure
            if not failure.retryable or len(log) - excused > self.retry.max_retries:
                return self._failed(key, failure, log, started)
            wait = self.retry.delay(len(log) - excused, failure.retry_after, self._rng)
            if spent + wait >= self.deadline:
                return self._failed(key, _past_deadline(failure, wait, self.deadline), log,
                                    started)
            self.stats.retries += 1
            kinds = self.stats.retried_by_kind
            kinds[failure.kind] = kinds.get(failure.kind, 0) + 1
            await self._sleep(wait)
            spent += wait

    async def _ask(self) -> None:
        """Once, before the first request: how many requests the server says it works on at
        once (:mod:`hopscore.engine.capacity`); the limit is fitted to it."""
        if self._asked is None:
            self._asked = asyncio.get_running_loop().create_future()
            try:
                capacity = None
                if self.limit.adaptive and isinstance(self.backend, OpenAIBackend):
                    capacity = await ask_async(self.backend.endpoint,
                                               getattr(self.backend, "_headers", None))
                if capacity is not None:
                    self.limit.declare(capacity.slots, capacity.source)
            finally:
                self._asked.set_result(None)
        await asyncio.shield(self._asked)

    def _succeeded(self, key: str, request: ChatRequest, response: ChatResponse, latency: float,
                   log: list[AttemptRecord], started: float) -> CallResult:
        self.stats.prompt_tokens += response.usage.prompt_tokens
        self.stats.completion_tokens += response.usage.completion_tokens
        self.stats.reasoning_tokens += response.usage.reasoning_tokens
        self.stats.cached_tokens += response.usage.cached_tokens
        if self.cache is not None:
            self.cache.put(key, response, latency, (self.backend.endpoint, request.model))
        return CallResult(key, response, None, len(log), latency,
                          time.perf_counter() - started, attempt_log=tuple(log))

    async def _unless_abandoned(self, sending: Awaitable[ChatResponse]) -> ChatResponse:
        """``sending``'s reply, unless a budget is reached first (``--on-budget abandon``):
        then the request is given up and fails with the kind :data:`BUDGET`."""
        assert self.budget is not None
        stop = self.budget.stop_signal()
        task = asyncio.ensure_future(sending)
        waiter = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, CallError):
                    await task
        if not task.cancelled():
            return task.result()
        why = self.budget.reached() or "a budget was reached"
        raise CallError(BUDGET, f"{why}; this request was given up in flight "
                                "(--on-budget abandon)")

    async def _opening_attempt(self, request: ChatRequest, budget: float, by_deadline: bool
                               ) -> ChatResponse:
        """An attempt of the opening wave: timed out only ``budget`` after both its sending and
        the endpoint's last answer to the opening wave (see the module docstring)."""
        sent = time.perf_counter()
        # the backend's own timer is only a backstop: a wave of `concurrency` requests at a
        # one-slot server, each answered within the budget
        call = asyncio.ensure_future(self._attempt(request, budget * (self.concurrency + 1),
                                                   by_deadline))
        try:
            while True:
                cut = max(sent, self._opening_answered) + budget
                done, _ = await asyncio.wait({call}, timeout=max(0.0, cut - time.perf_counter()))
                if done:
                    break
                if max(sent, self._opening_answered) + budget <= time.perf_counter():
                    call.cancel()
                    with contextlib.suppress(asyncio.CancelledError, CallError):
                        await call
                    raise CallError(TIMED_OUT, _timeout_text(budget, by_deadline))
        except asyncio.CancelledError:
            call.cancel()
            raise
        try:
            response = call.result()
        except CallError as error:
            if error.status is not None:  # the endpoint answered, with an error
                self._opening_answered = time.perf_counter()
            if error.kind == TIMED_OUT:
                error.message = _timeout_text(budget, by_deadline)
            raise
        self._opening_answered = time.perf_counter()
        return response

    async def _attempt(self, request: ChatRequest, budget: float, by_deadline: bool
                       ) -> ChatResponse:
        try:
            # The backend gets the budget too (its read timeout); this is the hard bound that
            # also catches a server trickling bytes forever (asyncio.timeout, not wait_for,
            # which runs the send as a task of its own, a task more per request)
            async with asyncio.timeout(budget):
                response = await self.backend.send(request, budget)
        except TimeoutError:
            raise CallError(TIMED_OUT, _timeout_text(budget, by_deadline)) from None
        except CallError as error:
            if error.kind == TIMED_OUT and by_deadline:
                error.message = _timeout_text(budget, by_deadline)
            raise
        except Exception as exc:  # a backend bug must not kill a whole batch
            raise CallError(BACKEND_ERROR, f"{type(exc).__name__}: {exc}") from None
        if not response.tool_calls:
            problem = error_reply(response.content)
            if problem is not None:
                raise CallError(API_ERROR, f"the reply is an API error message: {problem!r}",
                                status=response.status)
        blank = not (response.content or "").strip()
        # reasoning with no answer (thinking cut at max_tokens) is a reply, counted apart
        if request.require_content and blank and not response.tool_calls \
                and reasoning_of(response.raw) is None:
            what = "null" if response.content is None else "blank"
            raise CallError(EMPTY_CONTENT, f"the reply's content is {what}, with no tool calls",
                            status=response.status)
        return response

    def _failed(self, key: str, error: CallError, log: list[AttemptRecord],
                started: float) -> CallResult:
        self.stats.failures += 1
        self.stats.failures_by_kind[error.kind] = self.stats.failures_by_kind.get(error.kind, 0) + 1
        failure = CallFailure(error.kind, error.message, error.status)
        return CallResult(key, None, failure, len(log), None, time.perf_counter() - started,
                          attempt_log=tuple(log))

    async def aclose(self) -> None:
        self.stats.concurrency = self.limit.stats.to_json()
        if self.breaker.outages:
            self.stats.concurrency["outages"] = self.breaker.outages
            self.stats.concurrency["outage_s"] = round(self.breaker.outage_s, 3)
        try:
            await self.backend.aclose()
        finally:
            if self.cache is not None:
                await self.cache.aclose()


def _to_stderr(message: str) -> None:
    print(f"hopscore: {message}", file=sys.stderr, flush=True)


def _timeout_text(budget: float, by_deadline: bool) -> str:
    if by_deadline:
        return f"no response within {budget:.3g} s, the time left before the request's deadline"
    return f"no response within {budget:g} s"


def _past_deadline(error: CallError, wait: float, deadline: float) -> CallError:
    if error.retry_after is not None and error.retry_after >= wait:
        why = f"the server asked to wait {error.retry_after:g} s"
    else:
        why = f"the next retry would wait {wait:.3g} s"
    message = f"{error.message} (not retried: {why}, past the request's {deadline:g} s deadline)"
    return CallError(error.kind, message, status=error.status, retry_after=error.retry_after)
