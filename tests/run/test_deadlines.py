"""Every external call has a total deadline (wall-clock, body read included) and a body cap.

Hostile loopback services: one that trickles its reply a byte at a time (in the status line
or in the body), one that sends a body far over the cap. A per-read socket timeout never
fires on a trickle, so before the total deadline a one-question self-ask run stayed alive for
as long as the service kept trickling.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hopscore.run.search import DeadlineExceeded, HttpSearch
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.chain_script import scripted_chains
from tests.run.helpers import MODEL, rows
from tests.run.test_strategies import SEED, meta, plans, sample_gold

HITS = json.dumps({"results": [{"title": "T", "url": "https://x.test/1",
                                "snippet": "the answer is here"}]}).encode()


class HostileService:
    """POST or GET ``/trickle-body``, ``/trickle-head`` (one byte every ``interval`` s) and
    ``/huge`` (a body of ``huge_bytes`` sent as fast as the socket takes it)."""

    def __init__(self, interval: float = 0.25, huge_bytes: int = 200_000_000) -> None:
        self.stop = threading.Event()
        self.requests = 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                service.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                try:
                    if self.path == "/trickle-head":
                        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                b"Content-Length: %d\r\n\r\n" % len(HITS))
                        self._trickle(head + HITS)
                    elif self.path == "/trickle-body":
                        body = HITS + b" " * 10_000
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json"
                                         b"\r\nContent-Length: %d\r\n\r\n" % len(body))
                        self.wfile.flush()
                        self._trickle(body)
                    elif self.path == "/huge":
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                         b"Content-Length: %d\r\n\r\n" % huge_bytes)
                        block = b"z" * 65536
                        for _ in range(huge_bytes // len(block)):
                            if service.stop.is_set():
                                return
                            self.wfile.write(block)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

            def _trickle(self, data: bytes) -> None:
                for index in range(len(data)):
                    if service.stop.wait(interval):
                        return
                    self.wfile.write(data[index:index + 1])
                    self.wfile.flush()

            do_POST = _answer
            do_GET = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> Iterator[HostileService]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    service = HostileService()
    yield service
    service.close()


def timed(call: Any, *args: Any) -> tuple[BaseException | None, float]:
    started = time.monotonic()
    try:
        call(*args)
    except Exception as exc:
        return exc, time.monotonic() - started
    return None, time.monotonic() - started


@pytest.mark.parametrize("path", ["/trickle-head", "/trickle-body"])
def test_a_trickling_search_service_is_cut_at_the_deadline(hostile: HostileService,
                                                           path: str) -> None:
    # a byte every 0.25 s: a 1 s read timeout never fires, the 1.5 s deadline does
    backend = HttpSearch(hostile.url(path), timeout=1.5)
    error, took = timed(backend.search, "q", 1)
    assert isinstance(error, DeadlineExceeded), error
    assert isinstance(error, TimeoutError)  # the agent's tools report it as a timeout
    assert "within its deadline of 1.5 s" in str(error)
    assert 1.4 < took < 6, took


def test_trickling_fetch_services_and_pages_are_cut_at_the_deadline(
        hostile: HostileService) -> None:
    service = HttpSearch(hostile.url("/search"), fetch_url=hostile.url("/trickle-body"),
                         timeout=1.0)
    error, took = timed(service.fetch, "https://a.test")
    assert isinstance(error, DeadlineExceeded) and "fetch service" in str(error)
    assert took < 5, took
    direct = HttpSearch(hostile.url("/search"), direct_fetch=True, allow_private=True,
                        timeout=1.0)
    error, took = timed(direct.fetch, hostile.url("/trickle-head"))
    assert isinstance(error, DeadlineExceeded) and "page http://" in str(error)
    assert took < 5, took


def test_a_huge_body_is_cut_at_the_cap(hostile: HostileService) -> None:
    search = HttpSearch(hostile.url("/huge"), timeout=30, max_bytes=100_000)
    error, took = timed(search.search, "q", 1)
    assert isinstance(error, ValueError)
    assert str(error) == "the service's reply is larger than 100000 bytes"
    assert took < 5, took
    page = HttpSearch(hostile.url("/search"), direct_fetch=True, allow_private=True,
                      timeout=30, max_bytes=100_000)
    started = time.monotonic()
    assert page.fetch(hostile.url("/huge")) == "z" * 100_000
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_a_self_ask_run_against_a_trickling_search_service_ends(tmp_path: Path,
                                                                 hostile: HostileService) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    with FakeOpenAI(body_responder=scripted_chains(plans, meta)) as server:
        result = run_cli(
            "run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model", MODEL,
            "--base-url", server.base_url, "-o", out, "--cache-dir", tmp_path / "cache",
            "--no-progress", "--resamples", "0", "--seed", str(SEED), "--limit", "1",
            "--strategy", "self-ask", "--max-retries", "0", "--search-backend", "http",
            "--search-url", hostile.url("/trickle-body"), "--search-timeout", "1",
            timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 1, result.stderr  # the question failed; a re-run retries it
    [row] = rows(out / "samples.jsonl")
    assert row["error"]["kind"] == "retrieval_error"
    assert "DeadlineExceeded" in row["error"]["message"]
    assert "within its deadline of 1 s" in row["error"]["message"]
    assert took < 60, took  # before: alive for as long as the service trickled (~45 min)


def _complete(base_url: str, timeout: float, lean: bool) -> tuple[Any, float]:
    from hopscore.engine import ChatEngine, ChatRequest, OpenAIBackend, RetryPolicy

    async def go() -> Any:
        backend = OpenAIBackend(base_url, "k")
        if not lean:  # through aiohttp, as an https:// endpoint or one behind a proxy
            backend._lean = None
        engine = ChatEngine(backend, timeout=timeout, retry=RetryPolicy(max_retries=0))
        try:
            return await engine.complete(ChatRequest(
                model="m", messages=[{"role": "user", "content": "q"}]))
        finally:
            await engine.aclose()

    started = time.monotonic()
    result = asyncio.run(go())
    return result, time.monotonic() - started


@pytest.mark.parametrize("lean", [True, False])
def test_a_trickling_model_reply_ends_at_the_request_timeout(lean: bool) -> None:
    # a 300-byte completion at a byte every 0.2 s: a minute, cut at the 1.5 s timeout
    with FakeOpenAI(lambda prompt, attempt: Reply("x", trickle=0.2)) as server:
        result, took = _complete(server.base_url, 1.5, lean)
    assert result.response is None and result.failure.kind == "timeout"
    assert 1.4 < took < 6, took


@pytest.mark.parametrize("lean", [True, False])
def test_a_huge_model_reply_is_refused_at_the_body_cap(lean: bool) -> None:
    from hopscore.engine.http1 import MAX_BODY

    content = "y" * (MAX_BODY + 1000)
    with FakeOpenAI(lambda prompt, attempt: Reply(content)) as server:
        result, took = _complete(server.base_url, 60, lean)
        assert len(server.log) == 1  # not retried: the same request gets the same reply
    assert result.response is None
    assert result.failure.kind == "response_too_large"
    assert f"over {MAX_BODY:,}" in result.failure.message
    assert took < 20, took


def test_the_agents_search_and_fetch_tools_end_at_the_deadline(hostile: HostileService) -> None:
    from hopscore.agent.tools import ToolLimits, Toolset
    from hopscore.sql.sandbox import SqlExecutor

    backend = HttpSearch(hostile.url("/trickle-body"), fetch_url=hostile.url("/trickle-head"),
                         timeout=1.0)
    with SqlExecutor(workers=1) as executor:
        # the tools' own bound (60 s by default) is far off: the call's deadline ends it
        tools = Toolset(db_path=None, knowledge=None, search=backend, executor=executor,
                        limits=ToolLimits(backend_timeout_s=60.0))
        for name, arguments in (("web_search", {"query": "q"}), ("web_fetch", {"url": "u"})):
            started = time.monotonic()
            result = asyncio.run(tools.call(name, arguments))
            assert time.monotonic() - started < 6
            assert result.kind == "timeout" and result.text.endswith("failed: timed out")
