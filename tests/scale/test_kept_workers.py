"""A kept Ray worker (hopscore.distributed.reuse) serves one command after another: one work
function per command (job id), built once, released at its command's end, never built for a
command that already ended; and which commands keep their workers. Runs the worker class in
this process (no Ray)."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest

from hopscore.distributed import reuse
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
