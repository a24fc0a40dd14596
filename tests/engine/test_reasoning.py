"""Reasoning settings mapped to each provider's parameter, and reasoning replies split into
their thinking and their answer (:mod:`hopscore.engine.reasoning`)."""

from __future__ import annotations

import pytest

from hopscore.engine import ChatRequest
from hopscore.engine.anthropic import completion_of, request_body
from hopscore.engine.reasoning import (
    CLOSED,
    UNCLOSED,
    ReasoningSettings,
    check,
    reasoning_of,
    reasoning_settings,
    request_params,
    room_for_thinking,
    split_reply,
    with_reasoning,
)
from hopscore.errors import HopscoreError


def request(**kwargs: object) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": "q"}],
                       temperature=0.0, max_tokens=4096, **kwargs)  # type: ignore[arg-type]


def test_each_style_sends_its_own_parameter() -> None:
    high = ReasoningSettings(effort="high")
    assert request_params(high, "openai") == {"reasoning_effort": "high"}
    assert request_params(high, "anthropic") == {
        "thinking": {"type": "enabled", "budget_tokens": 16384}}
    assert request_params(ReasoningSettings(budget=2048), "anthropic") == {
        "thinking": {"type": "enabled", "budget_tokens": 2048}}
    assert request_params(ReasoningSettings(effort="none"), "anthropic") == {
        "thinking": {"type": "disabled"}}
    template = ReasoningSettings(effort="none", style="chat-template")
    assert request_params(template, "openai") == {
        "chat_template_kwargs": {"enable_thinking": False}}
    budget = ReasoningSettings(budget=512, style="chat-template")
    assert request_params(budget, "openai") == {
        "chat_template_kwargs": {"enable_thinking": True, "thinking_budget": 512}}
    assert request_params(ReasoningSettings(effort="low", style="chat-template"), "openai") == {
        "chat_template_kwargs": {"enable_thinking": True, "reasoning_effort": "low"}}


def test_settings_change_the_body_and_the_cache_key_and_apply_once() -> None:
    plain = request()
    assert with_reasoning(plain, None, "openai") is plain
    low = with_reasoning(plain, ReasoningSettings(effort="low"), "openai")
    high = with_reasoning(plain, ReasoningSettings(effort="high"), "openai")
    assert low.body()["reasoning_effort"] == "low" and low.temperature == 0.0
    assert len({plain.cache_key("e"), low.cache_key("e"), high.cache_key("e")}) == 3
    assert with_reasoning(low, ReasoningSettings(effort="low"), "openai") == low
    # Anthropic: thinking in the Messages body, and no temperature with it
    claude = with_reasoning(plain, ReasoningSettings(budget=2048), "anthropic")
    body = request_body(claude)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "temperature" not in body and body["max_tokens"] == 4096
    assert with_reasoning(claude, ReasoningSettings(budget=2048), "anthropic") == claude


@pytest.mark.parametrize(("settings", "provider", "max_tokens", "words"), [
    (ReasoningSettings(budget=1000), "openai", 1024, "OpenAI's API takes no thinking budget"),
    (ReasoningSettings(budget=4096), "anthropic", 1024, "--max-tokens 1024 must exceed"),
    (ReasoningSettings(effort="high"), "anthropic", None, "--max-tokens 4096 must exceed"),
    (ReasoningSettings(budget=100), "anthropic", 8192, "at least 1024 tokens"),
    (ReasoningSettings(effort="low"), "local", 128, "the local model"),
])
def test_settings_a_provider_cannot_take_are_refused(
        settings: ReasoningSettings, provider: str, max_tokens: int | None, words: str) -> None:
    with pytest.raises(HopscoreError, match=words):
        check(settings, provider, max_tokens)


def test_max_tokens_raised_past_an_anthropic_budget_only() -> None:
    assert room_for_thinking(ReasoningSettings(effort="medium"), "anthropic", 2048) == 6144
    assert room_for_thinking(ReasoningSettings(budget=1024), "anthropic", 2048) == 2048
    assert room_for_thinking(ReasoningSettings(effort="high"), "openai", 2048) == 2048
    assert room_for_thinking(None, "anthropic", 2048) == 2048


def test_option_values_are_checked() -> None:
    assert reasoning_settings(None, None, None) is None
    assert reasoning_settings("minimal", None, None) == ReasoningSettings(effort="minimal")
    for effort, budget, style, words in [("max", None, None, "--reasoning-effort 'max'"),
                                         (None, None, "openai", "needs --reasoning-effort"),
                                         ("low", None, "vllm", "--reasoning-style 'vllm'")]:
        with pytest.raises(HopscoreError, match=words):
            reasoning_settings(effort, budget, style)


def test_replies_split_into_thinking_and_answer() -> None:
    closed = split_reply("<think>Answer: Rome?</think>\nAnswer: Paris")
    assert (closed.answer, closed.thinking, closed.state) == ("Answer: Paris", "Answer: Rome?",
                                                              CLOSED)
    orphan = split_reply("thinking with no opener</think>Answer: Paris")
    assert (orphan.answer, orphan.state) == ("Answer: Paris", CLOSED)
    cut = split_reply("<think>Paris, maybe; Answer: Paris", None)
    assert (cut.answer, cut.state) == ("", UNCLOSED) and "Paris" in (cut.thinking or "")
    only = split_reply("", "I was still thinking")
    assert (only.answer, only.thinking, only.state) == ("", "I was still thinking", UNCLOSED)
    both = split_reply("Answer: Paris", "It is the capital")
    assert (both.answer, both.state) == ("Answer: Paris", CLOSED)
    plain = split_reply("Answer: Paris")
    assert (plain.answer, plain.thinking, plain.state) == ("Answer: Paris", None, None)


def test_reasoning_fields_and_anthropic_thinking_blocks_are_read() -> None:
    body = {"choices": [{"message": {"content": "x", "reasoning_content": "because"}}]}
    assert reasoning_of(body) == "because"
    assert reasoning_of({"choices": [{"message": {"content": "x", "reasoning": "r"}}]}) == "r"
    assert reasoning_of({"choices": [{"message": {"content": "x"}}]}) is None
    message = {"content": [{"type": "thinking", "thinking": "hmm", "signature": "s"},
                           {"type": "text", "text": "Answer: Paris"}],
               "stop_reason": "end_turn", "usage": {}}
    completion = completion_of(message)
    assert completion["choices"][0]["message"]["content"] == "Answer: Paris"
    assert reasoning_of(completion) == "hmm"
