"""Endpoint edge cases a real server produces, against the loopback server: Retry-After beyond
reason, a deadline per request, 200s that are API errors, empty error bodies, closed ports."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine import (
    CallResult,
    ChatEngine,
    ChatRequest,
    OpenAIBackend,
    RetryPolicy,
    error_message,
    error_reply,
)
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply


class Sleeps:
    """Records the back-off waits and sleeps a tiny fraction of each (keeps tests fast)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def request(prompt: str) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": prompt}])


def complete(server: FakeOpenAI, prompt: str, **engine: Any) -> tuple[CallResult, ChatEngine]:
    async def go() -> tuple[CallResult, ChatEngine]:
        eng = ChatEngine(OpenAIBackend(server.base_url, "k"), **engine)
        try:
            return await eng.complete(request(prompt)), eng
        finally:
            await eng.aclose()

    return asyncio.run(go())


def test_a_huge_retry_after_is_capped_by_max_retry_wait() -> None:
    replies = [Reply(status=429, headers={"Retry-After": "100000"})]
    with FakeOpenAI(lambda p, a: replies[a] if a < len(replies) else Reply("fine")) as server:
        sleeps = Sleeps()
        result, _ = complete(server, "q", timeout=5,
                             retry=RetryPolicy(max_retry_wait=60, deadline=1000), sleep=sleeps)
    assert result.ok and sleeps.waits == [60.0]
    assert [a.status for a in result.attempt_log] == [429, 200]


def test_a_retry_after_past_the_deadline_fails_the_request_at_once() -> None:
    with FakeOpenAI(lambda p, a: Reply(status=429, headers={"Retry-After": "100000"})) as server:
        sleeps = Sleeps()
        started = time.monotonic()
        # default deadline: timeout x (retries + 1) = 30 s, less than the capped 60 s wait
        result, _ = complete(server, "q", timeout=5, retry=RetryPolicy(), sleep=sleeps)
    assert time.monotonic() - started < 5
    assert not result.ok and sleeps.waits == [] and len(server.log) == 1
    assert result.failure is not None and result.failure.kind == "rate_limit"
    assert "100000 s" in result.failure.message and "30 s deadline" in result.failure.message


def test_the_deadline_bounds_all_attempts_of_a_stalling_server() -> None:
    with FakeOpenAI(lambda p, a: Reply(stall=True)) as server:
        started = time.monotonic()
        result, _ = complete(server, "q", timeout=1.0,
                             retry=RetryPolicy(max_retries=10, base_delay=0.1, max_delay=0.2,
                                               deadline=2.5))
        took = time.monotonic() - started
    assert 2.0 <= took < 3.3, took
    assert result.failure is not None and result.failure.kind == "timeout"
    assert "deadline" in result.failure.message
    assert 2 <= len(result.attempt_log) <= 3 and sum(
        a.elapsed_s for a in result.attempt_log) <= 2.6


@pytest.mark.parametrize("body", [
    {"choices": [{"message": {"role": "assistant", "content": "Paris"}}],
     "error": {"message": "upstream provider failed"}},
    {"error": {"message": "upstream down", "code": 502}},
    {"error": "overloaded"},
])
def test_a_200_carrying_an_error_object_is_retried_never_an_answer(body: dict[str, Any]) -> None:
    def reply(prompt: str, attempt: int) -> Reply:
        return Reply(json_body=body) if attempt == 0 else Reply("the real answer")

    with FakeOpenAI(reply) as server:
        result, _ = complete(server, "q", timeout=5, retry=RetryPolicy(base_delay=0),
                             sleep=Sleeps())
    assert result.response is not None and result.response.content == "the real answer"
    first = result.attempt_log[0]
    assert first.status == 200 and first.error is not None and first.error.startswith(
        ("api_error:", "server_error:"))


def test_a_200_with_an_error_object_that_persists_is_a_failure() -> None:
    body = {"choices": [{"message": {"content": "yes"}}], "error": {"message": "quota"}}
    with FakeOpenAI(lambda p, a: Reply(json_body=body)) as server:
        result, _ = complete(server, "q", timeout=5,
                             retry=RetryPolicy(max_retries=2, base_delay=0), sleep=Sleeps())
    assert result.response is None and result.failure is not None
    assert result.failure.kind == "api_error" and "quota" in result.failure.message
    assert len(server.log) == 3


@pytest.mark.parametrize("content", [
    "Error code: 429 - {'error': {'message': 'Rate limit reached for gpt-4o'}}",
    '{"error": {"message": "The server had an error", "type": "server_error"}}',
    "Error: 503 Service Unavailable",
    "upstream error: 502",
    "502 Bad Gateway",
    "Rate limit exceeded. Please try again later.",
    "<html><head><title>504 Gateway Time-out</title></head></html>",
])
def test_a_reply_that_is_an_api_error_message_is_retried_and_never_cached(
    content: str, tmp_path: Path
) -> None:
    from hopscore.engine import ResponseCache

    def reply(prompt: str, attempt: int) -> Reply:
        return Reply(content) if attempt == 0 else Reply("Answer: Paris")

    assert error_reply(content) is not None
    with FakeOpenAI(reply) as server:
        result, _ = complete(server, "q", timeout=5, retry=RetryPolicy(base_delay=0),
                             sleep=Sleeps(), cache=ResponseCache.in_dir(tmp_path))
        assert result.response is not None and result.response.content == "Answer: Paris"
        assert result.attempt_log[0].error is not None
        assert result.attempt_log[0].error.startswith("api_error:")
    cache = ResponseCache.in_dir(tmp_path)
    hit = cache.get(result.key)
    cache.close()
    assert hit is not None and hit[0].content == "Answer: Paris"


@pytest.mark.parametrize("answer", [
    "Answer: Error", "The error code 404 means not found.\nAnswer: not found",
    "extracted_final_answer: 500\nreasoning: fine\ncorrect: yes\nconfidence: 90%",
    "Internal server error is what the question's log shows, so the answer is yes. " * 20,
    "Answer: the rate limit of the river",
])
def test_answers_that_mention_errors_are_answers(answer: str) -> None:
    assert error_reply(answer) is None


def test_empty_error_bodies_say_so_with_the_status() -> None:
    assert error_message(500, "") == "HTTP 500 with an empty body"
    assert error_message(500, '{"error": {"code": 500, "message": "", "type": "server_error"}}') \
        .startswith("HTTP 500: the error body has an empty message")
    assert error_message(400, '{"error": "bad tool_choice"}') == "bad tool_choice"

    with FakeOpenAI(lambda p, a: Reply(status=500, body=b"")) as server:
        result, _ = complete(server, "q", timeout=5, retry=RetryPolicy(max_retries=0))
    assert result.failure is not None and result.failure.message == "HTTP 500 with an empty body"
    assert str(result.failure) == "server_error (HTTP 500): HTTP 500 with an empty body"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_connection_error_names_the_url() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"

    async def go() -> CallResult:
        engine = ChatEngine(OpenAIBackend(url, "k"), timeout=2,
                            retry=RetryPolicy(max_retries=1, base_delay=0), sleep=Sleeps())
        try:
            return await engine.complete(request("q"))
        finally:
            await engine.aclose()

    result = asyncio.run(go())
    assert result.failure is not None and result.failure.kind == "connection"
    assert f"{url}/chat/completions" in result.failure.message
    assert "refused" in result.failure.message.lower()


# -- the same promises through the CLI --------------------------------------------------------

def _rows(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": f"Q{i:03d}?",
                                        "response": "x", "correct_answer": "x"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def test_judge_a_retry_after_of_a_day_holds_no_row_past_its_deadline(tmp_path: Path) -> None:
    def reply(prompt: str, attempt: int) -> Reply:
        if "Q001" in prompt:
            return Reply(status=429, headers={"Retry-After": "100000"})
        return judge_reply(True)

    with FakeOpenAI(reply) as server:
        started = time.monotonic()
        result = run_cli("judge", "-i", _rows(tmp_path / "in.jsonl", 4), "-o",
                         tmp_path / "out.jsonl", "--model", "m", "--base-url", server.base_url,
                         "--timeout", "5", "--no-progress",
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
        took = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert took < 20, took
    rows = {r["id"]: r for r in map(json.loads, (tmp_path / "out.jsonl").read_text().splitlines())}
    error = rows["r1"]["judge"]["error"]
    assert error["kind"] == "rate_limit" and "100000" in error["message"]
    assert [a["status"] for a in rows["r1"]["judge"]["attempts"]] == [429]
    assert all(rows[f"r{i}"]["correct"] is True for i in (0, 2, 3))


def test_judge_honours_retry_after_up_to_max_retry_wait(tmp_path: Path) -> None:
    def reply(prompt: str, attempt: int) -> Reply:
        if attempt == 0:
            return Reply(status=429, headers={"Retry-After": "100000"})
        return judge_reply(True)

    with FakeOpenAI(reply) as server:
        started = time.monotonic()
        result = run_cli("judge", "-i", _rows(tmp_path / "in.jsonl", 2), "-o",
                         tmp_path / "out.jsonl", "--model", "m", "--base-url", server.base_url,
                         "--max-retry-wait", "0.5", "--no-progress",
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
        took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert took < 20
    for line in (tmp_path / "out.jsonl").read_text().splitlines():
        attempts = json.loads(line)["judge"]["attempts"]
        assert [a["status"] for a in attempts] == [429, 200]


def test_judge_a_reply_that_is_an_error_message_is_an_error_row_asked_again(
    tmp_path: Path
) -> None:
    broken = {"on": True}

    def reply(prompt: str, attempt: int) -> Reply:
        if broken["on"] and "Q000" in prompt:
            return Reply("Error code: 503 - {'error': {'message': 'overloaded'}}")
        return judge_reply(True)

    inp, out = _rows(tmp_path / "in.jsonl", 2), tmp_path / "out.jsonl"
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    with FakeOpenAI(reply) as server:
        args = ["judge", "-i", inp, "-o", out, "--model", "m", "--base-url", server.base_url,
                "--max-retries", "1", "--backoff", "0", "--no-progress"]
        first = run_cli(*args, env=env)
        assert first.returncode == 1, first.stderr
        row = json.loads(out.read_text().splitlines()[0])
        assert row["judge"]["status"] == "error" and row["correct"] is None
        assert row["judge"]["error"]["kind"] == "api_error"
        broken["on"] = False
        second = run_cli(*args, env=env)  # not cached, not finished: asked again
        assert second.returncode == 0, second.stderr
    row = json.loads(out.read_text().splitlines()[0])
    assert row["judge"]["status"] == "judged" and row["correct"] is True


def test_the_proxy_from_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAI(lambda p, a: Reply("through the proxy")) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.base_url.rsplit("/v1", 1)[0])
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)

        async def go() -> CallResult:
            engine = ChatEngine(OpenAIBackend("http://model.invalid/v1", "k"), timeout=5)
            try:
                return await engine.complete(request("q"))
            finally:
                await engine.aclose()

        result = asyncio.run(go())
    assert result.response is not None and result.response.content == "through the proxy"
    assert proxy.log[0].headers["host"] == "model.invalid"
