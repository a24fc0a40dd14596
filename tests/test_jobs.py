"""The one job skeleton (hopscore.jobs): resume by settings, rows in input order, stops that keep
every finished row. The commands built on it are tested end to end in tests/run, tests/judge,
tests/hdr and tests/sql; these pin the skeleton's own promises with an in-process work function."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from hopscore.distributed import Built, local_execution
from hopscore.engine import RowResult
from hopscore.engine.outage import EndpointDown
from hopscore.errors import Interrupted
from hopscore.files.reruns import REFUSE, RESUME_ANY, RerunRefused, side_path
from hopscore.jobs import Job, open_results, run_rows, stream_rows


def key_of(row: dict[str, Any]) -> str | None:
    key = row.get("key")
    return key if isinstance(key, str) else None


def job_of(path: Path, items: list[str], settings: str = "s1") -> Job[str]:
    return Job(path=path, items=items, keys=[f"{settings}:{item}" for item in items],
               key_of=key_of, is_done=lambda row: row.get("error") is None, what="rows",
               stale="rows of other settings; this run replaces them",
               saved=f"rows are saved in {path}")


class Work:
    """Answers each item in upper case; ``stop_at``: raises that exception on that item."""

    def __init__(self, stop_at: str | None = None, stop: BaseException | None = None) -> None:
        self.asked: list[str] = []
        self.closed = False
        self.stop_at, self.stop = stop_at, stop

    async def __call__(self, item: str, key: str) -> RowResult:
        self.asked.append(item)
        await asyncio.sleep(0.002 * (3 - len(item) % 3))  # finishing out of input order
        if item == self.stop_at:
            assert self.stop is not None
            raise self.stop
        return RowResult({"key": key, "answer": item.upper()})

    def execution(self, workers: int = 3) -> Any:
        async def close() -> None:
            self.closed = True

        return local_execution(Built(self, lambda: None, close), workers)


def rows_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def run_job(job: Job[str], work: Work, *, rerun: str | None = REFUSE,
            warn: Console | None = None, on_stop: Any = None) -> Any:
    async def go() -> Any:
        log = open_results(job, warn=warn, rerun=rerun, differences=lambda rows: ["s: old"])
        return await run_rows(job, log, work.execution(), on_stop=on_stop)

    return asyncio.run(go())


def test_rows_end_in_input_order_and_a_rerun_asks_nothing(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    items = ["a", "bb", "ccc", "dddd", "eeeee"]
    first = Work()
    finished = run_job(job_of(out, items), first)
    assert [row["answer"] for row in rows_of(out)] == [item.upper() for item in items]
    assert finished.outcome.processed == 5 and finished.executor == {"executor": "local"}
    assert first.closed
    again = Work()
    finished = run_job(job_of(out, items), again)
    assert again.asked == [] and finished.outcome.already_done == 5


def test_a_failed_row_is_asked_again_and_a_torn_line_is_cut(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    out.write_text(json.dumps({"key": "s1:a", "answer": "A"}) + "\n"
                   + json.dumps({"key": "s1:b", "answer": None, "error": "down"}) + "\n"
                   + '{"key": "s1:c", "ans', encoding="utf-8")
    warn = Console(record=True, width=200)
    work = Work()
    run_job(job_of(out, ["a", "b", "c"]), work, warn=warn)
    assert sorted(work.asked) == ["b", "c"]
    assert [row["answer"] for row in rows_of(out)] == ["A", "B", "C"]
    assert "cut a torn last line" in warn.export_text()


def test_rows_of_other_settings_are_refused_or_set_aside(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    run_job(job_of(out, ["a", "b"], "s1"), Work())
    before = out.read_bytes()
    with pytest.raises(RerunRefused, match="s: old"):
        run_job(job_of(out, ["a", "b"], "s2"), Work())
    assert out.read_bytes() == before  # nothing changed
    warn = Console(record=True, width=200)
    run_job(job_of(out, ["a", "b"], "s2"), Work(), rerun=RESUME_ANY, warn=warn)
    assert [row["key"] for row in rows_of(out)] == ["s2:a", "s2:b"]
    assert [row["key"] for row in rows_of(side_path(out))] == ["s1:a", "s1:b"]
    assert "--resume-any: kept 2 rows" in warn.export_text()


def test_rows_of_other_keys_are_replaced_without_a_policy(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    run_job(job_of(out, ["a", "b"], "s1"), Work())
    warn = Console(record=True, width=200)
    run_job(job_of(out, ["a", "b"], "s2"), Work(), rerun=None, warn=warn)
    assert [row["key"] for row in rows_of(out)] == ["s2:a", "s2:b"]
    assert f"{out} holds 2 rows of other settings; this run replaces them" in warn.export_text()


def test_ctrl_c_keeps_the_finished_rows_and_says_so(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    items = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    stopped: list[bool] = []
    work = Work(stop_at="dddd", stop=asyncio.CancelledError())  # what Ctrl-C raises in the loop
    with pytest.raises(Interrupted) as caught:
        run_job(job_of(out, items), work, on_stop=lambda: stopped.append(True))
    kept = rows_of(out)
    assert stopped == [True] and work.closed
    assert str(caught.value) == (f"{len(kept)} of 6 rows are saved in {out}; rerun the same "
                                 "command to resume")
    assert all(row["answer"] == row["key"][3:].upper() for row in kept)
    resumed = Work()
    run_job(job_of(out, items), resumed)
    assert sorted(resumed.asked) == sorted(set(items) - {row["key"][3:] for row in kept})
    assert [row["key"] for row in rows_of(out)] == [f"s1:{item}" for item in items]


def test_an_outage_names_the_endpoint_and_the_rows_kept(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    work = Work(stop_at="a", stop=EndpointDown("http://x", "refused", 300))
    with pytest.raises(EndpointDown) as caught:
        run_job(job_of(out, ["a"]), work)
    assert caught.value.url == "http://x" and caught.value.seconds == 300
    assert caught.value.cause == (f"refused; 0 of 1 rows are saved in {out}; rerun the same "
                                  "command to resume")


class Counting(Work):
    """Work that counts the rows in flight at once."""

    def __init__(self, stop_at: str | None = None, stop: BaseException | None = None) -> None:
        super().__init__(stop_at, stop)
        self.now = self.most = 0

    async def __call__(self, item: str, key: str) -> RowResult:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await super().__call__(item, key)
        finally:
            self.now -= 1


def test_streamed_rows_keep_the_limit_and_end_in_input_order(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    items = [c * n for n, c in enumerate("abcdefghij", 1)]
    job, work, seen = job_of(out, items), Counting(), []
    read: list[str] = []

    def pending() -> Any:  # read as needed: one waiting beside the limit in flight, no more
        for key, item in zip(job.keys, items, strict=True):
            read.append(item)
            assert len(read) - len(seen) <= 3 + 1
            yield key, item

    async def go() -> dict[str, Any]:
        log = open_results(job, warn=None, rerun=None)
        ran = await stream_rows(log, work.execution(workers=3), pending(), on_row=seen.append)
        log.finalize(job.keys)
        return ran

    assert asyncio.run(go()) == {"executor": "local"}
    assert work.most == 3 and work.closed and len(seen) == 10
    assert [row["answer"] for row in rows_of(out)] == [item.upper() for item in items]


def test_a_stopped_stream_keeps_its_finished_rows_and_closes(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    items = ["a", "bb", "ccc", "dddd", "eeeee", "ffffff"]
    job, work = job_of(out, items), Counting(stop_at="dddd", stop=KeyboardInterrupt())

    async def go() -> None:
        log = open_results(job, warn=None, rerun=None)
        try:
            await stream_rows(log, work.execution(workers=2), zip(job.keys, items, strict=True))
        finally:
            log.close()

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(go())
    kept = rows_of(out)
    assert work.closed and work.now == 0 and "dddd" not in {row["answer"].lower() for row in kept}
    assert all(row["answer"] == row["key"][3:].upper() for row in kept)
