"""``--executor ray``: a command's rows on a Ray cluster, its output written by the driver alone.

* **Connection.** ``RAY_ADDRESS`` set: that cluster (``ray://`` client or a head's address).
  Unset: an embedded local Ray bound to 127.0.0.1 (its servers listen on loopback only), with
  ``--ray-workers`` CPUs (default: this machine's), stopped when the command ends.
* **Workers** (:mod:`hopscore.distributed.dispatch`). One actor per CPU (``num_cpus=1``), each
  building the command's work function from the runner's
  :class:`~hopscore.distributed.WorkFactory`: the same request engine, agent loop and SQL
  sandbox as a local run. The driver's :func:`~hopscore.engine.run_batch` hands each item to
  :meth:`RayPool.work`; the pool sends items to the actor with room in batches and each
  finished row streams back at once; the driver alone appends it to the output (the same
  resume keys and files as a local run). On a running cluster the workers are kept for the
  next command, which finds them started (:mod:`hopscore.distributed.reuse`).
* **Overlap.** Given the driver's own work function (``local``), the pool does not wait for
  Ray: the driver works on rows with the local engine at once while Ray starts or connects in
  the background (once its pace says the job outlasts that, :mod:`.pace`), and each worker
  takes batches once ready; the driver goes on beside them. Every row goes through one queue
  and is written when its first result arrives: none is sent twice by the hand-over, none
  lost. When the rows are done before Ray is up, the local Ray is stopped, not waited for.
  When Ray does not start (or connect) at all, the driver says why at once and does the rows.
* **Failures.** A dead worker's unfinished rows go to another (a fresh one takes its place);
  an item whose worker died :data:`MAX_LOSSES` times is a failed row (``worker_lost``). A
  silent worker is given up; every call to Ray has a deadline.
* **Ray lost.** When the command's local Ray ends (:mod:`hopscore.distributed.head`), or
  workers keep dying, Ray is given up: the workers' rows go back to the queue and the driver
  does every row left (building its own work function if it had none); no Ray call is made
  any more, so the run, and Ctrl-C, end as promptly as a local run's.
* **Global limits.** Each endpoint's concurrency limit is one
  :class:`~hopscore.distributed.limits.Limiter` actor: every attempt, on any worker and on the
  driver, holds one of its slots. Before the cluster is up the driver counts its slots itself
  and hands them over to the limiter when it exists
  (:class:`~hopscore.distributed.limits.DriverSlots`). A dead worker's slots are given back.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
import threading
import uuid
from contextlib import suppress
from typing import Any

from hopscore.distributed import reuse
from hopscore.distributed.actors import (
    Actor,
    Item,
    PoolCounts,
    remote_classes,
    stats_json,
    total_stats,
)
from hopscore.distributed.dispatch import CALL_S, MAX_LOSSES, WATCH_S, WORKER_LOST, Batches, got
from hopscore.distributed.head import (
    LocalHead,
    check_address,
    connect_within,
    import_ray,
    start_local,
)
from hopscore.distributed.limits import ClusterGate, DriverSlots
from hopscore.distributed.pace import PACE_S, PROBE_S, Pace
from hopscore.distributed.placement import Reservation, no_room, reserve, workers_for
from hopscore.distributed.work import Built, WorkFactory
from hopscore.engine import EngineStats, RowResult

__all__ = ["MAX_LOSSES", "WORKER_LOST", "RayPool"]

#: the holder under which the driver's own attempts count in a limiter
DRIVER = "driver"
#: seconds the workers' clean-up gets at the end
_CLOSE_S = 5.0
#: workers assumed, for the items kept in flight, on a cluster whose size is not known yet
_UNKNOWN_CLUSTER = 64
#: seconds Ray's shutdown may take at the end
_SHUTDOWN_S = 10.0


class RayPool(Batches):
    """Runs a factory's work on Ray actors; :meth:`work` is a drop-in work function for
    :func:`~hopscore.engine.run_batch` (see the module docstring). ``local``: the driver's own
    work function, built with :meth:`driver_gate`, run by ``local_workers`` loops here."""

    def __init__(self, factory: WorkFactory, *, limits: dict[str, int], per_worker: int,
                 workers: int | None = None, local_workers: int = 0,
                 rows: int | None = None, local_cpus: int = 0) -> None:
        self.factory = factory
        self.limits = limits
        self.per_worker = max(1, per_worker)
        self.requested = workers
        self.local: Built | None = None
        self.local_workers = local_workers
        #: CPUs the driver's own work keeps busy (its SQL sandbox): no worker goes on them
        #: (:mod:`hopscore.distributed.placement`)
        self.local_cpus = local_cpus
        self._reserved = Reservation()
        #: the rows to do (None: not known, as when they are made while the run goes)
        self.rows = rows
        self.driver = {endpoint: DriverSlots(limit, DRIVER) for endpoint, limit in limits.items()}
        self.counts = PoolCounts()
        self._ray: Any = None
        self._started = False
        self._head: LocalHead | None = None
        self._closing = False
        self._probing = False
        self._failed: BaseException | None = None
        self._begun = 0.0
        self._actors: list[Actor] = []
        self._limiters: dict[str, Any] = {}
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._room = asyncio.Event()
        self._snapshots: dict[str, dict[str, Any]] = {}
        self._connecting: asyncio.Task[None] | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._loops: list[asyncio.Task[None]] = []
        self._pace = Pace()
        self._batches: set[asyncio.Task[None]] = set()
        #: why Ray was given up (None: it was not)
        self._gone: str | None = None
        self._watching: asyncio.Task[None] | None = None
        self._taking_over: asyncio.Task[None] | None = None
        self._shutdown: threading.Thread | None = None
        #: this command's id in its workers (a kept worker serves one command after another)
        self._job = uuid.uuid4().hex
        #: the workers are kept for the next command (:mod:`hopscore.distributed.reuse`)
        self._keep = False

    def driver_gate(self) -> ClusterGate:
        """The gate of the driver's own work function: its attempts count in the same global
        limits as the workers' (:class:`~hopscore.distributed.limits.DriverSlots`)."""
        return ClusterGate(dict(self.driver))

    # --- life ---------------------------------------------------------------------------

    async def start(self, local: Built | None = None) -> RayPool:
        """Connect (``local`` None), or start the driver's loops on ``local`` and connect in
        the background. The driver's loops start ``local.start_interval`` apart, as a local
        run's workers do (:func:`~hopscore.engine.run_batch`, which hands items to this pool
        all at once: staggered there, its last of :attr:`capacity` items would wait that
        many intervals even when the rows were done long before)."""
        self._begun = asyncio.get_running_loop().time()
        # a RAY_ADDRESS naming nothing reachable is an error at once, also for a job that
        # ends before Ray would be asked for
        await asyncio.to_thread(check_address)
        if importlib.util.find_spec("ray") is None:  # not imported here: that takes seconds
            import_ray()  # a clear error at once, before any row
        self.local = local
        if local is None or self.local_workers <= 0:
            self.local = None
            await self._connect()
            return self
        self._loops = [asyncio.create_task(self._local_loop(i * local.start_interval))
                       for i in range(self.local_workers)]
        self._connecting = asyncio.create_task(self._connect_or_fail())
        return self

    async def _connect(self) -> None:
        if self._head is None:
            self._head = start_local(self.requested)
        self._ray, self._started = await connect_within(self._head)
        if self._ray is None:  # the local Ray was stopped before it was up
            return
        self.counts.connected_s = self._since()
        if self._closing:
            return
        self._keep = reuse.wanted(self._head is not None, self.local_cpus)
        cpus = int(self._ray.cluster_resources().get("CPU", 1))
        if self.local is not None:
            self._reserved = await reserve(self._ray, self.local_cpus)
        count = workers_for(cpus, self._reserved.cpus, self.requested)
        if count <= 0 and self._reserved.cpus > 0:
            # every CPU of the cluster is one the driver already uses: no worker, no
            # limiter; the driver does every row (its lease stays whole)
            self.counts.skipped = no_room(cpus, self._reserved.cpus, self._head is not None)
            self._reserved.release(self._ray)
            if self._started:
                await asyncio.to_thread(self._ray.shutdown)
                self._started = False
            return
        count = max(1, count)  # a cluster of no CPU yet: one worker waits for its autoscaler
        limiter_class, _ = remote_classes(self._ray)
        for endpoint, limit in self.limits.items():
            slots = self.driver[endpoint]
            if self.local is None:  # the driver sends nothing
                self._limiters[endpoint] = limiter_class.remote(limit)
                continue
            # made holding the whole limit for the driver (its lease until workers are ready)
            self._limiters[endpoint] = limiter_class.remote(limit, {slots.holder: limit})
            slots.hand_over(self._limiters[endpoint])
        for index in range(count):
            self._actors.append(self._new_actor(index))
        self.counts.workers = count
        self._dispatcher = asyncio.create_task(self._dispatch())
        if self._head is not None:
            self._watching = asyncio.create_task(self._watch_head())

    async def _watch_head(self) -> None:
        """Give Ray up once the local Ray ended (its watchdog ended the rest of it)."""
        assert self._head is not None
        while (code := self._head.ended()) is None:
            await asyncio.sleep(WATCH_S)
        if not self._closing:
            self._give_up(f"the local Ray ended with exit status {code}: its raylet or another "
                          "of its processes died")

    def _give_up(self, why: str) -> None:
        """Ray is lost: the workers' rows go back to the queue, the driver does every row left
        (see the module docstring), and no Ray call is made any more."""
        if self._gone is not None:
            return
        self._gone = why
        self.counts.ray_lost = why
        for actor in self._actors:
            actor.alive = False
        for slots in self.driver.values():
            slots.alone()
        if self._dispatcher is not None:
            self._dispatcher.cancel()
        for task in list(self._batches):
            task.cancel()  # a batch puts its rows back (see _run)
        if self._started:  # detach from it now (Ray ends a driver that lost its cluster)
            self._started = False
            self._shutdown = threading.Thread(target=self._ray.shutdown, daemon=True,
                                              name="ray-shutdown")
            self._shutdown.start()
        if not self._closing:
            self._taking_over = asyncio.create_task(self._take_over())

    async def _take_over(self) -> None:
        """The driver's own loops for the rows left (its work function built if it had none)."""
        if self.local is None:
            try:
                self.local = await self.factory.build(self.driver_gate())
            except Exception as exc:  # as a failed start: every row not done fails with it
                self._fail_all(exc)
                return
            self.local_workers = self.per_worker
        running = sum(not task.done() for task in self._loops)
        self._loops += [asyncio.create_task(self._local_loop())
                        for _ in range(self.local_workers - running)]

    def _fail_all(self, exc: BaseException) -> None:
        self._failed = exc
        while not self._queue.empty():
            entry = self._queue.get_nowait()
            if not entry.future.done():
                entry.future.set_exception(exc)

    def _nearly_done(self) -> bool:
        """True when the driver will finish the rows too soon for Ray to pay back its start
        (:mod:`hopscore.distributed.pace`): then Ray is not started or connected to yet.
        Needs the number of rows."""
        if self.local is None or self.rows is None:
            return False
        why = self._pace.too_short(self.rows, self._since())
        if why is not None and self.counts.skipped is None:  # what the decision was made on
            self.counts.skipped = why
        return why is not None

    async def _connect_or_fail(self) -> None:
        try:
            if self._no_local_room():
                return
            if self.rows is not None:
                # Ray is started (or connected to) only for a job that outlasts a worker's
                # start: the driver's pace is measured first, before Ray takes any CPU
                self._probing = True
                await asyncio.sleep(PROBE_S)
                while not self._closing and self._nearly_done():
                    await asyncio.sleep(PACE_S / 2)
                self._probing = False
                if self._closing:
                    return
                self.counts.skipped = None
            await self._connect()
        except Exception as exc:  # no cluster: the driver does every row, and says why now
            text = " ".join(str(exc).removeprefix("--executor ray: ").split())
            why = f"Ray did not start: {text}"
            print(f"--executor ray: {why}; the driver does the rows itself", file=sys.stderr,
                  flush=True)
            self._give_up(why)

    def _no_local_room(self) -> bool:
        """True when the local Ray to start would have only CPUs the driver's own work uses
        (then it is not started: it could run no worker)."""
        if os.environ.get("RAY_ADDRESS") or self.local_cpus <= 0:
            return False
        cpus = self.requested or os.cpu_count() or 1
        if cpus > self.local_cpus:
            return False
        self.counts.skipped = no_room(cpus, cpus, True)
        return True

    @property
    def capacity(self) -> int:
        """Items to keep in flight: the driver's share and every worker's."""
        expected = self.requested or (
            (os.cpu_count() or 1) if not os.environ.get("RAY_ADDRESS") else _UNKNOWN_CLUSTER)
        workers = len(self._actors) or expected
        return self.local_workers + self.per_worker * max(1, workers)

    async def pids(self) -> list[int]:
        """The process ids of the live workers (the tests kill one)."""
        refs = [got(actor.handle.pid.remote()) for actor in self._actors if actor.alive]
        return list(await asyncio.wait_for(asyncio.gather(*refs), CALL_S))

    async def close(self) -> None:
        self._closing = True
        if self._head is not None and self._head.ended() is not None:
            self._give_up(f"the local Ray ended with exit status {self._head.ended()}")
        # a cancel can be lost: on Python 3.11 asyncio.wait_for swallows one that comes as its
        # inner future ends (the driver's loop then waits on the queue for ever), so the loops
        # are cancelled again until they end
        loops = set(self._loops)
        while loops:
            for task in loops:
                task.cancel()
            _, loops = await asyncio.wait(loops, timeout=WATCH_S)
        for task in self._loops:  # read what a loop raised, as gather did, so none goes unseen
            if not task.cancelled():
                task.exception()
        if self._probing and self._connecting is not None:  # Ray was never asked for
            self._connecting.cancel()
        if self._head is not None and not self._head.ready:
            # the rows are done before the local Ray is up: it is stopped, not waited for
            await asyncio.to_thread(self._head.stop)
        if self._connecting is not None:
            # connecting (the head is up) is waited for, then undone (no worker is made once
            # closing)
            await asyncio.gather(self._connecting, return_exceptions=True)
        for task in filter(None, (self._dispatcher, self._watching, self._taking_over)):
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        for task in list(self._batches):
            task.cancel()
        await asyncio.gather(*self._batches, return_exceptions=True)
        for endpoint, slots in self.driver.items():
            peak = slots.peak
            limiter = self._limiters.get(endpoint)
            if limiter is not None and self._gone is None:
                with suppress(Exception):  # the cluster may be gone already
                    stats = await asyncio.wait_for(got(limiter.stats.remote()), _CLOSE_S)
                    peak = max(peak, int(stats["peak"]))
            self.counts.peak_in_flight[endpoint] = peak
        closing = []
        for actor in self._actors:
            if not actor.alive or self._gone is not None:
                continue
            if actor.ready:
                closing.append(actor.handle.close.remote(self._job))
            else:  # still starting: not waited for
                self._kill(actor)
        if closing:
            waits = [asyncio.ensure_future(got(ref)) for ref in closing]
            await asyncio.wait(waits, timeout=_CLOSE_S)
            for wait in waits:  # not waited for longer; their errors are not reported
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        if self.local is not None:
            await self.local.close()
        if self._gone is None:
            self._reserved.release(self._ray)
        if self._started:
            self._started = False
            self._shutdown = threading.Thread(target=self._ray.shutdown, daemon=True,
                                              name="ray-shutdown")
            self._shutdown.start()
        if self._shutdown is not None:  # never waited for past its deadline
            await asyncio.to_thread(self._shutdown.join, _SHUTDOWN_S)
        if self._head is not None and not self._head.stopped:
            await asyncio.to_thread(self._head.stop)

    # --- the work function ----------------------------------------------------------------

    async def work(self, item: Any, key: str) -> RowResult:
        if self._failed is not None:
            raise self._failed
        future: asyncio.Future[RowResult] = asyncio.get_running_loop().create_future()
        sent = item if self.factory.ships_items else None
        self._queue.put_nowait(Item(key, sent, future, item))
        return await future

    async def _local_loop(self, delay: float = 0.0) -> None:
        """One of the driver's loops: items from the same queue as the workers', done here."""
        assert self.local is not None
        if delay > 0:
            await asyncio.sleep(delay)
        while True:
            entry = await self._queue.get()
            if entry.future.done():
                continue
            try:
                result = await self.local.work(entry.local, entry.key)
            except Exception as exc:  # as in a local run: the batch stops with it
                if not entry.future.done():
                    entry.future.set_exception(exc)
                continue
            if not entry.future.done():
                self.counts.rows_on_driver += 1
                self._pace.finished(asyncio.get_running_loop().time())
                entry.future.set_result(result)

    @property
    def stats(self) -> EngineStats:
        """The request counts of the driver and every worker (a dead worker's up to its last
        row)."""
        snapshots = list(self._snapshots.values())
        if self.local is not None:
            snapshots.append(stats_json(self.local.stats()))
        return total_stats(snapshots)

