"""run_batch with an in-process backend: resume, order, fatal stop, and the backend contract."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine import (
    CallError,
    ChatEngine,
    ChatRequest,
    ChatResponse,
    ResultLog,
    RetryPolicy,
    RowResult,
    Usage,
    run_batch,
)


class EchoBackend:
    """A model that runs in-process (the shape a local model backend takes)."""

    endpoint = "local:echo"

    def __init__(self, fail: dict[str, str] | None = None) -> None:
        self.fail = fail or {}
        self.calls: list[str] = []

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        prompt = request.messages[-1]["content"]
        self.calls.append(prompt)
        await asyncio.sleep(0.001)
        if prompt in self.fail:
            raise CallError(self.fail[prompt], f"scripted {self.fail[prompt]}", status=401)
        if prompt == "crash":
            raise RuntimeError("backend bug")
        body = {"choices": [{"message": {"content": prompt.upper()}, "finish_reason": "stop"}]}
        return ChatResponse("ECHO " + prompt, None, "stop", Usage(1, 2), "echo", body)

    async def aclose(self) -> None:
        pass


def key_of(row: dict[str, Any]) -> str | None:
    return row.get("key")


def run(items: list[str], log: ResultLog, backend: EchoBackend, workers: int = 3) -> Any:
    engine = ChatEngine(backend, concurrency=workers, timeout=5,
                        retry=RetryPolicy(max_retries=1, base_delay=0))

    async def work(item: str, key: str) -> RowResult:
        message = {"role": "user", "content": item}
        call = await engine.complete(ChatRequest(model="m", messages=[message]))
        row = {"key": key, "answer": call.response.content if call.response else None}
        return RowResult(row, done=call.ok, failure=call.failure)

    return asyncio.run(run_batch(items, [f"k-{i}" for i in items], work, log, workers=workers))


def test_resume_runs_only_missing_items_and_orders_output(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    items = [f"q{i}" for i in range(10)]
    log = ResultLog(path, key_of)
    log.append({"key": "k-q3", "answer": "ECHO q3"})
    log.append({"key": "k-q7", "answer": None}, done=False)
    log.close()
    backend = EchoBackend()
    log = ResultLog(path, key_of)
    log.load(lambda row: row["answer"] is not None)
    outcome = run(items, log, backend)
    assert sorted(backend.calls) == sorted(i for i in items if i != "q3")
    assert outcome.already_done == 1 and outcome.processed == 9 and outcome.complete
    assert outcome.dropped_rows == 1
    lines = path.read_text().splitlines()
    assert [line.split('"k-')[1].split('"')[0] for line in lines] == items


def test_backend_bug_becomes_a_failure_row(tmp_path: Path) -> None:
    outcome = run(["a", "crash", "b"], ResultLog(tmp_path / "o.jsonl", key_of), EchoBackend())
    assert outcome.failed == 1 and outcome.complete


def test_fatal_failure_stops_dispatching(tmp_path: Path) -> None:
    backend = EchoBackend(fail={"q0": "fatal"})
    items = [f"q{i}" for i in range(50)]
    outcome = run(items, ResultLog(tmp_path / "o.jsonl", key_of), backend, workers=1)
    assert outcome.aborted is not None and outcome.aborted.kind == "fatal"
    assert backend.calls == ["q0"]
    assert not outcome.complete


def test_keys_must_be_unique_and_match(tmp_path: Path) -> None:
    log = ResultLog(tmp_path / "o.jsonl", key_of)

    async def wrong(item: str, key: str) -> RowResult:
        return RowResult({"key": "other"})

    with pytest.raises(ValueError, match="another key"):
        asyncio.run(run_batch(["a"], ["k"], wrong, log, workers=1))
    with pytest.raises(ValueError, match="not unique"):
        asyncio.run(run_batch(["a", "b"], ["k", "k"], wrong, log, workers=1))


def test_workers_whose_turn_comes_after_the_last_item_do_not_start(tmp_path: Path) -> None:
    """Three items, so three workers, 10 s apart: the first takes every item in well under
    10 s, and the batch ends then, not after the last worker's turn (20 s)."""
    log = ResultLog(tmp_path / "out.jsonl", key_of)
    started: list[str] = []

    async def work(item: str, key: str) -> RowResult:
        started.append(key)
        await asyncio.sleep(0.01)
        return RowResult({"key": key, "answer": item}, done=True)

    async def batch() -> Any:
        return await asyncio.wait_for(run_batch(
            ["a", "b", "c"], ["k-a", "k-b", "k-c"], work, log, workers=50,
            start_interval=10.0), 60)

    outcome = asyncio.run(batch())
    assert outcome.processed == 3 and sorted(started) == ["k-a", "k-b", "k-c"]
    rows = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(rows) == 3
