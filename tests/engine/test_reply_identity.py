"""The response cache follows what the server says of itself in its replies (issue 22): a fresh
reply whose ``system_fingerprint`` or ``model`` differs from what the cached replies were made
with is warned of once, naming the URL and both, and the replies cached under the old one are
not reused from then on, in the same run and later ones.

Against the stand-in server (tests/openai_server.py) and a real cache file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from hopscore.engine import CallResult, ChatEngine, ResponseCache
from tests.engine.test_engine import Sleeps, make_engine, request
from tests.openai_server import FakeOpenAI, Reply


def answers(server: FakeOpenAI, engine: ChatEngine, prompts: list[str]) -> list[CallResult]:
    """``prompts`` asked one after the other (each waits for the one before)."""
    async def go() -> list[CallResult]:
        try:
            return [await engine.complete(request(prompt)) for prompt in prompts]
        finally:
            await engine.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("field", ["system_fingerprint", "reply_model"])
def test_a_reply_made_otherwise_stops_the_reuse_of_older_replies(tmp_path: Path,
                                                                  field: str) -> None:
    warnings: list[str] = []
    old, new = ("fp_a1", "fp_b2") if field == "system_fingerprint" else ("m-v1", "m-v2")
    with FakeOpenAI(lambda prompt, attempt: Reply(f"{prompt} {attempt}")) as server:
        setattr(server, field, old)

        def engine() -> ChatEngine:
            cache = ResponseCache.in_dir(tmp_path, warn=warnings.append)
            return make_engine(server, Sleeps(), cache=cache, concurrency=1)

        answers(server, engine(), ["q1", "q2", "q3"])
        again = answers(server, engine(), ["q1", "q2", "q3"])
        assert [r.cached for r in again] == [True, True, True] and len(server.log) == 3
        setattr(server, field, new)  # another build or model behind the same URL and name
        changed = answers(server, engine(), ["q1", "q4", "q2"])
        # q1: nothing said otherwise yet; q4's fresh reply says the new thing; then q2, cached
        # under the old one, is asked again
        assert [r.cached for r in changed] == [True, False, False]
        assert len(warnings) == 1, warnings
        assert server.base_url in warnings[0] and old in warnings[0] and new in warnings[0]
        assert "not reused" in warnings[0]
        later = answers(server, engine(), ["q3", "q2", "q4", "q1", "q5"])
        # q3 and q1 were cached under the old one: asked again; q2 and q4 under the new one
        assert [r.cached for r in later] == [False, True, True, False, False]
        assert len(warnings) == 1  # said once, where the change was seen
        settled = answers(server, engine(), ["q1", "q2", "q3", "q4", "q5"])
    assert all(r.cached for r in settled)
    assert server.count("q1") == 2 and server.count("q2") == 2 and server.count("q3") == 2
    assert len(warnings) == 1


def test_replies_are_reused_while_they_say_the_same(tmp_path: Path) -> None:
    """The first fresh reply of a cache that recorded nothing, and replies that never change,
    warn of nothing and keep every cached reply."""
    warnings: list[str] = []
    with FakeOpenAI(lambda prompt, attempt: Reply("x")) as server:
        server.system_fingerprint = "b4567-abc"

        def engine() -> ChatEngine:
            cache = ResponseCache.in_dir(tmp_path, warn=warnings.append)
            return make_engine(server, Sleeps(), cache=cache, concurrency=1)

        answers(server, engine(), ["q1"])
        mixed = answers(server, engine(), ["q1", "q2", "q1"])
    assert [r.cached for r in mixed] == [True, False, True]
    assert warnings == [] and len(server.log) == 2
