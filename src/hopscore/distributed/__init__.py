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
from typing import TYPE_CHECKING, Any

from hopscore.distributed.work import Built, Gate, WorkFactory

if TYPE_CHECKING:
    from hopscore.engine import EngineStats, RowResult

__all__ = ["EXECUTORS", "Built", "Execution", "Gate", "WorkFactory", "check_executor",
           "local_execution", "ray_execution"]

EXECUTORS = ("local", "ray")


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
                        workers: int | None,
                        local: Callable[[Gate], Awaitable[Built]] | None = None,
                        local_workers: int = 0, rows: int | None = None,
                        local_cpus: int = 0) -> Execution:
    """``--executor ray``: the work on Ray workers (see :mod:`hopscore.distributed.ray_pool`).

    ``local``: builds the driver's own work function (given the gate that puts its attempts
    under the same global limits as the workers'); the driver then works on rows with it at
    once, ``local_workers`` at a time, while Ray starts or connects in the background, and goes
    on beside the workers once they are ready. ``rows``: how many rows there are to do (when
    known): no worker is made when the driver is nearly done by the time Ray is up.
    ``local_cpus``: the CPUs the driver's own work keeps busy (sql-match's sandbox): no worker
    is placed on them (:mod:`hopscore.distributed.placement`)."""
    from hopscore.distributed.ray_pool import RayPool

    pool = RayPool(factory, limits=limits, per_worker=per_worker, workers=workers,
                   local_workers=local_workers if local is not None else 0, rows=rows,
                   local_cpus=local_cpus if local is not None else 0)
    built = await local(pool.driver_gate()) if local is not None else None
    await pool.start(built)
    # the items go to the pool at once; the driver's own loops start spread out as a local
    # run's do (RayPool.start)
    return Execution(pool.work, pool.capacity, lambda: pool.stats, pool.close, 0.0,
                     pool.counts.to_json)


def check_executor(name: str) -> str:
    from hopscore.errors import HopscoreError

    value = name.strip().lower()
    if value not in EXECUTORS:
        raise HopscoreError(f"--executor must be one of {', '.join(EXECUTORS)}, not {name!r}")
    return value
