"""Global per-endpoint concurrency limits under ``--executor ray``.

Each endpoint's limit is one :class:`Limiter` (a Ray actor once the cluster is up): every
attempt on a worker holds one of its slots while it is out. The driver works on rows too (from
the start, while Ray starts or connects): its attempts hold slots of a :class:`DriverSlots`, a
lease of the limit counted in the driver. The lease is the whole limit until workers are ready
(the limiter is made holding all of it for the driver), then shrinks to the driver's share,
each slot handed to the limiter as it comes free. So the driver and the workers together never
have more than the limit out, before, during and after the hand-over, and the driver's own
requests cost no remote call.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import Counter, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hopscore.engine import ChatBackend, ChatRequest, ChatResponse


def wake(waiting: deque[asyncio.Future[None]], count: int) -> None:
    """Wake up to ``count`` of the asks in ``waiting``, oldest first (those already done, by a
    timeout or a cancel, take no wake-up)."""
    while count > 0 and waiting:
        waiter = waiting.popleft()
        if not waiter.done():
            waiter.set_result(None)
            count -= 1


class Limiter:
    """One endpoint's concurrency limit across the cluster (a Ray actor): at most ``limit``
    attempts hold a slot at a time. Slots are counted per holder, so a dead worker's are freed
    with :meth:`forget`; ``held``: slots already in use when it is made (the driver's).

    An attempt cancelled while it asks (its timeout ran out waiting for a slot) gives its
    ticket up with :meth:`drop`: a slot granted to it is given back, one not yet granted never
    is, whichever of the two calls runs first."""

    def __init__(self, limit: int, held: dict[str, int] | None = None) -> None:
        self.limit = limit
        self.held: Counter[str] = Counter({k: v for k, v in (held or {}).items() if v > 0})
        self.used = sum(self.held.values())
        self.peak = self.used
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.granted: set[str] = set()
        self.dropped: set[str] = set()
        #: holders that died (:meth:`forget`)
        self.gone: set[str] = set()

    async def acquire(self, holder: str, ticket: str = "") -> bool:
        while (self.used >= self.limit and ticket not in self.dropped
               and holder not in self.gone):
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            await waiter
        if ticket in self.dropped or holder in self.gone:
            # dropped, or its worker died while it waited: it must take nothing
            self.dropped.discard(ticket)
            self._wake(1)  # the wake-up this one may have had is passed on
            return False
        self.used += 1
        self.peak = max(self.peak, self.used)
        self.held[holder] += 1
        if ticket:
            self.granted.add(ticket)
        return True

    def release(self, holder: str, ticket: str = "") -> None:
        self.granted.discard(ticket)
        if holder not in self.gone and self.held[holder] > 0:
            self.held[holder] -= 1
            self.used -= 1
            self._wake(1)

    def drop(self, holder: str, ticket: str) -> None:
        if ticket in self.granted:
            self.release(holder, ticket)
        else:
            self.dropped.add(ticket)
            self._wake(len(self.waiting))  # the waiting one sees it is dropped

    def give_back(self, holder: str, count: int) -> None:
        """``count`` of ``holder``'s slots are free (the driver's lease shrinking)."""
        count = min(count, self.held[holder])
        self.held[holder] -= count
        self.used -= count
        self._wake(count)

    def forget(self, holder: str) -> int:
        """``holder`` is dead: its slots are free, and its asks still waiting take none."""
        self.gone.add(holder)
        count = self.held.pop(holder, 0)
        self.used -= count
        self._wake(len(self.waiting))  # its waiting asks see it is gone
        return count

    def _wake(self, count: int) -> None:
        wake(self.waiting, count)

    def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "used": self.used, "peak": self.peak}


async def ask(limiter: Any, holder: str) -> str:
    """Take a slot of the ``limiter`` actor for ``holder``; the ticket to give it back with.
    Cancelled while asking, the ask is dropped (no slot stays taken)."""
    ticket = uuid.uuid4().hex
    try:
        await limiter.acquire.remote(holder, ticket)
    except asyncio.CancelledError:
        limiter.drop.remote(holder, ticket)
        raise
    return ticket


class Slots(Protocol):
    """Where an attempt takes its slot of an endpoint's limit: :meth:`acquire` returns the
    ticket that :meth:`release` gives back."""

    async def acquire(self) -> str: ...

    def release(self, ticket: str) -> None: ...


class RemoteSlots:
    """A worker's slots: asked of the cluster's :class:`Limiter` actor under ``holder``, and
    passed on here. A slot whose attempt ends goes straight to an attempt of this worker that
    waits for one (no remote call), and back to the limiter only when none waits; a slot the
    limiter grants after its attempt stopped waiting is given back at once. So the worker holds
    exactly the slots its attempts use, and a busy worker sends two remote calls per slot it
    gains or gives up, not per request."""

    def __init__(self, limiter: Any, holder: str) -> None:
        self.limiter = limiter
        self.holder = holder
        #: the tickets of the slots this worker holds
        self.tickets: list[str] = []
        self._waiting: deque[asyncio.Future[str]] = deque()
        self._asking = 0
        self._asks: set[asyncio.Task[None]] = set()

    async def acquire(self) -> str:
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        if self._asking < len(self._waiting):
            self._asking += 1
            task = asyncio.create_task(self._ask())
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(waiter.result())  # handed a slot as it was cancelled
            else:
                with contextlib.suppress(ValueError):
                    self._waiting.remove(waiter)
            raise

    async def _ask(self) -> None:
        try:
            ticket = await ask(self.limiter, self.holder)
        finally:
            self._asking -= 1
        self.tickets.append(ticket)
        self._pass(ticket)

    def release(self, ticket: str) -> None:
        self._pass(ticket)

    def _pass(self, ticket: str) -> None:
        """The slot of ``ticket`` to the next attempt waiting here, or back to the limiter."""
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(ticket)
                return
        self.tickets.remove(ticket)
        self.limiter.release.remote(self.holder, ticket)


#: the ticket of a slot the driver counted itself
_HERE = ""


class DriverSlots:
    """The driver's slots of one endpoint: a lease, counted here without asking anyone.

    Before the cluster is up the lease is the whole limit. At :meth:`hand_over` the cluster's
    limiter is made holding the whole limit for the driver (``Limiter(limit, {holder:
    limit})``), so the workers get nothing yet; once workers are ready, :meth:`share` shrinks
    the lease to the driver's share, each slot given back to the limiter as the driver's
    attempts end. The driver's attempts never ask the limiter (no remote call per request),
    and the driver's slots plus the workers' never exceed the limit."""

    def __init__(self, limit: int, holder: str) -> None:
        self.limit = limit
        self.holder = holder
        self.used = 0
        #: the slots the driver may use (held for it in the limiter once there is one)
        self.lease = limit
        self.target = limit
        #: the most attempts the driver had out at once
        self.peak = 0
        self.limiter: Any = None
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> str:
        while self.used >= self.lease:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake(1)  # woken and cancelled at once: pass the wake-up on
                raise
        self.used += 1
        self.peak = max(self.peak, self.used)
        return _HERE

    def release(self, ticket: str) -> None:
        self.used -= 1
        self._shrink()
        self._wake(self.lease - self.used)

    def hand_over(self, limiter: Any) -> None:
        """The limit is the cluster's ``limiter`` from now on; it must have been made holding
        the whole limit for :attr:`holder` (``Limiter(limit, {holder: limit})``)."""
        self.limiter = limiter

    def share(self, slots: int) -> None:
        """Keep ``slots`` of the limit (at least 1), the rest going to the workers: free ones
        at once, the others as the driver's attempts end."""
        self.target = max(1, min(slots, self.limit))
        self._shrink()

    def alone(self) -> None:
        """The cluster is gone: the whole limit is the driver's again, counted here."""
        self.limiter = None
        self.lease = self.target = self.limit
        self._wake(self.lease - self.used)

    def _shrink(self) -> None:
        surplus = min(self.lease - self.target, self.lease - self.used)
        if self.limiter is not None and surplus > 0:
            self.lease -= surplus
            self.limiter.give_back.remote(self.holder, surplus)

    def _wake(self, count: int) -> None:
        wake(self._waiting, count)


class GatedBackend:
    """A backend whose every attempt holds a slot of its endpoint's limit."""

    def __init__(self, inner: ChatBackend, slots: Slots) -> None:
        self.inner = inner
        self.endpoint = inner.endpoint
        self.slots = slots

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        ticket = await self.slots.acquire()
        try:
            return await self.inner.send(request, timeout)
        finally:
            self.slots.release(ticket)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(slots=True)
class ClusterGate:
    """The :class:`~hopscore.distributed.Gate` of a worker or of the driver: the slots by
    endpoint (an endpoint without a limit here is not gated)."""

    slots: dict[str, Slots]

    def wrap(self, backend: ChatBackend) -> ChatBackend:
        slots = self.slots.get(backend.endpoint)
        return backend if slots is None else GatedBackend(backend, slots)
