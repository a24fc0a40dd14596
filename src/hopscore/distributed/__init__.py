"""How a command's rows are executed: in this process (the default), or on a Ray cluster
(``--executor ray``, the ``hopscore[ray]`` extra).

Either way a runner describes its work as a :class:`WorkFactory`: a small picklable object
whose :meth:`~WorkFactory.build` makes, where the rows run, the same work function a local run
uses (its request engine, agent loop, SQL sandbox). Locally the factory is built in this
process and :func:`~hopscore.engine.run_batch` calls the work function directly; under Ray it
is built once in each worker actor and the driver's ``run_batch`` sends it items through a
:class:`~hopscore.distributed.ray_pool.RayPool`, receives every finished row and alone writes
the output, with the same resume keys.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from hopscore.engine import CallFailure, ChatBackend, EngineStats, RowResult

EXECUTORS = ("local", "ray")


class Gate(Protocol):
    """Where concurrency limits are global (a Ray cluster): wraps a backend so that every
    attempt it sends holds a slot of its endpoint's cluster-wide limit."""

    def wrap(self, backend: ChatBackend) -> ChatBackend: ...


@dataclass(slots=True)
class Built:
    """A work function made by a factory, with its engine's counts and its clean-up."""

    work: Callable[[Any, str], Awaitable[RowResult]]
    stats: Callable[[], EngineStats | None]
    close: Callable[[], Awaitable[None]]
    #: seconds between the starts of run_batch's workers (the engine's)
    start_interval: float = 0.005


class WorkFactory(Protocol):
    """Makes a command's work function where its rows run (picklable: it travels to Ray
    workers). Under Ray the items sent are ``None`` and ``key`` names the item: the factory
    finds it in what it prepared itself (a run's tasks), unless :attr:`ships_items` is true."""

    #: True when items themselves travel to the workers (judge rows, sql-match lines); false
    #: when a worker prepares the run and finds each item by its key (model runs, HDR).
    ships_items: ClassVar[bool]

    async def build(self, gate: Gate | None) -> Built: ...

    def lost_row(self, item: Any, key: str, failure: CallFailure) -> dict[str, Any]:
        """The failed row of an item whose workers kept dying (``item``: the driver's)."""
        ...


@dataclass(slots=True)
class Execution:
    """Where a command's work runs: what :func:`~hopscore.engine.run_batch` is given."""

    work: Callable[[Any, str], Awaitable[RowResult]]
    #: items in flight
    workers: int
    stats: Callable[[], EngineStats]
    close: Callable[[], Awaitable[None]]
    start_interval: float = 0.005
    #: the Ray pool's counts (None: the local executor)
    describe: Callable[[], dict[str, Any]] = lambda: {"executor": "local"}


def local_execution(built: Built, workers: int) -> Execution:
    """The default: the built work function called in this process."""
    from hopscore.engine import EngineStats

    return Execution(built.work, workers, lambda: built.stats() or EngineStats(), built.close,
                     built.start_interval)


async def ray_execution(factory: WorkFactory, *, limits: dict[str, int], per_worker: int,
                        workers: int | None) -> Execution:
    """``--executor ray``: the work on Ray workers (see :mod:`hopscore.distributed.ray_pool`)."""
    from hopscore.distributed.ray_pool import RayPool

    pool = await RayPool(factory, limits=limits, per_worker=per_worker, workers=workers).start()
    return Execution(pool.work, pool.capacity, lambda: pool.stats, pool.close, 0.0,
                     pool.counts.to_json)


def check_executor(name: str) -> str:
    from hopscore.errors import HopscoreError

    value = name.strip().lower()
    if value not in EXECUTORS:
        raise HopscoreError(f"--executor must be one of {', '.join(EXECUTORS)}, not {name!r}")
    return value
