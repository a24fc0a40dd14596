"""The Ray side of ``--executor ray``: the worker actor (:class:`BatchWorker`), made remote on
first use (:func:`remote_classes`, so importing this module needs no Ray), and what the pool
counts (:class:`PoolCounts`). The driver's side is :mod:`hopscore.distributed.ray_pool`."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any

from hopscore.distributed.limits import ClusterGate, Limiter, RemoteSlots
from hopscore.distributed.work import Built, WorkFactory
from hopscore.engine import EngineStats, RowResult
from hopscore.errors import HopscoreError


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


class _Job:
    """One command's work function in a worker, built on its first call."""

    def __init__(self, factory: WorkFactory, limiters: dict[str, Any], holder: str) -> None:
        self.factory = factory
        #: the command's limiter actors: they end with its driver (a liveness probe)
        self.limiters = limiters
        self.gate = ClusterGate({endpoint: RemoteSlots(limiter, holder)
                                 for endpoint, limiter in limiters.items()})
        self.built: Built | None = None
        self.lock = asyncio.Lock()
        #: batches of it under way (a job is never forgotten while one runs)
        self.running = 0
        self.last = time.monotonic()

    async def get(self) -> Built:
        async with self.lock:
            if self.built is None:
                self.built = await self.factory.build(self.gate)
            return self.built


async def _lives(job: _Job) -> bool:
    """Whether ``job``'s driver still runs (one of its limiters answers)."""
    for limiter in job.limiters.values():
        try:
            await asyncio.wait_for(limiter.stats.remote(), 30.0)
        except Exception:  # the actor died with its driver, or does not answer
            return False
        return True
    return False


class BatchWorker:
    """A Ray actor holding each command's built work function (one per job id: a kept worker,
    :mod:`hopscore.distributed.reuse`, serves one command after another); :meth:`run` streams
    a batch's rows. ``keep_s``: a worker with no job for that long ends itself (None: never,
    as a command's own worker, ended with it)."""

    def __init__(self, keep_s: float | None = None) -> None:
        self.jobs: dict[str, _Job] = {}
        #: jobs whose command ended (a build that comes after is not made)
        self.closed: set[str] = set()
        self.keep_s = keep_s
        #: the commands served so far
        self.served: set[str] = set()
        self.idle_since = time.monotonic()
        self.watching: asyncio.Task[None] | None = None

    def pid(self) -> int:
        return os.getpid()

    async def ready(self, job: str, factory: WorkFactory, limiters: dict[str, Any],
                    holder: str) -> int:
        """Build ``job``'s work function (before any batch of it comes); how many commands
        this worker served before ``job`` (more than 0: it was kept for reuse)."""
        if self.keep_s is not None and self.watching is None:
            self.watching = asyncio.get_running_loop().create_task(self._watch(self.keep_s))
        earlier = len(self.served - {job})
        self.served.add(job)
        if job in self.closed:
            return earlier
        entry = self.jobs.get(job)
        if entry is None:
            entry = self.jobs[job] = _Job(factory, limiters, holder)
        await entry.get()
        return earlier

    async def run(self, job: str, batch: list[tuple[str, Any]]) -> Any:
        """Yield ``(key, RowResult, stats)`` for each item of ``batch`` as it finishes."""
        entry = self.jobs.get(job)
        if entry is None:
            raise HopscoreError("a Ray worker was sent rows of a command it does not know")
        entry.running += 1
        try:
            built = await entry.get()

            async def one(key: str, item: Any) -> tuple[str, RowResult]:
                return key, await built.work(item, key)

            for finished in asyncio.as_completed([one(key, item) for key, item in batch]):
                key, result = await finished
                yield key, result, stats_json(built.stats())
        finally:
            entry.running -= 1
            entry.last = time.monotonic()

    async def close(self, job: str) -> None:
        """``job``'s command ended: its work function is closed and forgotten."""
        self.closed.add(job)
        entry = self.jobs.pop(job, None)
        if not self.jobs:
            self.idle_since = time.monotonic()
        if entry is not None and entry.built is not None:
            await entry.built.close()

    async def _watch(self, keep_s: float) -> None:
        """End this worker once it had no job for ``keep_s`` (a job idle that long whose
        command's driver is gone, its limiters with it, is closed: its driver died)."""
        while True:
            await asyncio.sleep(min(keep_s, 30.0))
            now = time.monotonic()
            for job, entry in list(self.jobs.items()):
                if entry.running == 0 and now - entry.last > keep_s and not await _lives(entry):
                    await self.close(job)
            if not self.jobs and now - self.idle_since > keep_s:
                os._exit(0)


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
    #: workers found already started on the cluster, kept by an earlier command
    #: (:mod:`hopscore.distributed.reuse`)
    reused: int = 0
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
                "reused": self.reused,
                "peak_in_flight": self.peak_in_flight, "ray_lost": self.ray_lost}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


@dataclass(slots=True)
class Actor:
    """The driver's view of one worker actor."""

    handle: Any
    holder: str
    #: its place among the workers (a kept worker's name, :mod:`hopscore.distributed.reuse`)
    index: int = 0
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
    if counts.get("reused"):
        line += f" ({counts['reused']} kept from an earlier command)"
    if counts.get("skipped"):
        line += f"; Ray was not used: {counts['skipped']}"
    if counts.get("worker_deaths"):
        line += (f"; {counts['worker_deaths']} workers died, {counts.get('rows_resent', 0)} "
                 f"rows sent again, {counts.get('rows_lost', 0)} failed for it")
    lost = counts.get("ray_lost")
    if lost and lost.startswith("Ray did not start"):
        line += f"; {lost}: the driver did the rows"
    elif lost:
        line += f"; Ray was lost ({lost}): the driver did the rows left"
    return line
