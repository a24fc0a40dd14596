"""``--executor ray``: a command's rows on a Ray cluster, its output written by the driver alone.

* **Connection.** ``RAY_ADDRESS`` set: that cluster (``ray://`` client or a head's address).
  Unset: an embedded local Ray bound to 127.0.0.1 (its servers listen on loopback only), with
  ``--ray-workers`` CPUs (default: this machine's). It is stopped when the command ends.
* **Workers.** One actor per CPU (``num_cpus=1``), each holding the command's work function,
  built by the runner's :class:`~hopscore.distributed.WorkFactory` inside the actor: the same
  request engine (retries, cache, per-attempt timeout), agent loop and SQL sandbox as a local
  run. The driver's :func:`~hopscore.engine.run_batch` hands each item to :meth:`RayPool.work`;
  the pool sends items to the actor with room in batches and each finished row streams back
  at once (a streaming generator per batch). The driver appends it to the output: one writer,
  the same resume keys and files as a local run.
* **Failures.** When an actor or its node dies, the rows of its batches that had not come back
  are sent to another actor (a fresh one takes the dead one's place); a row is written once,
  when its first result arrives, so nothing is lost and nothing is written twice. An item whose
  worker died :data:`MAX_LOSSES` times is recorded as a failed row (``worker_lost``), retried
  by the next run like any failed request.
* **Global limits.** Each endpoint's concurrency limit is one :class:`Limiter` actor: every
  attempt, on any worker, holds one of its slots, so adding nodes never overruns a
  rate-limited API. A dead worker's slots are given back.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections import Counter, deque
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hopscore.distributed.work import Built, WorkFactory
from hopscore.engine import CallFailure, EngineStats, RowResult
from hopscore.errors import HopscoreError

if TYPE_CHECKING:
    from hopscore.engine import ChatBackend, ChatRequest, ChatResponse

#: Times an item may lose its worker before it is recorded as failed.
MAX_LOSSES = 3
WORKER_LOST = "worker_lost"
#: set before ``import ray``: a local Ray then advertises and binds 127.0.0.1 only
_LOOPBACK = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def connect(workers: int | None) -> tuple[Any, bool]:
    """``(ray, started)``: Ray connected to ``RAY_ADDRESS``, or an embedded local Ray on
    127.0.0.1 (``started``: this process started it and must shut it down)."""
    address = os.environ.get("RAY_ADDRESS")
    host = (address or "").split("://")[-1].rsplit(":", 1)[0]
    if not address or host in ("127.0.0.1", "localhost", "::1", "[::1]"):
        os.environ.setdefault(_LOOPBACK, "0")  # a Ray on this machine: loopback only
    try:
        import ray
    except ImportError:
        raise HopscoreError("--executor ray needs Ray: pip install 'hopscore[ray]'") from None
    if ray.is_initialized():
        return ray, False
    quiet: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            # address="local": a new Ray of our own, never one found on this machine (a
            # `ray start` cluster, or the stale address file a killed Ray leaves behind)
            ray.init(address="local", num_cpus=workers or os.cpu_count() or 1,
                     _node_ip_address="127.0.0.1", include_dashboard=False, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = f"RAY_ADDRESS={address}" if address else "a local Ray"
        raise HopscoreError(f"--executor ray: cannot start or reach {where}: {exc}") from None
    return ray, True


def _classes(ray: Any) -> tuple[Any, Any]:
    """The two actor classes, made remote on first use (so importing this module needs no Ray)."""
    global _REMOTE
    if _REMOTE is None:
        limiter = ray.remote(num_cpus=0, max_concurrency=100_000)(Limiter)
        worker = ray.remote(num_cpus=1, max_restarts=0, max_concurrency=100_000)(BatchWorker)
        _REMOTE = (limiter, worker)
    return _REMOTE


_REMOTE: tuple[Any, Any] | None = None


class Limiter:
    """One endpoint's concurrency limit across the cluster (a Ray actor): at most ``limit``
    attempts hold a slot at a time. Slots are counted per holder, so a dead worker's are freed
    with :meth:`forget`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0
        self.peak = 0
        self.held: Counter[str] = Counter()
        self.waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self, holder: str) -> None:
        while self.used >= self.limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(waiter)
            await waiter
        self.used += 1
        self.peak = max(self.peak, self.used)
        self.held[holder] += 1

    def release(self, holder: str) -> None:
        if self.held[holder] > 0:
            self.held[holder] -= 1
            self.used -= 1
            self._wake(1)

    def forget(self, holder: str) -> int:
        count = self.held.pop(holder, 0)
        self.used -= count
        self._wake(count)
        return count

    def _wake(self, count: int) -> None:
        while count > 0 and self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                count -= 1

    def stats(self) -> dict[str, int]:
        return {"limit": self.limit, "used": self.used, "peak": self.peak}


class _GatedBackend:
    """A backend whose every attempt holds a slot of its endpoint's :class:`Limiter`."""

    def __init__(self, inner: ChatBackend, limiter: Any, holder: str) -> None:
        self.inner = inner
        self.endpoint = inner.endpoint
        self.limiter = limiter
        self.holder = holder

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        await self.limiter.acquire.remote(self.holder)
        try:
            return await self.inner.send(request, timeout)
        finally:
            self.limiter.release.remote(self.holder)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(slots=True)
class ClusterGate:
    """The :class:`~hopscore.distributed.Gate` of one worker: the limiters by endpoint."""

    limiters: dict[str, Any]
    holder: str

    def wrap(self, backend: ChatBackend) -> ChatBackend:
        limiter = self.limiters.get(backend.endpoint)
        if limiter is None:
            return backend
        return _GatedBackend(backend, limiter, self.holder)


def _stats_json(stats: EngineStats | None) -> dict[str, Any]:
    if stats is None:
        return {}
    return {"requests_sent": stats.requests_sent, "retries": stats.retries,
            "cache_hits": stats.cache_hits, "failures": stats.failures,
            "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "failures_by_kind": dict(stats.failures_by_kind)}


class BatchWorker:
    """A Ray actor holding one built work function; :meth:`run` streams a batch's rows."""

    def __init__(self, factory: WorkFactory, limiters: dict[str, Any], holder: str) -> None:
        self.factory = factory
        self.gate = ClusterGate(limiters, holder)
        self.built: Built | None = None
        self.lock = asyncio.Lock()

    def pid(self) -> int:
        return os.getpid()

    async def _built(self) -> Built:
        async with self.lock:
            if self.built is None:
                self.built = await self.factory.build(self.gate)
            return self.built

    async def run(self, batch: list[tuple[str, Any]]) -> Any:
        """Yield ``(key, RowResult, stats)`` for each item of ``batch`` as it finishes."""
        built = await self._built()

        async def one(key: str, item: Any) -> tuple[str, RowResult]:
            return key, await built.work(item, key)

        for finished in asyncio.as_completed([one(key, item) for key, item in batch]):
            key, result = await finished
            yield key, result, _stats_json(built.stats())

    async def close(self) -> None:
        if self.built is not None:
            await self.built.close()


@dataclass(slots=True)
class _Actor:
    handle: Any
    holder: str
    inflight: int = 0
    alive: bool = True


@dataclass(slots=True)
class _Item:
    key: str
    #: what travels to the worker (None when the worker finds the item by its key)
    item: Any
    future: asyncio.Future[RowResult]
    #: the driver's item (for the failed row of an item whose workers kept dying)
    local: Any = None
    losses: int = 0


@dataclass(slots=True)
class PoolCounts:
    """What the pool did: for config.json and the tests."""

    workers: int = 0
    worker_deaths: int = 0
    resent: int = 0
    lost: int = 0
    #: the most attempts that held a slot at once, per endpoint
    peak_in_flight: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"executor": "ray", "workers": self.workers, "worker_deaths": self.worker_deaths,
                "rows_resent": self.resent, "rows_lost": self.lost,
                "peak_in_flight": self.peak_in_flight}


class RayPool:
    """Runs a factory's work on Ray actors; :meth:`work` is a drop-in work function for
    :func:`~hopscore.engine.run_batch` (see the module docstring)."""

    def __init__(self, factory: WorkFactory, *, limits: dict[str, int], per_worker: int,
                 workers: int | None = None) -> None:
        self.factory = factory
        self.limits = limits
        self.per_worker = max(1, per_worker)
        self.requested = workers
        self.counts = PoolCounts()
        self._ray: Any = None
        self._started = False
        self._actors: list[_Actor] = []
        self._limiters: dict[str, Any] = {}
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._room = asyncio.Event()
        self._snapshots: dict[str, dict[str, Any]] = {}
        self._dispatcher: asyncio.Task[None] | None = None
        self._batches: set[asyncio.Task[None]] = set()

    # --- life ---------------------------------------------------------------------------

    async def start(self) -> RayPool:
        self._ray, self._started = await asyncio.to_thread(connect, self.requested)
        limiter_class, _ = _classes(self._ray)
        self._limiters = {endpoint: limiter_class.remote(limit)
                          for endpoint, limit in self.limits.items()}
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        count = max(1, min(self.requested or cpus, cpus))
        for _ in range(count):
            self._actors.append(self._new_actor())
        self.counts.workers = count
        self._room.set()
        self._dispatcher = asyncio.create_task(self._dispatch())
        return self

    def _new_actor(self) -> _Actor:
        _, worker_class = _classes(self._ray)
        holder = uuid.uuid4().hex
        return _Actor(worker_class.remote(self.factory, self._limiters, holder), holder)

    @property
    def capacity(self) -> int:
        """Items to keep in flight: every worker's share."""
        return self.per_worker * max(1, len(self._actors))

    async def pids(self) -> list[int]:
        """The process ids of the live workers (the tests kill one)."""
        refs = [actor.handle.pid.remote() for actor in self._actors if actor.alive]
        return list(await asyncio.gather(*refs))

    async def close(self) -> None:
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
        for task in list(self._batches):
            task.cancel()
        await asyncio.gather(*self._batches, return_exceptions=True)
        for endpoint, limiter in self._limiters.items():
            with suppress(Exception):  # the cluster may be gone already
                self.counts.peak_in_flight[endpoint] = int(
                    (await limiter.stats.remote())["peak"])
        closing = [actor.handle.close.remote() for actor in self._actors if actor.alive]
        await asyncio.gather(*closing, return_exceptions=True)
        if self._started:
            await asyncio.to_thread(self._ray.shutdown)

    # --- the work function ----------------------------------------------------------------

    async def work(self, item: Any, key: str) -> RowResult:
        future: asyncio.Future[RowResult] = asyncio.get_running_loop().create_future()
        sent = item if self.factory.ships_items else None
        self._queue.put_nowait(_Item(key, sent, future, item))
        return await future

    @property
    def stats(self) -> EngineStats:
        """The request counts of every worker (a dead worker's up to its last row)."""
        total = EngineStats()
        for snapshot in self._snapshots.values():
            total.requests_sent += int(snapshot.get("requests_sent", 0))
            total.retries += int(snapshot.get("retries", 0))
            total.cache_hits += int(snapshot.get("cache_hits", 0))
            total.failures += int(snapshot.get("failures", 0))
            total.prompt_tokens += int(snapshot.get("prompt_tokens", 0))
            total.completion_tokens += int(snapshot.get("completion_tokens", 0))
            for kind, n in (snapshot.get("failures_by_kind") or {}).items():
                total.failures_by_kind[kind] = total.failures_by_kind.get(kind, 0) + int(n)
        return total

    # --- dispatching ------------------------------------------------------------------------

    def _free_actor(self) -> _Actor | None:
        live = [a for a in self._actors if a.alive and a.inflight < self.per_worker]
        return min(live, key=lambda a: a.inflight) if live else None

    async def _dispatch(self) -> None:
        while True:
            first = await self._queue.get()
            actor = self._free_actor()
            while actor is None:
                self._room.clear()
                await self._room.wait()
                actor = self._free_actor()
            batch = [first]
            while len(batch) < self.per_worker - actor.inflight and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            actor.inflight += len(batch)
            task = asyncio.create_task(self._run(actor, batch))
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)

    async def _run(self, actor: _Actor, batch: list[_Item]) -> None:
        exceptions = self._ray.exceptions
        pending = {item.key: item for item in batch}
        try:
            stream = actor.handle.run.options(num_returns="streaming").remote(
                [(item.key, item.item) for item in batch])
            async for ref in stream:
                key, result, snapshot = await ref
                self._snapshots[actor.holder] = snapshot
                entry = pending.pop(key, None)
                actor.inflight -= 1
                self._room.set()
                if entry is not None and not entry.future.done():
                    entry.future.set_result(result)
        except exceptions.RayTaskError as exc:  # our own code failed in the worker: a bug
            for entry in pending.values():
                if not entry.future.done():
                    entry.future.set_exception(exc.as_instanceof_cause())
        except (exceptions.RayActorError, exceptions.WorkerCrashedError,
                exceptions.ObjectLostError) as exc:
            self._lost(actor, list(pending.values()), exc)

    def _lost(self, actor: _Actor, unfinished: list[_Item], exc: BaseException) -> None:
        """A worker died: free its slots, put a fresh worker in its place, send its
        unfinished items again (or fail them after :data:`MAX_LOSSES` deaths)."""
        if actor.alive:
            actor.alive = False
            self.counts.worker_deaths += 1
            for limiter in self._limiters.values():
                limiter.forget.remote(actor.holder)
            self._actors[self._actors.index(actor)] = self._new_actor()
        actor.inflight = 0
        for entry in unfinished:
            entry.losses += 1
            if entry.losses >= MAX_LOSSES:
                self.counts.lost += 1
                failure = CallFailure(WORKER_LOST, f"its Ray worker died {entry.losses} times "
                                      f"({type(exc).__name__})")
                row = self.factory.lost_row(entry.local, entry.key, failure)
                entry.future.set_result(RowResult(row, done=False, failure=failure))
                continue
            self.counts.resent += 1
            self._queue.put_nowait(entry)
        self._room.set()
