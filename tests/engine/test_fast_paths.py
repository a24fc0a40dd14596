"""What keeps the engine's own overhead low, and that it changes nothing a run records: items
fed to a batch while it runs, cache lookups and writes handed to their threads together, and
coroutine results that asyncio.run never formats."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine import ChatResponse, ResponseCache, ResultLog, RowResult, run_batch, run_sync
from hopscore.engine.cache import WRITE_BATCH, WRITE_DELAY_S
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, gold_replies, load, rows, run_args


def reply(text: str) -> ChatResponse:
    return ChatResponse.from_body({"choices": [{"message": {"role": "assistant", "content": text},
                                                "finish_reason": "stop"}]})


def test_cache_lookups_of_one_turn_are_one_query_and_answer_each_key(tmp_path: Path) -> None:
    cache = ResponseCache.in_dir(tmp_path)
    for i in range(0, 20, 2):
        cache.put_sync(f"k{i}", reply(f"v{i}"), 0.1 * i)
    calls: list[int] = []
    original = cache._get_many

    def counted(keys: Any) -> Any:
        calls.append(len(keys))
        return original(keys)

    cache._get_many = counted  # type: ignore[method-assign]

    async def go() -> list[Any]:
        found = await asyncio.gather(*(cache.aget(f"k{i}") for i in range(20)), cache.aget("k0"))
        await cache.aclose()
        return list(found)

    found = asyncio.run(go())
    assert calls == [21]
    for i in range(20):
        hit = found[i]
        if i % 2:
            assert hit is None
        else:
            assert hit is not None and hit[0].content == f"v{i}"
            assert hit[1] == pytest.approx(0.1 * i)
    assert found[20] is not None and found[20][0].content == "v0"


def test_cache_writes_close_together_are_one_transaction_and_none_is_lost(
        tmp_path: Path) -> None:
    cache = ResponseCache.in_dir(tmp_path)
    batches: list[int] = []
    original = cache._put_many

    def counted(entries: Any) -> None:
        batches.append(len(entries))
        original(entries)

    cache._put_many = counted  # type: ignore[method-assign]

    async def go() -> None:
        for i in range(50):
            cache.put(f"k{i}", reply(f"v{i}"), None)
            await asyncio.sleep(0)  # replies of separate turns of the loop
        await asyncio.sleep(WRITE_DELAY_S * 4)  # written without waiting for the close
        cache._writer.submit(lambda: None).result()
        assert batches == [50]
        for i in range(50, 50 + WRITE_BATCH + 10):  # a full batch is handed over at once
            cache.put(f"k{i}", reply(f"v{i}"), None)
        cache._writer.submit(lambda: None).result()
        assert batches[1:] == [WRITE_BATCH]
        await cache.aclose()  # the 10 queued just before closing: written too

    asyncio.run(go())
    assert batches == [50, WRITE_BATCH, 10]
    again = ResponseCache.in_dir(tmp_path)
    try:
        assert len(again) == 60 + WRITE_BATCH
        hit = again.get(f"k{59 + WRITE_BATCH}")
        assert hit is not None and hit[0].content == f"v{59 + WRITE_BATCH}"
    finally:
        again.close()


def test_a_write_waiting_for_its_transaction_is_read_back_at_once(tmp_path: Path) -> None:
    """A reply cached a moment ago is a hit for the next request of the same process (MCR's
    second round asks what its first did) before its batch has been committed."""
    cache = ResponseCache.in_dir(tmp_path)
    other = ResponseCache.in_dir(tmp_path)  # another process's view: only the database

    async def go() -> None:
        cache.put("k", reply("v"), 0.5)
        hit = await cache.aget("k")
        assert hit is not None and hit[0].content == "v" and hit[1] == 0.5
        assert await other.aget("k") is None  # not committed yet
        cache.flush()
        assert cache._pending == {}  # committed: the database answers from now on
        again = await other.aget("k")
        assert again is not None and again[0].content == "v"
        await cache.aclose()
        await other.aclose()

    asyncio.run(go())


def test_a_cache_write_outside_an_event_loop_is_handed_over_at_once(tmp_path: Path) -> None:
    cache = ResponseCache.in_dir(tmp_path)
    cache.put("k", reply("v"), None)
    cache.flush()
    try:
        hit = cache.get("k")
        assert hit is not None and hit[0].content == "v"
    finally:
        cache.close()


class Loud:
    """A result that must never be formatted."""

    def __repr__(self) -> str:
        raise AssertionError("the result was formatted")


def test_run_sync_returns_the_result_without_formatting_it() -> None:
    async def value() -> Loud:
        return Loud()

    async def failing() -> None:
        raise KeyError("boom")

    assert isinstance(run_sync(value()), Loud)
    with pytest.raises(KeyError, match="boom"):
        run_sync(failing())


def test_a_run_sends_each_example_once_to_a_one_slot_server(tmp_path: Path) -> None:
    # a few more items in flight than the limit, a freed slot used at once: none sent twice
    answers = gold_replies("hotpotqa")
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}"), latency=0.15,
                    slots=1) as server:
        out = tmp_path / "run"
        result = run_cli(*run_args("hotpotqa", server.base_url, out, tmp_path / "cache",
                                   "--timeout", "3"))
        assert result.returncode == 0, result.stderr
        samples = rows(out / "samples.jsonl")
        assert len(server.log) == len(samples) == load(out / "metrics.json")["n_gold"]
        assert max(Counter(server.prompts()).values()) == 1
        assert all(s["error"] is None and len(s["attempts"]) == 1 for s in samples)
        assert load(out / "config.json")["requests"]["sent"] == len(samples)
        assert json.loads((out / "metrics.json").read_text())["run"]["errors"] == 0


def test_a_batch_takes_items_while_it_runs_and_keeps_their_order(tmp_path: Path) -> None:
    log = ResultLog(tmp_path / "rows.jsonl", lambda row: row.get("key"))
    log.load(lambda row: True)
    log.append({"key": "k3", "value": "earlier"})  # done before: skipped
    started: list[str] = []

    async def source() -> AsyncIterator[tuple[str, int]]:
        for i in range(2, 8):
            yield f"k{i}", i
            await asyncio.sleep(0.01)
            if i == 2:
                assert started, "no work started before the source was done"

    async def work(item: int, key: str) -> RowResult:
        started.append(key)
        await asyncio.sleep(0.02)
        return RowResult({"key": key, "value": item})

    outcome = asyncio.run(run_batch([0, 1], ["k0", "k1"], work, log, workers=3,
                                    start_interval=0.0, source=source()))
    assert (outcome.total, outcome.already_done, outcome.processed) == (8, 1, 7)
    assert sorted(started) == [f"k{i}" for i in range(8) if i != 3]
    written = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [row["key"] for row in written] == [f"k{i}" for i in range(8)]
    assert written[3]["value"] == "earlier"


def test_a_source_that_fails_stops_the_batch_and_keeps_what_finished(tmp_path: Path) -> None:
    log = ResultLog(tmp_path / "rows.jsonl", lambda row: row.get("key"))

    async def source() -> AsyncIterator[tuple[str, int]]:
        yield "a", 1
        await asyncio.sleep(0.05)
        raise KeyError("no table for example b")

    async def work(item: int, key: str) -> RowResult:
        return RowResult({"key": key, "value": item})

    with pytest.raises(KeyError, match="no table"):
        asyncio.run(run_batch([], [], work, log, workers=2, source=source()))
    again = ResultLog(tmp_path / "rows.jsonl", lambda row: row.get("key"))
    again.load(lambda row: True)
    assert again.is_done("a")
