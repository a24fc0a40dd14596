"""The circuit breaker: a run whose endpoint dies pauses its requests instead of failing every
row; the endpoint coming back within --max-outage loses and duplicates nothing, one that does
not ends the run resumable, naming the URL."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hopscore.engine import ChatEngine, ChatRequest, OpenAIBackend, RetryPolicy
from hopscore.engine.outage import TRIP_AFTER, EndpointDown
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply


def answer(prompt: str, attempt: int) -> Reply:
    return Reply(f"Answer: {prompt.split()[-1]}")


def loading_then(seconds: float) -> Callable[[str, int], Reply]:
    """A restarted llama-server: HTTP 503 ("Loading model") for ``seconds``, then answers."""
    ready = time.monotonic() + seconds

    def reply(prompt: str, attempt: int) -> Reply:
        if time.monotonic() < ready:
            return Reply(status=503, body=b'{"error": {"code": 503, "message": "Loading model",'
                         b' "type": "unavailable_error"}}')
        return answer(prompt, attempt)

    return reply


def restart_after(server: FakeOpenAI, replies: int, down_s: float | None,
                  box: list[FakeOpenAI], loading_s: float = 0.0) -> threading.Thread:
    """Stop ``server`` once it has answered ``replies`` requests; start a new one on the same
    port ``down_s`` seconds later (None: never), put in ``box``; it answers 503 for its first
    ``loading_s`` seconds."""
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])

    def go() -> None:
        while len(server.log) < replies:
            time.sleep(0.01)
        server.kill()
        if down_s is None:
            return
        time.sleep(down_s)
        box.append(FakeOpenAI(loading_then(loading_s) if loading_s else answer,
                              latency=server.latency, port=port).start())

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("loading_s", [0.0, 2.5])
def test_an_outage_within_max_outage_costs_no_retry_and_no_row(loading_s: float) -> None:
    # one retry per request: without the breaker every request out when the server died, and
    # every one sent during the 3 s it was down, would fail for good; a server that answers
    # 503 while it loads its model is not back yet (else every waiting request would go out
    # and use its retry on a 503)
    box: list[FakeOpenAI] = []
    server = FakeOpenAI(answer, latency=0.05).start()
    thread = restart_after(server, 20, 3.0, box, loading_s)
    messages: list[str] = []
    engine = ChatEngine(OpenAIBackend(server.base_url, "k"), concurrency=4, timeout=5,
                        retry=RetryPolicy(max_retries=1, base_delay=0.05), max_outage=30,
                        say=messages.append)

    async def go() -> list[bool]:
        try:
            results = await asyncio.gather(*(engine.complete(ChatRequest(
                model="m", messages=[{"role": "user", "content": f"q {i}"}]))
                for i in range(60)))
        finally:
            await engine.aclose()
        return [r.ok for r in results]

    try:
        assert all(asyncio.run(go()))
        thread.join(5)
        answered = [entry.prompt for entry in box[0].log]
        # every request not answered before the outage was answered after it, once (while
        # the server loads, only the probes, one every 2 s, are sent, and answered 503)
        assert len(answered) - len(set(answered)) <= (2 if loading_s else 0)
        assert 40 <= len(answered) <= 60
    finally:
        for other in box:
            other.stop()
    assert engine.breaker.outages == 1 and engine.stats.failures == 0
    assert f"{server.base_url} is not answering" in messages[0]
    assert "answers again" in messages[1]


def test_an_endpoint_that_stays_down_raises_endpoint_down_naming_it() -> None:
    with FakeOpenAI(answer) as server:
        url = server.base_url
    engine = ChatEngine(OpenAIBackend(url, "k"), concurrency=2, timeout=5,
                        retry=RetryPolicy(max_retries=50, base_delay=0.01), max_outage=1.5,
                        say=lambda message: None)

    async def go() -> None:
        try:
            await asyncio.gather(*(engine.complete(ChatRequest(
                model="m", messages=[{"role": "user", "content": f"q {i}"}]))
                for i in range(TRIP_AFTER + 3)))
        finally:
            await engine.aclose()

    started = time.monotonic()
    with pytest.raises(EndpointDown) as caught:
        asyncio.run(go())
    assert url in str(caught.value) and "--max-outage" in str(caught.value)
    assert time.monotonic() - started < 10


def _gold(path: Path, n: int) -> Path:
    path.write_text("Question,Answer,Answer_corrected\n" + "".join(
        f"What is item number {i}?,{i},\n" for i in range(n)), encoding="utf-8")
    return path


def _samples(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_run_whose_server_dies_and_comes_back_loses_and_duplicates_nothing(
        tmp_path: Path) -> None:
    box: list[FakeOpenAI] = []
    server = FakeOpenAI(answer, latency=0.1).start()
    restart_after(server, 12, 4.0, box)
    try:
        result = run_cli("run", "bamboogle", "--gold", _gold(tmp_path / "g.csv", 40),
                         "--model", "openai/m", "--base-url", server.base_url, "-o",
                         tmp_path / "run", "--no-cache", "--no-progress", "--max-retries", "1",
                         "--resamples", "0")
    finally:
        for other in box:
            other.stop()
    assert result.returncode == 0, result.stderr
    assert "is not answering" in result.stderr and "answers again" in result.stderr
    rows = _samples(tmp_path / "run")
    assert sorted(str(r["id"]) for r in rows) == sorted({str(r["id"]) for r in rows})
    assert len(rows) == 40 and not [r for r in rows if r.get("error")]


@pytest.mark.slow
def test_a_run_whose_server_stays_down_ends_resumable_naming_the_url(tmp_path: Path) -> None:
    gold = _gold(tmp_path / "g.csv", 30)
    server = FakeOpenAI(answer, latency=0.1).start()
    port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    restart_after(server, 10, None, [])
    args = ["run", "bamboogle", "--gold", gold, "--model", "openai/m", "--base-url",
            server.base_url, "-o", tmp_path / "run", "--no-cache", "--no-progress",
            "--resamples", "0", "--max-outage", "3"]
    result = run_cli(*args)
    assert result.returncode == 2, result.stderr
    assert f"{server.base_url} has not answered for" in result.stderr
    assert "rerun the same command to resume" in result.stderr
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["status"] == "interrupted"
    kept = [r for r in _samples(tmp_path / "run") if not r.get("error")]
    # some of the 10 replies may be lost with the server (a loaded machine read only 4
    # before it died): what matters is that those kept are not asked again below
    assert 1 <= len(kept) < 30
    with FakeOpenAI(answer, port=port) as again:
        second = run_cli(*args)
        assert second.returncode == 0, second.stderr
        asked = again.prompts()
    rows = _samples(tmp_path / "run")
    assert len(rows) == 30 and not [r for r in rows if r.get("error")]
    assert len(asked) == 30 - len(kept)  # the finished rows were not asked again
