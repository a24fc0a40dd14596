"""The Ray side of ``--executor ray``: the worker actor (:class:`BatchWorker`), made remote on
first use (:func:`remote_classes`, so importing this module needs no Ray), and what the pool
counts (:class:`PoolCounts`). The driver's side is :mod:`hopscore.distributed.ray_pool`."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from hopscore.distributed.limits import ClusterGate, Limiter, RemoteSlots
from hopscore.distributed.work import Built, WorkFactory
from hopscore.engine import EngineStats, RowResult


def remote_classes(ray: Any) -> tuple[Any, Any]:
    """The two actor classes, made remote on first use (so importing this module needs no Ray)."""
    global _REMOTE
    if _REMOTE is None:
        limiter = ray.remote(num_cpus=0, max_concurrency=100_000)(Limiter)
        worker = ray.remote(num_cpus=1, max_restarts=0, max_concurrency=100_000)(BatchWorker)
        _REMOTE = (limiter, worker)
    return _REMOTE


_REMOTE: tuple[Any, Any] | None = None


def stats_json(stats: EngineStats | None) -> dict[str, Any]:
    if stats is None:
        return {}
    return {"requests_sent": stats.requests_sent, "retries": stats.retries,
            "cache_hits": stats.cache_hits, "failures": stats.failures,
            "prompt_tokens": stats.prompt_tokens, "completion_tokens": stats.completion_tokens,
            "reasoning_tokens": stats.reasoning_tokens, "cached_tokens": stats.cached_tokens,
            "failures_by_kind": dict(stats.failures_by_kind)}


class BatchWorker:
    """A Ray actor holding one built work function; :meth:`run` streams a batch's rows."""

    def __init__(self, factory: WorkFactory, limiters: dict[str, Any], holder: str) -> None:
        self.factory = factory
        self.gate = ClusterGate({endpoint: RemoteSlots(limiter, holder)
                                 for endpoint, limiter in limiters.items()})
        self.built: Built | None = None
        self.lock = asyncio.Lock()

    def pid(self) -> int:
        return os.getpid()

    async def ready(self) -> int:
        """Build the work function (before any batch comes); the process id."""
        await self._built()
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
            yield key, result, stats_json(built.stats())

    async def close(self) -> None:
        if self.built is not None:
            await self.built.close()


@dataclass(slots=True)
class PoolCounts:
    """What the pool did: for config.json and the tests."""

    workers: int = 0
    worker_deaths: int = 0
    resent: int = 0
    lost: int = 0
    #: rows finished by the driver's own work function and by the workers
    rows_on_driver: int = 0
    rows_on_workers: int = 0
    #: seconds from the pool's start until Ray was connected and until the first worker was
    #: ready (None: not before the rows were done)
    connected_s: float | None = None
    first_worker_s: float | None = None
    #: why Ray was not started or connected to (the job was too short to pay it back)
    skipped: str | None = None
    #: the most slots held at once, per endpoint (the driver's lease counted whole)
    peak_in_flight: dict[str, int] = field(default_factory=dict)
    #: why Ray was given up mid-run (its node died): the driver did the rows left
    ray_lost: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"executor": "ray", "workers": self.workers, "worker_deaths": self.worker_deaths,
                "rows_resent": self.resent, "rows_lost": self.lost,
                "rows_on_driver": self.rows_on_driver, "rows_on_workers": self.rows_on_workers,
                "connected_s": _round(self.connected_s),
                "first_worker_s": _round(self.first_worker_s), "skipped": self.skipped,
                "peak_in_flight": self.peak_in_flight, "ray_lost": self.ray_lost}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(slots=True)
class Actor:
    """The driver's view of one worker actor."""

    handle: Any
    holder: str
    inflight: int = 0
    alive: bool = True
    #: its work function is built: batches may go to it
    ready: bool = False


@dataclass(slots=True)
class Item:
    """One item the pool was handed: where its result goes, how often its worker died."""

    key: str
    #: what travels to the worker (None when the worker finds the item by its key)
    item: Any
    future: asyncio.Future[RowResult]
    #: the driver's item (for the driver's own work, and the failed row of an item whose
    #: workers kept dying)
    local: Any = None
    losses: int = 0


def total_stats(snapshots: list[dict[str, Any]]) -> EngineStats:
    """The sum of engine counts sent back by :func:`stats_json`."""
    total = EngineStats()
    for snapshot in snapshots:
        total.requests_sent += int(snapshot.get("requests_sent", 0))
        total.retries += int(snapshot.get("retries", 0))
        total.cache_hits += int(snapshot.get("cache_hits", 0))
        total.failures += int(snapshot.get("failures", 0))
        total.prompt_tokens += int(snapshot.get("prompt_tokens", 0))
        total.completion_tokens += int(snapshot.get("completion_tokens", 0))
        total.reasoning_tokens += int(snapshot.get("reasoning_tokens", 0))
        total.cached_tokens += int(snapshot.get("cached_tokens", 0))
        for kind, n in (snapshot.get("failures_by_kind") or {}).items():
            total.failures_by_kind[kind] = total.failures_by_kind.get(kind, 0) + int(n)
    return total


def ray_line(counts: dict[str, Any]) -> str:
    """Where ``--executor ray``'s rows ran: the driver's share and the workers'."""
    line = (f"ray: {counts.get('rows_on_driver', 0)} rows on the driver, "
            f"{counts.get('rows_on_workers', 0)} on {counts.get('workers', 0)} workers")
    if counts.get("skipped"):
        line += f"; Ray was not used: {counts['skipped']}"
    if counts.get("worker_deaths"):
        line += (f"; {counts['worker_deaths']} workers died, {counts.get('rows_resent', 0)} "
                 f"rows sent again, {counts.get('rows_lost', 0)} failed for it")
    if counts.get("ray_lost"):
        line += f"; Ray was lost ({counts['ray_lost']}): the driver did the rows left"
    return line
