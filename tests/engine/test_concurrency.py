"""Adaptive concurrency against loopback servers that behave like real ones: a one-slot server
(llama.cpp's default) is never sent duplicate work, a parallel one gets the whole ceiling, a
rate-limited one is backed off from."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from pathlib import Path

from hopscore.engine import ChatEngine, ChatRequest, ConcurrencyLimit, OpenAIBackend, RetryPolicy
from hopscore.engine.limit import OK, OTHER, RATE_LIMIT, TIMEOUT
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply


def run_requests(engine: ChatEngine, n: int, prefix: str = "q") -> list[bool]:
    async def go() -> list[bool]:
        sem = asyncio.Semaphore(engine.concurrency)  # as run_batch: `concurrency` workers

        async def one(i: int) -> bool:
            async with sem:
                result = await engine.complete(ChatRequest(
                    model="m", messages=[{"role": "user", "content": f"{prefix}{i}"}]))
                return result.ok

        try:
            return list(await asyncio.gather(*(one(i) for i in range(n))))
        finally:
            await engine.aclose()

    return asyncio.run(go())


def duplicates(server: FakeOpenAI) -> int:
    return sum(count - 1 for count in Counter(server.prompts()).values())


def test_a_one_slot_server_is_never_sent_duplicate_work() -> None:
    # 8 in flight would queue 3.2 s of work behind a 1.5 s timeout: half the requests would
    # time out while waiting and be sent (and computed) again
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.4, slots=1) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=1.5,
                            retry=RetryPolicy(base_delay=0.01))
        assert all(run_requests(engine, 10))
        assert len(server.log) == 10 and duplicates(server) == 0
        assert engine.stats.retries == 0
    # the opening wave went out whole (8 at the server at once), then the first reply (0.4 s:
    # at most 1.5 / (3 x 0.4) = 1 is timeout-safe) brought the limit down to one
    assert server.max_in_flight == 8
    trace = engine.limit.stats.to_json()["trace"]
    assert (trace[0]["limit"], trace[0]["why"]) == (1, "first reply")


def test_the_opening_wave_waits_its_turn_at_a_one_slot_server_with_uneven_latencies() -> None:
    # a one-slot server whose replies take 0.3 to 0.9 s, 12 at once, a 1.2 s timeout: the
    # last of the opening wave is answered after about 7 s, long past its timeout, but the
    # endpoint answers one of the wave at least every 0.9 s, so none is abandoned
    delays = [0.0, 0.6, 0.2, 0.4, 0.1, 0.5, 0.0, 0.3, 0.6, 0.2, 0.1, 0.4]
    with FakeOpenAI(lambda p, a: Reply("ok", delay=delays[int(p[1:]) % 12]), latency=0.3,
                    slots=1) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=12, timeout=1.2,
                            retry=RetryPolicy(base_delay=0.01))
        assert all(run_requests(engine, 14))
        assert len(server.log) == 14 and duplicates(server) == 0
        assert engine.stats.retries == 0


def test_a_request_that_hangs_in_the_opening_wave_still_times_out() -> None:
    # a parallel server that answers everything at once except one request it never answers:
    # that attempt is cut --timeout after the wave's last reply (not kept waiting for ever)
    # and its retry is answered
    with FakeOpenAI(lambda p, a: Reply("ok", stall=p == "q3" and a == 0),
                    latency=0.1) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=1.0,
                            retry=RetryPolicy(base_delay=0.01))
        started = time.monotonic()
        assert all(run_requests(engine, 8))
        took = time.monotonic() - started
    assert engine.stats.retried_by_kind == {"timeout": 1}
    assert 1.0 <= took < 3.0, took


def test_a_one_slot_server_through_the_cli_at_the_default_concurrency(tmp_path: Path) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text("".join(json.dumps({"id": i, "question": f"Q{i:03d}?", "response": "x",
                                       "correct_answer": "x"}) + "\n" for i in range(8)))
    with FakeOpenAI(lambda p, a: judge_reply(True), latency=0.5, slots=1) as server:
        result = run_cli("judge", "-i", inp, "-o", tmp_path / "out.jsonl", "--model", "m",
                         "--base-url", server.base_url, "--timeout", "2", "--no-progress",
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
        assert result.returncode == 0, result.stderr
        assert len(server.log) == 8 and duplicates(server) == 0
    for line in (tmp_path / "out.jsonl").read_text().splitlines():
        assert [a["status"] for a in json.loads(line)["judge"]["attempts"]] == [200]


def test_the_old_fixed_concurrency_does_duplicate_work_on_a_one_slot_server() -> None:
    """The case above, with the limit pinned at the ceiling (what hopscore did before)."""
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.4, slots=1) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=8, timeout=1.5,
                            retry=RetryPolicy(base_delay=0.01), adaptive=False)
        run_requests(engine, 10)
        assert duplicates(server) > 0 and engine.stats.retried_by_kind.get("timeout", 0) > 0


def test_a_parallel_server_gets_the_whole_ceiling() -> None:
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.3) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=16, timeout=30)
        started = time.monotonic()
        assert all(run_requests(engine, 96))
        took = time.monotonic() - started
        assert engine.limit.stats.peak == 16 and server.max_in_flight >= 12
        # ideal 1.8 s (96 / 16 x 0.3); no round is spent at one request
        assert took < 6.0, took
        assert engine.stats.concurrency is not None
        assert engine.stats.concurrency["start"] == 16
        assert engine.stats.concurrency["lowest"] == 16


def test_a_four_slot_server_is_sent_about_what_it_serves() -> None:
    with FakeOpenAI(lambda p, a: Reply("ok"), latency=0.15, slots=4) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=16, timeout=30)
        assert all(run_requests(engine, 120))
        assert duplicates(server) == 0
        # about the 4 it serves at once (fewer when this loopback server is slowed down by a
        # busy machine: then fewer sustain the same throughput), never the ceiling
        assert 2 <= engine.limit.limit <= 10, engine.limit.stats.to_json()


class RateLimited:
    """Serves `room` requests at once and answers 429 to any beyond."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.busy = 0
        self.lock = threading.Lock()
        self.rejected = 0

    def __call__(self, prompt: str, attempt: int) -> Reply:
        with self.lock:
            if self.busy >= self.room:
                self.rejected += 1
                return Reply(status=429, headers={"Retry-After": "0.05"})
            self.busy += 1
        time.sleep(0.1)
        with self.lock:
            self.busy -= 1
        return Reply("ok")


def test_rate_limits_bring_the_limit_down() -> None:
    limiter = RateLimited(room=3)
    with FakeOpenAI(limiter) as server:
        engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=24, timeout=30,
                            retry=RetryPolicy(max_retries=20, base_delay=0.02, max_delay=0.1))
        assert all(run_requests(engine, 90))
        assert len(server.log) >= 90
    assert engine.limit.limit <= 6, engine.limit.stats.to_json()
    assert engine.stats.retried_by_kind.get("rate_limit", 0) == limiter.rejected


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fill(limit: ConcurrencyLimit) -> list[int]:
    """Take every free slot (no waiting); return the tickets."""
    async def go() -> list[int]:
        tickets = []
        while limit.in_flight < limit.limit:
            tickets.append(await limit.acquire())
        return tickets

    return asyncio.run(go())


def test_timeouts_halve_the_limit_and_rate_limits_count_once_a_round() -> None:
    clock = Clock()
    limit = ConcurrencyLimit(64, timeout=100.0, clock=clock)
    tickets = fill(limit)
    assert len(tickets) == 64 and limit.opening  # the opening wave: the whole ceiling
    clock.now = 0.2
    limit.release(tickets.pop(), OK, 0.2)  # a fast first reply: 64 is timeout-safe
    assert limit.limit == 64 and not limit.opening
    tickets += fill(limit)
    assert len(tickets) == 64
    limit.release(tickets.pop(), TIMEOUT)
    assert limit.limit == 32
    limit.release(tickets.pop(), RATE_LIMIT)
    assert limit.limit == 16
    limit.release(tickets.pop(), RATE_LIMIT)  # the same burst: no second halving this round
    assert limit.limit == 16


def test_the_safe_limit_keeps_queued_work_within_the_timeout() -> None:
    clock = Clock()
    limit = ConcurrencyLimit(64, timeout=10.0, clock=clock)
    tickets = fill(limit)
    clock.now = 1.0
    limit.release(tickets.pop(), OK, 1.0)  # 1 s replies, 10 s timeout: at most 3 queued in a row
    assert limit.limit == 3
    # no slot is refilled while the opening wave's 63 are still out: only below 3 in flight
    assert fill(limit) == []
    for _ in range(61):
        limit.release(tickets.pop(), OK, 1.0)
    assert limit.in_flight == 2 and len(fill(limit)) == 1
    limit = ConcurrencyLimit(8, timeout=2.0, clock=clock)
    tickets = fill(limit)
    clock.now += 1.0
    limit.release(tickets.pop(), OK, 1.0)  # replies take half the timeout: one in flight
    assert limit.limit == 1


def test_the_first_judged_round_settles_where_the_endpoint_queued() -> None:
    # 16 at a 4-slot server with 1 s replies and a long timeout: answered 4 a second; the
    # opening round measures a capacity of 4 and settles at 4 plus a quarter
    clock = Clock()
    limit = ConcurrencyLimit(16, timeout=1000.0, clock=clock)
    tickets = fill(limit)
    for second in range(1, 5):
        clock.now = float(second)
        for _ in range(4):
            limit.release(tickets.pop(), OK, float(second))
            tickets += fill(limit)
    assert limit.limit == 5, limit.stats.to_json()
    assert limit.stats.trace[-1][2] == "saturated"


def test_a_round_with_a_request_that_failed_for_good_still_ends() -> None:
    clock = Clock()
    limit = ConcurrencyLimit(4, timeout=1000.0, clock=clock)
    tickets = fill(limit)
    clock.now = 1.0
    limit.release(tickets.pop(), OTHER)  # an HTTP 400, not retried
    for _ in range(3):
        limit.release(tickets.pop(), OK, 1.0)
    assert limit._round_id == 2  # the opening round was judged


def test_fixed_concurrency_keeps_the_ceiling() -> None:
    limit = ConcurrencyLimit(8, timeout=1.0, adaptive=False)
    tickets = fill(limit)
    assert limit.limit == 8 and len(tickets) == 8
    limit.release(tickets[0], TIMEOUT)
    assert limit.limit == 8
