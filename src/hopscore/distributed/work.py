"""What a runner hands to an executor: the work it describes (:class:`WorkFactory`), the work
function a factory builds (:class:`Built`) and the gate a cluster puts around every request
(:class:`Gate`). Both executors (:mod:`hopscore.distributed`, :mod:`.ray_pool`) build on these."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from hopscore.errors import HopscoreError

if TYPE_CHECKING:
    from hopscore.engine import CallFailure, ChatBackend, EngineStats, RowResult


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
    #: when a worker prepares the run and finds each item by its key (model runs, agent runs).
    ships_items: ClassVar[bool]

    async def build(self, gate: Gate | None) -> Built: ...

    def lost_row(self, item: Any, key: str, failure: CallFailure) -> dict[str, Any]:
        """The failed row of an item whose workers kept dying (``item``: the driver's)."""
        ...


def prepared_elsewhere(key: str, what: str) -> HopscoreError:
    """The error of a worker asked for an item it did not prepare: its node read other files
    than the driver (a factory that finds items by key prepared the run from the same paths)."""
    return HopscoreError(
        f"a Ray worker on {socket.gethostname()} has no {what} with the key {key}: it prepared "
        "the run from other files than the driver (the gold, tasks, exemplars and corpus must "
        "be the same files at the same paths on every node)")
