"""The request engine against a real HTTP server on 127.0.0.1 with injected faults."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine import (
    CallError,
    CallResult,
    ChatEngine,
    ChatRequest,
    ChatResponse,
    OpenAIBackend,
    ResponseCache,
    RetryPolicy,
    parse_body,
    status_error,
)
from tests.openai_server import FakeOpenAI, Reply


def scripted(prompt: str, attempt: int) -> Reply:
    """Faults by prompt name; each recovers on the attempt after its last fault."""
    faults: dict[str, list[Reply]] = {
        "r429": [Reply(status=429, headers={"Retry-After": "2"})],
        "r429date": [Reply(status=429, headers={
            "Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)})],
        "r500": [Reply(status=500), Reply(status=503)],
        "stall": [Reply(stall=True)],
        "malformed": [Reply(body=b'{"choices": [{"message": ')],
        "html": [Reply(body=b"<html>bad gateway</html>", headers={"Content-Type": "text/html"})],
        "error200": [Reply(json_body={"error": {"message": "upstream down"}})],
        "nochoices": [Reply(json_body={"choices": []})],
        "nullcontent": [Reply(content=None)],
        "blank": [Reply(content="  \n")],
    }
    if prompt.startswith("always500"):
        return Reply(status=500)
    if prompt.startswith("r401"):
        return Reply(status=401)
    if prompt.startswith("r400"):
        return Reply(status=400)
    if prompt.startswith("tool"):
        return Reply(content=None, tool_calls=[{"id": "1", "type": "function",
                                                "function": {"name": "f", "arguments": "{}"}}])
    script = faults.get(prompt.split()[0], [])
    return script[attempt] if attempt < len(script) else Reply(f"answer to {prompt}")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(scripted) as fake:
        yield fake


class Sleeps:
    """Records the back-off waits instead of sleeping them (keeps the tests fast)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def make_engine(server: FakeOpenAI, sleeps: Sleeps, **kwargs: Any) -> ChatEngine:
    return ChatEngine(
        OpenAIBackend(server.base_url, "test-key"),
        concurrency=kwargs.pop("concurrency", 4),
        timeout=kwargs.pop("timeout", 1.0),
        retry=kwargs.pop("retry", RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05,
                                             deadline=60.0)),
        sleep=sleeps,
        **kwargs,
    )


def request(prompt: str, **kwargs: Any) -> ChatRequest:
    return ChatRequest(model="judge-m", messages=[{"role": "user", "content": prompt}], **kwargs)


def complete_all(engine: ChatEngine, requests: list[ChatRequest]) -> list[CallResult]:
    async def go() -> list[CallResult]:
        try:
            return list(await asyncio.gather(*(engine.complete(r) for r in requests)))
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize(
    ("name", "attempts"),
    [("ok", 1), ("r429", 2), ("r500", 3), ("stall", 2), ("malformed", 2), ("html", 2),
     ("error200", 2), ("nochoices", 2), ("nullcontent", 2), ("blank", 2)],
)
def test_each_transient_fault_is_retried_until_it_succeeds(
    server: FakeOpenAI, name: str, attempts: int
) -> None:
    sleeps = Sleeps()
    [result] = complete_all(make_engine(server, sleeps, timeout=0.5), [request(f"{name} q")])
    assert result.ok and result.failure is None
    assert result.response is not None and result.response.content == f"answer to {name} q"
    assert result.attempts == attempts == server.count(f"{name} q")
    assert len(sleeps.waits) == attempts - 1
    assert result.response.usage.prompt_tokens == 2


def test_retry_after_seconds_and_http_date_are_honoured(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    complete_all(make_engine(server, sleeps), [request("r429 a")])
    assert sleeps.waits == [2.0]
    sleeps = Sleeps()
    complete_all(make_engine(server, sleeps), [request("r429date b")])
    assert len(sleeps.waits) == 1 and 25.0 < sleeps.waits[0] <= 30.0


def test_exhausted_retries_give_a_typed_failure_never_a_response(server: FakeOpenAI) -> None:
    sleeps = Sleeps()
    engine = make_engine(server, sleeps)
    [result] = complete_all(engine, [request("always500")])
    assert not result.ok and result.response is None
    assert result.failure is not None and result.failure.kind == "server_error"
    assert result.failure.status == 500
    assert result.attempts == 4 == server.count("always500")
    assert engine.stats.failures_by_kind == {"server_error": 1}
    assert result.to_json()["error"]["kind"] == "server_error"


def test_timeout_after_last_retry(server: FakeOpenAI) -> None:
    engine = make_engine(server, Sleeps(), timeout=0.2, retry=RetryPolicy(max_retries=0))
    [result] = complete_all(engine, [request("stall x")])
    assert result.failure is not None and result.failure.kind == "timeout"


def test_client_and_fatal_errors_are_not_retried(server: FakeOpenAI) -> None:
    results = complete_all(make_engine(server, Sleeps()), [request("r400"), request("r401")])
    assert [r.failure.kind for r in results if r.failure] == ["client_error", "fatal"]
    assert server.count("r401") == 1 and server.count("r400") == 1


def test_nothing_is_sent_after_a_fatal_error(server: FakeOpenAI) -> None:
    # a wrong key or model fails every request the same way: the ones still waiting for a
    # slot fail with it unsent (their rows say why), and the next run sends them again
    engine = make_engine(server, Sleeps(), concurrency=2, adaptive=False)
    results = complete_all(engine, [request("r401"), request("r401 b"), request("fine"),
                                    request("fine too")])
    assert [r.failure.kind if r.failure else None for r in results] == ["fatal"] * 4
    assert len(server.log) == 2  # the two in flight at once
    assert [r.attempts for r in results] == [1, 1, 0, 0]
    assert "HTTP 401" in str(results[3].failure)


def test_connection_refused_is_a_connection_failure() -> None:
    engine = ChatEngine(OpenAIBackend("http://127.0.0.1:9/v1", "k"), concurrency=1, timeout=2,
                        retry=RetryPolicy(max_retries=1, base_delay=0), sleep=Sleeps())
    [result] = complete_all(engine, [request("x")])
    assert result.failure is not None and result.failure.kind == "connection"
    assert result.attempts == 2


def test_tool_calls_with_null_content_are_a_valid_reply(server: FakeOpenAI) -> None:
    [result] = complete_all(make_engine(server, Sleeps()), [request("tool call")])
    assert result.ok and result.response is not None and result.response.tool_calls
    assert server.count("tool call") == 1


def test_null_content_may_be_allowed(server: FakeOpenAI) -> None:
    [result] = complete_all(make_engine(server, Sleeps()),
                            [request("nullcontent z", require_content=False)])
    assert result.ok and result.response is not None and result.response.content is None


def test_parameters_are_sent_and_none_ones_are_not(server: FakeOpenAI) -> None:
    complete_all(make_engine(server, Sleeps()), [
        request("p1", temperature=0.0, max_tokens=7, seed=3, stop=["\n\n"],
                tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
                extra={"top_p": 0.5}),
        request("p2"),
    ])
    bodies = {entry.prompt: entry.body for entry in server.log}
    assert bodies["p1"]["temperature"] == 0.0 and bodies["p1"]["max_tokens"] == 7
    assert bodies["p1"]["seed"] == 3 and bodies["p1"]["stop"] == ["\n\n"]
    assert bodies["p1"]["top_p"] == 0.5 and bodies["p1"]["tools"][0]["type"] == "function"
    assert set(bodies["p2"]) == {"model", "messages"}


def test_concurrency_is_bounded() -> None:
    with FakeOpenAI(lambda p, a: Reply("x"), latency=0.05) as fake:
        engine = ChatEngine(OpenAIBackend(fake.base_url, "k"), concurrency=3, timeout=5)
        complete_all(engine, [request(f"q{i}") for i in range(24)])
        assert fake.max_in_flight <= 3
        assert len(fake.log) == 24


def test_cache_makes_identical_requests_free_and_keys_on_parameters(
    server: FakeOpenAI, tmp_path: Path
) -> None:
    def engine() -> ChatEngine:
        return make_engine(server, Sleeps(), cache=ResponseCache.in_dir(tmp_path))

    first = complete_all(engine(), [request("c1", temperature=0.0), request("always500")])
    sent = len(server.log)
    again = complete_all(engine(), [request("c1", temperature=0.0)])
    assert len(server.log) == sent  # no request
    assert again[0].cached and again[0].attempts == 0
    assert again[0].response is not None and first[0].response is not None
    assert again[0].response.content == first[0].response.content
    assert again[0].key == first[0].key
    # another temperature, tag or model is another entry; failures were never cached
    complete_all(engine(), [request("c1", temperature=0.5), request("c1", temperature=0.0,
                                                                   cache_tag="sample-2"),
                            request("always500")])
    assert server.count("c1") == 3
    assert server.count("always500") == 8


def test_cache_key_depends_on_every_sent_field() -> None:
    base = request("q", temperature=0.0)
    keys = {
        base.cache_key("e"),
        base.cache_key("other-endpoint"),
        request("q", temperature=0.0, max_tokens=5).cache_key("e"),
        request("q2", temperature=0.0).cache_key("e"),
        ChatRequest(model="m2", messages=base.messages, temperature=0.0).cache_key("e"),
        request("q", temperature=0.0, stop=["x"]).cache_key("e"),
    }
    assert len(keys) == 6
    assert request("q", temperature=0.0).cache_key("e") == base.cache_key("e")


def test_parse_body_and_status_classification() -> None:
    good = parse_body('{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],'
                      ' "usage": {"prompt_tokens": 3, "completion_tokens": 1}, "model": "m"}')
    assert good.content == "hi" and good.usage.total_tokens == 4 and good.model == "m"
    for text, kind in [("[]", "malformed_body"), ('{"choices": {}}', "malformed_body"),
                       ('{"choices": []}', "empty_choices"),
                       ('{"choices": [{"message": {"content": 5}}]}', "malformed_body"),
                       ('{"choices": [{}]}', "malformed_body"), ("", "malformed_body")]:
        with pytest.raises(CallError) as caught:
            parse_body(text)
        assert caught.value.kind == kind, text
    assert status_error(429, "m", {"retry-after": "4"}).retry_after == 4.0
    assert status_error(503, "m", {}).retryable
    assert status_error(408, "m", {}).retryable
    assert not status_error(422, "m", {}).retryable
    assert status_error(404, "m", {}).kind == "fatal"
    assert ChatResponse.from_body({"choices": [{"message": {"content": None}}]}).content is None
