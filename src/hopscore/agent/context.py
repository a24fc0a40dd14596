"""Keeping an attempt's conversation inside the model's context (``--max-context-tokens``).

Before each request the agent estimates the prompt's tokens: the characters of the messages
and tool schemas as sent, divided by a characters-per-token ratio measured on this attempt's
previous request (the ``prompt_tokens`` the endpoint reported for a known number of characters;
3.0 before the first reply, which overestimates English prose and SQL alike). When the estimate
plus the completion budget (``--max-tokens``, 512 when unset) exceeds the limit, the oldest tool
results are replaced, one by one, by a one-line stub naming what was dropped; the results of
the latest turn are never dropped. A dropped result stays dropped (later requests repeat the
same prefix, which keeps server prompt caches useful). The trajectory keeps every result in
full; the sample row lists the dropped call ids (``context_dropped``).

Endpoints that truncate silently instead of refusing (Ollama cuts the prompt to ``num_ctx``)
show up as ``prompt_tokens`` falling while the conversation only grew: :class:`ContextWatch`
notes that once per run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DEFAULT_RATIO = 3.0
DEFAULT_RESERVE = 512
#: a prompt this much smaller than an earlier one of the same attempt counts as truncated
SHRINK = 0.9


def dropped_stub(chars: int) -> str:
    return (f"[tool result dropped to keep the conversation within the model's context: "
            f"{chars} characters]")


def wire_chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    text = json.dumps(messages, ensure_ascii=False)
    if tools:
        text += json.dumps(tools, ensure_ascii=False)
    return len(text)


@dataclass(slots=True)
class ContextBudget:
    """One attempt's view of the context: the limit, the measured ratio, what was dropped."""

    max_tokens: int | None
    reserve: int = DEFAULT_RESERVE
    ratio: float = DEFAULT_RATIO
    dropped: dict[str, int] = field(default_factory=dict)
    #: characters of the last request sent, to calibrate the ratio from its usage
    last_chars: int = 0

    def estimate(self, chars: int) -> int:
        return int(chars / self.ratio) + 1

    def observe(self, prompt_tokens: int) -> None:
        if prompt_tokens > 0 and self.last_chars > 0:
            self.ratio = max(1.0, self.last_chars / prompt_tokens)

    def fit(self, messages: list[dict[str, Any]], render: Any) -> list[dict[str, Any]]:
        """``messages`` with the oldest tool results stubbed until ``render(messages)`` (the
        wire messages and tools) is estimated to fit; records what was dropped."""
        current = self._apply(messages)
        if self.max_tokens is None:  # no limit: the ratio is never used, nothing is measured
            return current           # (measuring re-encoded the whole conversation each turn)
        last_turn = _latest_tool_block(current)
        while True:
            chars = wire_chars(*render(current))
            if self.estimate(chars) + self.reserve <= self.max_tokens:
                break
            victim = next((i for i, m in enumerate(current[:last_turn])
                           if m.get("role") == "tool" and m.get("tool_call_id") not in
                           self.dropped), None)
            if victim is None:
                break
            call = str(current[victim].get("tool_call_id"))
            self.dropped[call] = len(str(current[victim].get("content") or ""))
            current = self._apply(messages)
        self.last_chars = chars
        return current

    def _apply(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not self.dropped:
            return list(messages)
        out = []
        for message in messages:
            call = message.get("tool_call_id")
            if message.get("role") == "tool" and call in self.dropped:
                message = {**message, "content": dropped_stub(self.dropped[str(call)])}
            out.append(message)
        return out


def _latest_tool_block(messages: list[dict[str, Any]]) -> int:
    """Index where the latest assistant turn with tool calls starts (its results stay)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "assistant" and messages[index].get("tool_calls"):
            return index
    return len(messages)


@dataclass(slots=True)
class ContextWatch:
    """Per attempt: the largest prompt so far, to spot an endpoint truncating silently."""

    largest: int = 0
    shrank: bool = False

    def observe(self, prompt_tokens: int, dropped_since: bool) -> bool:
        """True the first time a prompt came back clearly smaller than an earlier one."""
        if prompt_tokens <= 0:
            return False
        first = False
        if not dropped_since and self.largest and prompt_tokens < SHRINK * self.largest \
                and not self.shrank:
            self.shrank = first = True
        self.largest = max(self.largest, prompt_tokens) if not dropped_since else prompt_tokens
        return first
