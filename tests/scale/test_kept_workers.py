"""A kept Ray worker (hopscore.distributed.reuse) serves one command after another: one work
function per command (job id), built once, released at its command's end, never built for a
command that already ended; and which commands keep their workers. Runs the worker class in
this process (no Ray)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest

from hopscore.distributed import actors, reuse
from hopscore.distributed.actors import BatchWorker, ray_line
from hopscore.distributed.work import Built, Gate
from hopscore.engine import CallFailure, RowResult
from hopscore.errors import HopscoreError


class Factory:
    """Work that answers ``tag:key``; counts its builds and closes."""

    ships_items: ClassVar[bool] = True

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.builds = 0
        self.closed = 0

    async def build(self, gate: Gate | None) -> Built:
        self.builds += 1

        async def work(item: Any, key: str) -> RowResult:
            return RowResult({"key": key, "by": self.tag, "item": item})

        async def close() -> None:
            self.closed += 1

        return Built(work, lambda: None, close)

    def lost_row(self, item: Any, key: str, failure: CallFailure) -> dict[str, Any]:
        return {"key": key}


async def rows(worker: BatchWorker, job: str, batch: list[tuple[str, Any]]) -> list[Any]:
    return [result.row async for _, result, _ in worker.run(job, batch)]


def test_a_kept_worker_serves_each_command_with_its_own_work() -> None:
    async def go() -> None:
        worker = BatchWorker(keep_s=None)
        first, second = Factory("run"), Factory("judge")
        # the first command: a fresh worker (no command served before)
        assert await worker.ready("job-1", first, {}, "h1") == 0
        assert await worker.ready("job-1", first, {}, "h1") == 0  # the same job, not rebuilt
        got = await rows(worker, "job-1", [("a", 1), ("b", 2)])
        assert sorted(r["key"] for r in got) == ["a", "b"] and {r["by"] for r in got} == {"run"}
        await worker.close("job-1")
        assert (first.builds, first.closed) == (1, 1) and worker.jobs == {}
        # the next command finds the worker (one command served before) and builds its own
        assert await worker.ready("job-2", second, {}, "h2") == 1
        got = await rows(worker, "job-2", [("c", 3)])
        assert got == [{"key": "c", "by": "judge", "item": 3}]
        # a batch of an ended command is refused; a late ready of it builds nothing
        with pytest.raises(HopscoreError, match="does not know"):
            await rows(worker, "job-1", [("d", 4)])
        await worker.ready("job-1", first, {}, "h1")
        assert first.builds == 1 and "job-1" not in worker.jobs
        await worker.close("job-2")
        assert second.closed == 1

    asyncio.run(go())


def test_which_commands_keep_their_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOPSCORE_RAY_REUSE", raising=False)
    assert reuse.wanted(embedded=False, local_cpus=0)
    assert not reuse.wanted(embedded=True, local_cpus=0)  # the command's own Ray
    assert not reuse.wanted(embedded=False, local_cpus=2)  # sql-match holds CPUs
    monkeypatch.setenv("HOPSCORE_RAY_REUSE", "0")
    assert not reuse.wanted(embedded=False, local_cpus=0)
    monkeypatch.setenv("HOPSCORE_RAY_KEEP_S", "30")
    assert reuse.keep_s() == 30.0
    monkeypatch.setenv("HOPSCORE_RAY_KEEP_S", "soon")
    assert reuse.keep_s() == reuse.KEEP_S
    assert reuse.namespace() == reuse.namespace() and reuse.namespace().startswith("hopscore-")


def test_the_ray_line_says_what_was_kept_and_why_ray_did_not_start() -> None:
    line = ray_line({"rows_on_driver": 300, "rows_on_workers": 700, "workers": 2,
                     "reused": 2})
    assert line == "ray: 300 rows on the driver, 700 on 2 workers (2 kept from an earlier command)"
    line = ray_line({"rows_on_driver": 10, "ray_lost": "Ray did not start: port in use"})
    assert line.endswith("; Ray did not start: port in use: the driver did the rows")


class Limiter:
    """A command's limiter actor, as a kept worker probes it: ``stats.remote()`` answers while
    the command's driver lives, and fails once it is gone (the actor died with it)."""

    def __init__(self) -> None:
        self.alive = True
        self.stats = SimpleNamespace(remote=self._stats)

    async def _stats(self) -> dict[str, Any]:
        if not self.alive:
            raise RuntimeError("the actor died")
        return {}


class Ended(Exception):
    """What the worker's ``os._exit`` raises here (the test process goes on)."""


def ending(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    codes: list[int] = []

    def exit_(code: int) -> None:
        codes.append(code)
        raise Ended

    monkeypatch.setattr(actors.os, "_exit", exit_)
    return codes


async def ended(worker: BatchWorker) -> None:
    """Wait (5 s at most) for the worker's watch to end it."""
    assert worker.watching is not None
    with pytest.raises(Ended):
        await asyncio.wait_for(worker.watching, 5)


async def idle(worker: BatchWorker, seconds: float) -> None:
    """Let ``seconds`` pass; the worker's watch must not have ended it."""
    await asyncio.sleep(seconds)
    assert worker.watching is not None and not worker.watching.done()


def test_a_kept_worker_ends_itself_once_no_command_used_it_for_keep_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    codes = ending(monkeypatch)

    async def go() -> None:
        worker = BatchWorker(keep_s=0.2)
        work, limiter = Factory("judge"), Limiter()
        await worker.ready("job-1", work, {"http://e/v1": limiter}, "h1")
        assert len(await rows(worker, "job-1", [("a", 1)])) == 1
        await idle(worker, 0.7)  # idle, but its command's driver lives: kept, job and all
        assert "job-1" in worker.jobs and work.closed == 0
        await worker.close("job-1")  # the command ended
        await ended(worker)
        assert codes == [0]

    asyncio.run(go())


def test_a_kept_workers_job_whose_driver_died_is_closed_then_the_worker_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    codes = ending(monkeypatch)

    async def go() -> None:
        worker = BatchWorker(keep_s=0.2)
        work, limiter = Factory("run"), Limiter()
        await worker.ready("job-1", work, {"http://e/v1": limiter}, "h1")
        await rows(worker, "job-1", [("a", 1)])
        limiter.alive = False  # the driver was killed: its command never closes the job
        await ended(worker)
        assert work.closed == 1 and worker.jobs == {} and codes == [0]

    asyncio.run(go())


def test_a_kept_worker_serving_a_command_is_not_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    codes = ending(monkeypatch)

    async def go() -> None:
        worker = BatchWorker(keep_s=0.2)
        release = asyncio.Event()

        class Slow(Factory):
            async def build(self, gate: Gate | None) -> Built:
                async def work(item: Any, key: str) -> RowResult:
                    await release.wait()
                    return RowResult({"key": key})

                async def close() -> None:
                    self.closed += 1

                return Built(work, lambda: None, close)

        limiter = Limiter()
        limiter.alive = False  # even with its driver not answering: a batch runs
        await worker.ready("job-1", Slow("slow"), {"http://e/v1": limiter}, "h1")
        batch = asyncio.ensure_future(rows(worker, "job-1", [("a", 1)]))
        await idle(worker, 0.7)
        assert "job-1" in worker.jobs and codes == []
        release.set()
        assert len(await batch) == 1
        await ended(worker)  # then idle, its driver gone: closed, and the worker ends
        assert codes == [0]

    asyncio.run(go())
