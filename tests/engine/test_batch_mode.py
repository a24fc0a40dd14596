"""The batch API's pieces: reading result lines, cutting batches, the ledger, the prefill."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hopscore.engine import batch_api
from hopscore.engine.batch_api import anthropic_answer, openai_answer
from hopscore.engine.batch_mode import BatchRecords, Prefilled, chunks, custom_id
from hopscore.engine.types import ChatRequest, ChatResponse
from hopscore.errors import HopscoreError
from tests.batch_server import completion, message


def request(text: str, tag: str = "") -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": text}], cache_tag=tag)


def test_openai_lines() -> None:
    good = openai_answer({"custom_id": "a", "error": None, "response": {
        "status_code": 200, "body": completion("yes", "m")}})
    assert good.response is not None and good.response.content == "yes"
    assert good.response.usage.prompt_tokens == 10
    failed = openai_answer({"custom_id": "a", "error": None, "response": {
        "status_code": 429, "body": {"error": {"message": "slow down"}}}})
    assert failed.response is None and failed.error.startswith("HTTP 429")
    assert "slow down" in failed.error
    expired = openai_answer({"custom_id": "a", "response": None, "error": {
        "code": "batch_expired", "message": "not run"}})
    assert expired.error == "batch_expired: not run"
    empty = openai_answer({"custom_id": "a", "error": None, "response": {
        "status_code": 200, "body": {"choices": []}}})
    assert empty.response is None and "empty 'choices'" in empty.error


def test_anthropic_lines() -> None:
    good = anthropic_answer({"custom_id": "a", "result": {"type": "succeeded",
                                                          "message": message("no", "c")}})
    assert good.response is not None and good.response.content == "no"
    errored = anthropic_answer({"custom_id": "a", "result": {"type": "errored", "error": {
        "type": "error", "error": {"type": "api_error", "message": "boom"}}}})
    assert errored.error == "errored: boom"
    assert anthropic_answer({"custom_id": "a", "result": {"type": "expired"}}).error == "expired"
    assert anthropic_answer({"custom_id": "a"}).response is None


def test_chunks_keep_within_the_providers_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = [(str(i), request("x" * 100)) for i in range(10)]
    monkeypatch.setitem(batch_api.MAX_REQUESTS, "openai", 4)
    assert [len(c) for c in chunks(pairs, "openai")] == [4, 4, 2]
    monkeypatch.setitem(batch_api.MAX_BYTES, "openai", 2000)
    cut = chunks(pairs, "openai")
    assert sum(len(c) for c in cut) == 10 and all(len(c) <= 3 for c in cut)
    assert [cid for c in cut for cid, _ in c] == [str(i) for i in range(10)]


def test_the_custom_id_is_the_cache_key_and_fits_both_providers() -> None:
    a, b = request("q"), request("q", tag="retry=1")
    assert custom_id(a, "http://e/v1") == a.cache_key("http://e/v1")
    assert custom_id(a, "http://e/v1") != custom_id(b, "http://e/v1")
    assert custom_id(a, "http://e/v1") != custom_id(a, "http://f/v1")
    assert len(custom_id(a, "e")) == 64


def test_the_records_round_trip_and_a_broken_one_is_named(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.batches.json"
    ledger = BatchRecords.load(path)
    ledger.record("b1", "openai", "http://e/v1", ["x", "y"])
    ledger.record("b2", "anthropic", "http://e/v1", ["y"])
    again = BatchRecords.load(path)
    assert again.holding("openai", "http://e/v1") == {"x": "b1", "y": "b1"}
    assert again.holding("anthropic", "http://e/v1") == {"y": "b2"}
    assert again.holding("openai", "http://other/v1") == {}
    path.write_text("{not json")
    with pytest.raises(HopscoreError, match="cannot read the batch records"):
        BatchRecords.load(path)
    path.write_text(json.dumps({"batches": 3}))
    with pytest.raises(HopscoreError, match="not a batch record file"):
        BatchRecords.load(path)


class Live:
    endpoint = "http://e/v1"

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        self.sent.append(request.messages[0]["content"])
        return ChatResponse.from_body(completion("live", "m"))

    async def aclose(self) -> None:
        pass


def test_prefilled_answers_each_row_once_then_sends_the_rest_live() -> None:
    live = Live()
    a, b = request("a"), request("b")
    answers = {custom_id(a, live.endpoint): ChatResponse.from_body(completion("batched", "m"))}
    backend = Prefilled(live, answers, [a, a, b])  # two rows ask the same question

    async def go() -> list[str | None]:
        replies = [await backend.send(r, 1.0) for r in (a, a, a, b)]
        return [r.content for r in replies]

    assert asyncio.run(go()) == ["batched", "batched", "live", "live"]
    assert live.sent == ["a", "b"] and backend.from_batch == 2
