"""The limit fills the server: slot occupancy measured in the server (time-weighted busy
slots, over the steady state), against FIFO-slot stand-ins that say how many slots they have
(GET /props, as llama.cpp's llama-server does), and a recovery after the first reply was slow."""

from __future__ import annotations

import asyncio

import pytest

from hopscore.engine import (
    ChatEngine,
    ChatRequest,
    ConcurrencyLimit,
    OpenAIBackend,
    RetryPolicy,
    batch_workers,
)
from hopscore.engine.limit import OK, TIMEOUT
from tests.engine.test_concurrency import Clock, fill
from tests.openai_server import FakeOpenAI, Reply


def occupancy(server: FakeOpenAI, engine: ChatEngine, n: int) -> float:
    """Send ``n`` requests as run_batch does (batch_workers items at once); the server's mean
    busy slots between 15% and 85% of the replies (the ramp and the tail left out)."""
    assert server.slots is not None
    slots = server.slots

    async def go() -> float:
        done = 0
        measured: list[float] = []
        items = asyncio.Semaphore(batch_workers(engine.concurrency))

        async def one(i: int) -> None:
            nonlocal done
            async with items:
                result = await engine.complete(ChatRequest(
                    model="m", messages=[{"role": "user", "content": f"q{i}"}]))
            assert result.ok
            done += 1
            if done == int(0.15 * n):
                slots.occupancy(reset=True)
            elif done == int(0.85 * n):
                measured.append(slots.occupancy())

        try:
            await asyncio.gather(*(one(i) for i in range(n)))
        finally:
            await engine.aclose()
        return measured[0]

    return asyncio.run(go())


@pytest.mark.slow
def test_a_four_slot_server_is_kept_busy() -> None:
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.2, slots=4,
                   props={"total_slots": 4}) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=30)
        busy = occupancy(server, engine, 160)
    stats = engine.limit.stats
    assert stats.server_slots == 4 and stats.server_said == server.base_url[:-3] + "/props"
    assert stats.lowest >= 4  # never below the server's own slots
    assert busy >= 3.5, (busy, stats.to_json())


@pytest.mark.slow
def test_a_sixty_four_slot_server_is_kept_busy_at_the_default_concurrency() -> None:
    # a GPU server: 64 slots, 0.25 s a reply. The default --concurrency (8) used to be the
    # ceiling: 8 of 64 slots busy
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.25, slots=64,
                   props={"total_slots": 64}) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=30)
        busy = occupancy(server, engine, 2000)
    stats = engine.limit.stats
    assert stats.server_slots == 64 and stats.lowest >= 64
    assert busy >= 48, (busy, stats.to_json())


@pytest.mark.slow
def test_a_server_that_says_nothing_is_filled_again_after_a_slow_first_reply() -> None:
    # 4 slots, 0.5 s a reply, a 1.2 s timeout, no /props: the first reply brings the limit
    # down to what is safe for a one-slot server (1); it then rises one at a time while no
    # request waits at the server, and stays below the limit at which requests queued
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.5, slots=4) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=1.2,
                            retry=RetryPolicy(base_delay=0.01))
        busy = occupancy(server, engine, 120)
        sent = len(server.log)
    stats = engine.limit.stats
    assert stats.server_slots is None and stats.lowest == 1
    assert [c["why"] for c in stats.to_json()["trace"]][:2] == ["first reply",
                                                                "additive increase"]
    assert sent == 120 and engine.stats.retries == 0  # nothing was sent twice
    assert busy >= 3.0, (busy, stats.to_json())


def test_a_slow_first_reply_leaves_a_declared_server_its_slots() -> None:
    # issue 23: a 4-slot llama-server whose first reply came at 91 s of a 120 s timeout; the
    # limit fell to 1 and measured a capacity of 1 from then on. Said by /props, the 4 slots
    # stay in flight (none of them waits in a queue), the extra one above them goes
    clock = Clock()
    limit = ConcurrencyLimit(8, timeout=120.0, clock=clock)
    limit.declare(4, "http://127.0.0.1:8080/props")
    assert (limit.limit, limit.floor) == (8, 4)  # --concurrency 8 is above 4 + 1
    tickets = fill(limit)
    clock.now = 91.0
    limit.release(tickets.pop(), OK, 91.0)
    assert limit.limit == 4
    for _ in range(5):  # timeouts halve the limit, never below the slots
        limit.release(tickets.pop(), TIMEOUT)
    assert limit.limit == 4 and limit.stats.lowest == 4
    small = ConcurrencyLimit(2, timeout=120.0, clock=clock)
    small.declare(64, "http://127.0.0.1:8080/props")
    assert (small.limit, small.ceiling, small.stats.start) == (72, 72, 72)
    fixed = ConcurrencyLimit(2, timeout=120.0, adaptive=False, clock=clock)
    fixed.declare(64, "http://127.0.0.1:8080/props")
    assert fixed.limit == 2 and fixed.stats.server_slots == 64
