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
* **Overlap.** Given the driver's own work function (``local``), the pool does not wait for
  Ray: the driver works on rows with the local engine at once while Ray starts or connects in
  the background, and each worker takes batches once it is ready (its work function built);
  the driver goes on working beside them. Rows the driver finished before Ray came up are
  never sent; a job shorter than Ray's start never waits for it, except for the part of
  Ray's start still under way when the rows are done (the pool stops Ray cleanly).
* **Failures.** When an actor or its node dies, the rows of its batches that had not come back
  are sent to another actor (a fresh one takes the dead one's place); a row is written once,
  when its first result arrives, so nothing is lost and nothing is written twice. An item whose
  worker died :data:`MAX_LOSSES` times is recorded as a failed row (``worker_lost``), retried
  by the next run like any failed request. A worker whose batch sends nothing back for
  :data:`_QUIET_S` is asked for its pid; one that does not answer within :data:`_CALL_S` (a
  node gone silent) is given up as dead. Every call to Ray has a deadline.
* **Ray lost.** When the command's local Ray ends (its raylet or another of its processes
  died: its watchdog then ends the rest, :mod:`hopscore.distributed.head`), or workers keep
  dying (:data:`_DEATHS_PER_WORKER` each), Ray is given up: the rows the workers held go back
  to the queue and the driver does every row left itself (building its own work function if
  it had none), under the whole limit; no Ray call is made any more, so the run, and Ctrl-C,
  end as promptly as a local run's.
* **Global limits.** Each endpoint's concurrency limit is one
  :class:`~hopscore.distributed.limits.Limiter` actor: every attempt, on any worker and on the
  driver, holds one of its slots, so adding nodes never overruns a rate-limited API. Before the
  cluster is up the driver counts its slots itself and hands them over to the limiter when it
  exists (:class:`~hopscore.distributed.limits.DriverSlots`). A dead worker's slots are given
  back.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from contextlib import suppress
from typing import Any

from hopscore.distributed.actors import (
    Actor,
    Item,
    PoolCounts,
    remote_classes,
    stats_json,
    total_stats,
)
from hopscore.distributed.head import LocalHead, check_address, connect, start_local
from hopscore.distributed.limits import ClusterGate, DriverSlots
from hopscore.distributed.pace import PACE_S, PROBE_S, Pace
from hopscore.distributed.placement import Reservation, no_room, reserve, workers_for
from hopscore.distributed.work import Built, WorkFactory
from hopscore.engine import CallFailure, EngineStats, RowResult
from hopscore.errors import HopscoreError

#: Times an item may lose its worker before it is recorded as failed.
MAX_LOSSES = 3
WORKER_LOST = "worker_lost"


#: the holder under which the driver's own attempts count in a limiter
DRIVER = "driver"
#: seconds the workers' clean-up gets at the end
_CLOSE_S = 5.0
#: workers assumed, for the items kept in flight, on a cluster whose size is not known yet
_UNKNOWN_CLUSTER = 64
#: seconds a batch may send nothing back before its worker is asked whether it lives
_QUIET_S = 30.0
#: the deadline of a call to Ray that should answer at once (a pid, a count, a release)
_CALL_S = 30.0
#: the deadline of a worker's start (its work function built; a cluster may have to add a node)
_START_S = 600.0
#: seconds Ray's shutdown may take at the end
_SHUTDOWN_S = 10.0
#: seconds between looks at whether the local Ray still runs
_WATCH_S = 0.5
#: worker deaths, per worker, after which Ray is given up
_DEATHS_PER_WORKER = 3


class _Silent(Exception):
    """A worker that did not answer within its deadline (its node gone silent)."""


async def _got(ref: Any) -> Any:
    """An object reference's value (a coroutine, for asyncio.wait_for)."""
    return await ref


class RayPool:
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

    def driver_gate(self) -> ClusterGate:
        """The gate of the driver's own work function: its attempts count in the same global
        limits as the workers' (:class:`~hopscore.distributed.limits.DriverSlots`)."""
        return ClusterGate(dict(self.driver))

    # --- life ---------------------------------------------------------------------------

    async def start(self, local: Built | None = None) -> RayPool:
        """Connect (``local`` None), or start the driver's loops on ``local`` and connect in
        the background."""
        self._begun = asyncio.get_running_loop().time()
        # a RAY_ADDRESS naming nothing reachable is an error at once, also for a job that
        # ends before Ray would be asked for
        await asyncio.to_thread(check_address)
        self.local = local
        if local is None or self.local_workers <= 0:
            self.local = None
            await self._connect()
            return self
        self._loops = [asyncio.create_task(self._local_loop())
                       for _ in range(self.local_workers)]
        self._connecting = asyncio.create_task(self._connect_or_fail())
        return self

    async def _connect(self) -> None:
        if self._head is None:
            self._head = start_local(self.requested)
        self._ray, self._started = await asyncio.to_thread(connect, self._head)
        if self._ray is None:  # the local Ray was stopped before it was up
            return
        self.counts.connected_s = self._since()
        if self._closing:
            return
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
        for _ in range(count):
            self._actors.append(self._new_actor())
        self.counts.workers = count
        self._dispatcher = asyncio.create_task(self._dispatch())
        if self._head is not None:
            self._watching = asyncio.create_task(self._watch_head())

    async def _watch_head(self) -> None:
        """Give Ray up once the local Ray ended (its watchdog ended the rest of it)."""
        assert self._head is not None
        while (code := self._head.ended()) is None:
            await asyncio.sleep(_WATCH_S)
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
        except Exception as exc:  # no cluster: every row not done yet fails with it
            self._fail_all(exc)

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

    def _since(self) -> float:
        return asyncio.get_running_loop().time() - self._begun

    def _new_actor(self) -> Actor:
        _, worker_class = remote_classes(self._ray)
        holder = uuid.uuid4().hex
        actor = Actor(worker_class.remote(self.factory, self._limiters, holder), holder)
        task = asyncio.create_task(self._ready(actor))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)
        return actor

    async def _ready(self, actor: Actor) -> None:
        """Batches go to ``actor`` once its work function is built (a worker that is still
        starting takes none: the driver goes on with them meanwhile)."""
        exceptions = self._ray.exceptions
        try:
            await asyncio.wait_for(_got(actor.handle.ready.remote()), _START_S)
        except exceptions.RayTaskError:
            pass  # its build failed: its first batch says why (as a failed build always did)
        except (exceptions.RayActorError, exceptions.WorkerCrashedError,
                exceptions.ObjectLostError) as exc:
            self._lost(actor, [], exc)
            return
        except (TimeoutError, asyncio.TimeoutError):
            self._kill(actor)
            self._lost(actor, [], _Silent(f"a Ray worker did not start within {_START_S:.0f} s"))
            return
        actor.ready = True
        if self.counts.first_worker_s is None:
            self.counts.first_worker_s = self._since()
            self._share()
        self._room.set()

    def _share(self) -> None:
        """Workers are ready: the driver keeps its share of each limit (as many slots as its
        share of the items in flight), the workers get the rest."""
        items = self.local_workers + self.per_worker * max(1, self.counts.workers)
        for slots in self.driver.values():
            slots.share(round(slots.limit * self.local_workers / items))

    @property
    def capacity(self) -> int:
        """Items to keep in flight: the driver's share and every worker's."""
        expected = self.requested or (
            (os.cpu_count() or 1) if not os.environ.get("RAY_ADDRESS") else _UNKNOWN_CLUSTER)
        workers = len(self._actors) or expected
        return self.local_workers + self.per_worker * max(1, workers)

    async def pids(self) -> list[int]:
        """The process ids of the live workers (the tests kill one)."""
        refs = [_got(actor.handle.pid.remote()) for actor in self._actors if actor.alive]
        return list(await asyncio.wait_for(asyncio.gather(*refs), _CALL_S))

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
            _, loops = await asyncio.wait(loops, timeout=_WATCH_S)
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
                    stats = await asyncio.wait_for(_got(limiter.stats.remote()), _CLOSE_S)
                    peak = max(peak, int(stats["peak"]))
            self.counts.peak_in_flight[endpoint] = peak
        closing = []
        for actor in self._actors:
            if not actor.alive or self._gone is not None:
                continue
            if actor.ready:
                closing.append(actor.handle.close.remote())
            else:  # still starting: not waited for
                self._kill(actor)
        if closing:
            waits = [asyncio.ensure_future(_got(ref)) for ref in closing]
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

    def _kill(self, actor: Actor) -> None:
        """Kill ``actor``'s process, on a thread of its own (a cluster that is going away may
        take long to answer), never waited for."""
        if self._gone is not None:
            return

        def kill() -> None:
            with suppress(Exception):  # the cluster may be gone already
                self._ray.kill(actor.handle, no_restart=True)

        threading.Thread(target=kill, daemon=True, name="ray-kill").start()

    # --- the work function ----------------------------------------------------------------

    async def work(self, item: Any, key: str) -> RowResult:
        if self._failed is not None:
            raise self._failed
        future: asyncio.Future[RowResult] = asyncio.get_running_loop().create_future()
        sent = item if self.factory.ships_items else None
        self._queue.put_nowait(Item(key, sent, future, item))
        return await future

    async def _local_loop(self) -> None:
        """One of the driver's loops: items from the same queue as the workers', done here."""
        assert self.local is not None
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

    # --- dispatching ------------------------------------------------------------------------

    def _free_actor(self) -> Actor | None:
        live = [a for a in self._actors
                if a.alive and a.ready and a.inflight < self.per_worker]
        return min(live, key=lambda a: a.inflight) if live else None

    async def _dispatch(self) -> None:
        while True:
            # room first, then an item: no item waits here for a worker while the driver's
            # loops could take it
            while self._free_actor() is None:
                self._room.clear()
                await self._room.wait()
            first = await self._queue.get()
            actor = self._free_actor()
            if first.future.done():
                continue
            if actor is None:  # the worker died meanwhile
                self._queue.put_nowait(first)
                continue
            batch = [first]
            while len(batch) < self.per_worker - actor.inflight and not self._queue.empty():
                entry = self._queue.get_nowait()
                if not entry.future.done():
                    batch.append(entry)
            actor.inflight += len(batch)
            task = asyncio.create_task(self._run(actor, batch))
            self._batches.add(task)
            task.add_done_callback(self._batches.discard)

    async def _run(self, actor: Actor, batch: list[Item]) -> None:
        exceptions = self._ray.exceptions
        pending = {item.key: item for item in batch}
        try:
            stream = actor.handle.run.options(num_returns="streaming").remote(
                [(item.key, item.item) for item in batch])
            while True:
                try:
                    ref = await self._next(actor, stream)
                except StopAsyncIteration:
                    break
                key, result, snapshot = await asyncio.wait_for(_got(ref), _CALL_S)
                self._snapshots[actor.holder] = snapshot
                entry = pending.pop(key, None)
                actor.inflight -= 1
                self._room.set()
                if entry is not None and not entry.future.done():
                    self.counts.rows_on_workers += 1
                    entry.future.set_result(result)
        except exceptions.RayTaskError as exc:
            # a user-facing error raised in the worker (its node's files differ) stays one;
            # anything else is our own code failing there: a bug
            cause = getattr(exc, "cause", None)
            error = (HopscoreError(str(cause)) if isinstance(cause, HopscoreError)
                     else exc.as_instanceof_cause())
            for entry in pending.values():
                if not entry.future.done():
                    entry.future.set_exception(error)
        except (exceptions.RayActorError, exceptions.WorkerCrashedError,
                exceptions.ObjectLostError) as exc:
            self._lost(actor, list(pending.values()), exc)
        except (_Silent, TimeoutError, asyncio.TimeoutError) as exc:
            self._kill(actor)
            self._lost(actor, list(pending.values()), exc)
        except asyncio.CancelledError:
            if self._gone is not None:  # Ray was given up: the driver does these rows
                for entry in pending.values():
                    if not entry.future.done():
                        self.counts.resent += 1
                        self._queue.put_nowait(entry)
            raise

    async def _replace(self, actor: Actor) -> None:
        """A fresh worker in a dead one's place, unless Ray is lost meanwhile: a worker dies
        before its node's head does (its raylet killed), and the local Ray's end is seen
        within :data:`_WATCH_S`."""
        await asyncio.sleep(2 * _WATCH_S)
        if self._head is not None and self._head.ended() is not None:
            self._give_up(f"the local Ray ended with exit status {self._head.ended()}")
        if not self._closing and self._gone is None:
            self._actors[self._actors.index(actor)] = self._new_actor()

    async def _next(self, actor: Actor, stream: Any) -> Any:
        """The next reference of a batch's stream (StopAsyncIteration at its end); _Silent when
        the batch sends nothing for :data:`_QUIET_S` and its worker does not answer within
        :data:`_CALL_S`."""
        step = asyncio.ensure_future(stream.__anext__())
        try:
            while True:
                done, _ = await asyncio.wait({step}, timeout=_QUIET_S)
                if done:
                    return step.result()
                try:
                    await asyncio.wait_for(_got(actor.handle.pid.remote()), _CALL_S)
                except Exception:
                    raise _Silent(f"a Ray worker did not answer within {_CALL_S:.0f} s"
                                  ) from None
        finally:
            if not step.done():
                step.cancel()

    def _lost(self, actor: Actor, unfinished: list[Item], exc: BaseException) -> None:
        """A worker died: free its slots, put a fresh worker in its place, send its
        unfinished items again (or fail them after :data:`MAX_LOSSES` deaths)."""
        if actor.alive:
            actor.alive = False
            self.counts.worker_deaths += 1
            if self._gone is None:
                for limiter in self._limiters.values():
                    limiter.forget.remote(actor.holder)
            if self.counts.worker_deaths >= _DEATHS_PER_WORKER * max(1, self.counts.workers):
                self._give_up(f"{self.counts.worker_deaths} Ray workers died")
            elif not self._closing and self._gone is None:
                task = asyncio.create_task(self._replace(actor))
                self._batches.add(task)
                task.add_done_callback(self._batches.discard)
        actor.inflight = 0
        for entry in unfinished:
            if entry.future.done():
                continue
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

