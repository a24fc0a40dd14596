"""The global limit's parts without Ray: the limiter, the driver's lease and a worker's slots
(a limiter actor stood in for by the same class called in-process)."""

from __future__ import annotations

import asyncio
from typing import Any

from hopscore.distributed.limits import DriverSlots, Limiter, RemoteSlots


class Remote:
    """A method of an in-process object called as a Ray actor's: ``m.remote(*args)`` runs it
    as a task and returns what to await."""

    def __init__(self, target: Any, name: str) -> None:
        self.target, self.name = target, name

    def remote(self, *args: Any) -> asyncio.Task[Any]:
        async def call() -> Any:
            result = getattr(self.target, self.name)(*args)
            return await result if asyncio.iscoroutine(result) else result

        return asyncio.ensure_future(call())


class Actor:
    def __init__(self, target: Any) -> None:
        self.target = target

    def __getattr__(self, name: str) -> Remote:
        return Remote(self.target, name)


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_driver_lease_hand_over_and_share_never_exceed_the_limit() -> None:
    async def main() -> None:
        limiter = Limiter(4, {"driver": 4})
        slots = DriverSlots(4, "driver")
        held = [await slots.acquire() for _ in range(3)]
        assert slots.used == 3
        slots.hand_over(Actor(limiter))
        worker = RemoteSlots(Actor(limiter), "w1")
        asking = asyncio.ensure_future(worker.acquire())
        await settle()
        assert not asking.done()  # the driver's lease is the whole limit
        slots.share(2)  # one slot free now: it goes to the limiter, and to the worker
        await settle()
        assert asking.done() and limiter.used == 4 and slots.lease == 3
        slots.release(held.pop())  # the driver's lease shrinks to its share
        await settle()
        assert slots.lease == 2 and limiter.held["driver"] == 2
        assert limiter.peak <= 4
        second = asyncio.ensure_future(worker.acquire())
        await settle()
        assert second.done() and limiter.used == 4
        third = asyncio.ensure_future(worker.acquire())
        await settle()
        assert not third.done()
        worker.release(second.result())  # passed on to the waiting request: no remote call
        await settle()
        assert third.done() and limiter.held["w1"] == 2

    asyncio.run(main())


def test_a_dead_holder_s_waiting_asks_take_no_slot() -> None:
    async def main() -> None:
        limiter = Limiter(1)
        assert await limiter.acquire("a", "t1")
        waiting = asyncio.ensure_future(limiter.acquire("b", "t2"))
        await settle()
        limiter.forget("b")  # b died while it waited
        limiter.release("a", "t1")
        assert await waiting is False
        assert limiter.used == 0 and await limiter.acquire("c", "t3")

    asyncio.run(main())


def test_a_dropped_ask_takes_no_slot_whichever_comes_first() -> None:
    async def main() -> None:
        limiter = Limiter(1)
        assert await limiter.acquire("a", "t1")
        waiting = asyncio.ensure_future(limiter.acquire("a", "t2"))
        await settle()
        limiter.drop("a", "t2")  # its request timed out while it waited
        assert await waiting is False and limiter.used == 1
        limiter.drop("a", "t1")  # granted, then dropped: given back
        assert limiter.used == 0
        limiter.drop("a", "t3")  # dropped before it was even asked
        assert await limiter.acquire("a", "t3") is False and limiter.used == 0

    asyncio.run(main())
