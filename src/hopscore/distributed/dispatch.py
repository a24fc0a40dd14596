"""The Ray side of :class:`~hopscore.distributed.ray_pool.RayPool`: its workers made (or found,
:mod:`hopscore.distributed.reuse`), batches sent to them and streamed back, and a dead worker's
rows sent again (see that module's docstring, *Workers* and *Failures*). A mixin: the pool
holds the state declared here."""

from __future__ import annotations

import asyncio
import threading
import uuid
from contextlib import suppress
from typing import Any

from hopscore.distributed import reuse
from hopscore.distributed.actors import Actor, Item, PoolCounts, remote_classes
from hopscore.distributed.limits import DriverSlots
from hopscore.distributed.work import WorkFactory
from hopscore.engine import CallFailure, RowResult
from hopscore.errors import HopscoreError

#: Times an item may lose its worker before it is recorded as failed.
MAX_LOSSES = 3
WORKER_LOST = "worker_lost"

#: seconds a batch may send nothing back before its worker is asked whether it lives
_QUIET_S = 30.0
#: the deadline of a call to Ray that should answer at once (a pid, a count, a release)
CALL_S = 30.0
#: the deadline of a worker's start (its work function built; a cluster may have to add a node)
_START_S = 600.0
#: seconds between looks at whether the local Ray still runs
WATCH_S = 0.5
#: worker deaths, per worker, after which Ray is given up
_DEATHS_PER_WORKER = 3


class Silent(Exception):
    """A worker that did not answer within its deadline (its node gone silent)."""


async def got(ref: Any) -> Any:
    """An object reference's value (a coroutine, for asyncio.wait_for)."""
    return await ref


class Batches:
    """Workers and their batches (the pool's Ray side)."""

    factory: WorkFactory
    per_worker: int
    local_workers: int
    counts: PoolCounts
    driver: dict[str, DriverSlots]
    _ray: Any
    _head: Any
    _job: str
    _keep: bool
    _begun: float
    _closing: bool
    _gone: str | None
    _actors: list[Actor]
    _limiters: dict[str, Any]
    _queue: asyncio.Queue[Item]
    _room: asyncio.Event
    _snapshots: dict[str, dict[str, Any]]
    _batches: set[asyncio.Task[None]]

    def _give_up(self, why: str) -> None:  # pragma: no cover - the pool's
        raise NotImplementedError

    def _since(self) -> float:
        return asyncio.get_running_loop().time() - self._begun

    def _new_actor(self, index: int) -> Actor:
        _, worker_class = remote_classes(self._ray)
        if self._keep:  # found by name when an earlier command left it (reuse)
            handle = worker_class.options(
                name=reuse.name(index), namespace=reuse.namespace(), lifetime="detached",
                get_if_exists=True).remote(reuse.keep_s())
        else:
            handle = worker_class.remote()
        actor = Actor(handle, uuid.uuid4().hex, index=index)
        task = asyncio.create_task(self._ready(actor))
        self._batches.add(task)
        task.add_done_callback(self._batches.discard)
        return actor

    async def _ready(self, actor: Actor) -> None:
        """Batches go to ``actor`` once this command's work function is built there (a worker
        that is still starting takes none: the driver goes on with them meanwhile)."""
        exceptions = self._ray.exceptions
        earlier = 0
        try:
            earlier = await asyncio.wait_for(got(actor.handle.ready.remote(
                self._job, self.factory, self._limiters, actor.holder)), _START_S)
        except exceptions.RayTaskError:
            pass  # its build failed: its first batch says why (as a failed build always did)
        except (exceptions.RayActorError, exceptions.WorkerCrashedError,
                exceptions.ObjectLostError) as exc:
            self._lost(actor, [], exc)
            return
        except TimeoutError:
            self._kill(actor)
            self._lost(actor, [], Silent(f"a Ray worker did not start within {_START_S:.0f} s"))
            return
        actor.ready = True
        if earlier:
            self.counts.reused += 1  # it was running: only this command's work was built
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

    def _kill(self, actor: Actor) -> None:
        """Kill ``actor``'s process, on a thread of its own (a cluster that is going away may
        take long to answer), never waited for."""
        if self._gone is not None:
            return

        def kill() -> None:
            with suppress(Exception):  # the cluster may be gone already
                self._ray.kill(actor.handle, no_restart=True)

        threading.Thread(target=kill, daemon=True, name="ray-kill").start()

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
                self._job, [(item.key, item.item) for item in batch])
            while True:
                try:
                    ref = await self._next(actor, stream)
                except StopAsyncIteration:
                    break
                key, result, snapshot = await asyncio.wait_for(got(ref), CALL_S)
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
        except (Silent, TimeoutError) as exc:
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
        within :data:`WATCH_S`."""
        await asyncio.sleep(2 * WATCH_S)
        if self._head is not None and self._head.ended() is not None:
            self._give_up(f"the local Ray ended with exit status {self._head.ended()}")
        if not self._closing and self._gone is None:
            self._actors[self._actors.index(actor)] = self._new_actor(actor.index)

    async def _next(self, actor: Actor, stream: Any) -> Any:
        """The next reference of a batch's stream (StopAsyncIteration at its end); Silent when
        the batch sends nothing for :data:`_QUIET_S` and its worker does not answer within
        :data:`CALL_S`."""
        step = asyncio.ensure_future(stream.__anext__())
        try:
            while True:
                done, _ = await asyncio.wait({step}, timeout=_QUIET_S)
                if done:
                    return step.result()
                try:
                    await asyncio.wait_for(got(actor.handle.pid.remote()), CALL_S)
                except Exception:
                    raise Silent(f"a Ray worker did not answer within {CALL_S:.0f} s"
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

