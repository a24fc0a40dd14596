"""Reasoning settings (``--reasoning-effort``, ``--thinking-budget``, ``--reasoning-style``) and
reasoning replies, in one place for every provider.

Requests: :func:`with_reasoning` adds the provider's own parameter to a request's body, so the
settings are part of its cache key:

* ``openai`` style (any OpenAI-compatible endpoint; the default for ``openai/...``):
  ``reasoning_effort`` (none, minimal, low, medium, high). OpenAI takes no thinking budget.
* ``anthropic`` style (``anthropic/...``, the Messages API): extended thinking,
  ``thinking: {type: enabled, budget_tokens: N}``; ``--reasoning-effort`` without a budget stands
  for 1024 (minimal, low), 4096 (medium) or 16384 (high) tokens, ``none`` disables thinking.
  Anthropic counts thinking in ``max_tokens`` and allows no temperature with thinking: a
  max_tokens not above the budget is refused, and the temperature is not sent.
* ``chat-template`` style (vLLM, llama.cpp, SGLang serving a model whose chat template reads
  it; chosen with ``--reasoning-style chat-template``): ``chat_template_kwargs`` with
  ``enable_thinking`` (false for effort none or budget 0), ``thinking_budget`` and
  ``reasoning_effort`` when given.

Replies: :func:`split_reply` separates the thinking (an OpenAI-style ``reasoning_content`` or
``reasoning`` field, Anthropic ``thinking`` blocks, inline ``<think>...</think>``) from the answer
after it. Thinking that never closed (a reply cut inside ``<think>``, or reasoning with no
content) is :data:`UNCLOSED`: it gives no answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from hopscore.engine.types import ChatRequest
from hopscore.errors import HopscoreError
from hopscore.text.labels import strip_think

EFFORTS = ("none", "minimal", "low", "medium", "high")
STYLES = ("openai", "anthropic", "chat-template")
#: Anthropic's thinking budget for an effort given without --thinking-budget
ANTHROPIC_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16384}
#: the smallest budget_tokens the Messages API accepts
ANTHROPIC_MIN_BUDGET = 1024
#: the max_tokens the Messages API backend sends when a request sets none
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096
#: a reply's thinking: none seen, closed (an answer may follow), never closed (no answer)
CLOSED, UNCLOSED = "closed", "unclosed"
#: message fields OpenAI-compatible servers put the reasoning in (vLLM, DeepSeek, OpenRouter)
REASONING_FIELDS = ("reasoning_content", "reasoning")

_OPEN = re.compile(r"<(?:think|thinking|reasoning)\b[^>]*>", re.I)
_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)


@dataclass(frozen=True, slots=True)
class ReasoningSettings:
    """What a command asks of a reasoning model; None fields are not sent."""

    effort: str | None = None
    budget: int | None = None
    #: openai, anthropic or chat-template; None: by provider (anthropic/... or openai)
    style: str | None = None

    def style_for(self, provider: str) -> str:
        return self.style or ("anthropic" if provider == "anthropic" else "openai")

    def to_json(self) -> dict[str, Any]:
        """The settings given (config.json, the judge's description)."""
        out = {"effort": self.effort, "budget": self.budget, "style": self.style}
        return {name: value for name, value in out.items() if value is not None}


def provider_of(model: str) -> str:
    """The provider of a ``--model`` value: anthropic, local, else openai (any endpoint)."""
    provider = model.partition("/")[0]
    return provider if provider in ("anthropic", "local") else "openai"


def reasoning_settings(effort: str | None, budget: int | None,
                       style: str | None) -> ReasoningSettings | None:
    """The settings of the three options (None when none is given); values checked."""
    if effort is None and budget is None and style is None:
        return None
    if effort is not None and effort not in EFFORTS:
        raise HopscoreError(f"--reasoning-effort {effort!r}: expected one of "
                            f"{', '.join(EFFORTS)}")
    if style is not None and style not in STYLES:
        raise HopscoreError(f"--reasoning-style {style!r}: expected one of {', '.join(STYLES)}")
    if budget is not None and budget < 0:
        raise HopscoreError(f"--thinking-budget {budget}: expected 0 or more tokens")
    if effort is None and budget is None:
        raise HopscoreError("--reasoning-style needs --reasoning-effort or --thinking-budget")
    return ReasoningSettings(effort, budget, style)


def check(settings: ReasoningSettings | None, provider: str, max_tokens: int | None,
          option: str = "--max-tokens") -> None:
    """Refuse settings the provider cannot take, before any request is sent."""
    if settings is None:
        return
    if provider == "local":
        raise HopscoreError("--reasoning-effort / --thinking-budget: the local model has no "
                            "reasoning settings")
    style = settings.style_for(provider)
    if style == "openai" and settings.budget is not None:
        raise HopscoreError(
            "--thinking-budget: OpenAI's API takes no thinking budget; use --reasoning-effort, "
            "or --reasoning-style chat-template for a vLLM or llama.cpp server")
    if style == "anthropic":
        budget = anthropic_budget(settings)
        if budget is None:
            return
        if budget < ANTHROPIC_MIN_BUDGET:
            raise HopscoreError(f"--thinking-budget {budget}: Anthropic's extended thinking "
                                f"needs at least {ANTHROPIC_MIN_BUDGET} tokens (or "
                                "--reasoning-effort none to turn it off)")
        sent = max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS
        if sent <= budget:
            raise HopscoreError(
                f"{option} {sent} must exceed the thinking budget ({budget} tokens): Anthropic "
                f"counts the thinking in max_tokens; raise {option} (e.g. to {budget + 1024})")


def room_for_thinking(settings: ReasoningSettings | None, provider: str,
                      max_tokens: int) -> int:
    """``max_tokens`` raised by the Anthropic thinking budget when it does not exceed it (for a
    command with no --max-tokens of its own to raise: ``score --judge``)."""
    if settings is None or settings.style_for(provider) != "anthropic":
        return max_tokens
    budget = anthropic_budget(settings)
    return max_tokens if budget is None or max_tokens > budget else budget + max_tokens


def anthropic_budget(settings: ReasoningSettings) -> int | None:
    """budget_tokens of the anthropic style (None: thinking disabled)."""
    if settings.budget is not None:
        return settings.budget or None
    if settings.effort in (None, "none"):
        return None
    return ANTHROPIC_BUDGETS[settings.effort]


def request_params(settings: ReasoningSettings, provider: str) -> dict[str, Any]:
    """The body parameters that carry ``settings`` to ``provider``."""
    style = settings.style_for(provider)
    if style == "openai":
        return {} if settings.effort is None else {"reasoning_effort": settings.effort}
    if style == "anthropic":
        budget = anthropic_budget(settings)
        if budget is None:
            return {"thinking": {"type": "disabled"}}
        return {"thinking": {"type": "enabled", "budget_tokens": budget}}
    off = settings.effort == "none" or settings.budget == 0
    kwargs: dict[str, Any] = {"enable_thinking": not off}
    if settings.budget:
        kwargs["thinking_budget"] = settings.budget
    if settings.effort not in (None, "none"):
        kwargs["reasoning_effort"] = settings.effort
    return {"chat_template_kwargs": kwargs}


def with_reasoning(request: ChatRequest, settings: ReasoningSettings | None,
                   provider: str) -> ChatRequest:
    """``request`` with the reasoning parameters in its body (the same request again when
    there are none; applying it twice gives an equal request)."""
    if settings is None:
        return request
    params = request_params(settings, provider)
    extra = {**request.extra, **params}
    thinking = params.get("thinking", {}).get("type") == "enabled"
    if extra == request.extra and not (thinking and request.temperature is not None):
        return request
    # Anthropic takes no temperature with extended thinking
    return replace(request, extra=extra, temperature=None if thinking else request.temperature)


# -- replies --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Reply:
    """A reply split: the answer text (after the thinking), the thinking, and its state."""

    answer: str
    thinking: str | None
    #: None (no thinking seen), "closed" or "unclosed"
    state: str | None


def reasoning_of(body: dict[str, Any] | None) -> str | None:
    """The reasoning text of a chat-completion body's first message (None: none)."""
    choices = (body or {}).get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    if not isinstance(message, dict):
        return None
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def split_reply(content: str | None, reasoning: str | None = None) -> Reply:
    """The answer of a reply and its thinking: inline ``<think>`` blocks or a separate
    ``reasoning`` text. Unclosed: an opened block with nothing answered outside it, or
    reasoning with no content."""
    text = content or ""
    opens, closes = list(_OPEN.finditer(text)), list(_CLOSE.finditer(text))
    if not opens and not closes:
        if reasoning is None:
            return Reply(text, None, None)
        return Reply(text, reasoning, CLOSED if text.strip() else UNCLOSED)
    answer = strip_think(text)
    inline = text[: closes[-1].start()] if closes else text
    thinking = "\n".join(t for t in (reasoning, _OPEN.sub("", inline).strip()) if t) or None
    still_open = bool(opens) and (not closes or opens[-1].start() > closes[-1].start())
    if still_open and not answer.strip():
        return Reply("", thinking or _OPEN.sub("", text).strip(), UNCLOSED)
    return Reply(answer.strip(), thinking, CLOSED)


def reply_fields(reply: Reply, reasoning: str | None) -> dict[str, Any]:
    """What a sample row keeps of a reply's thinking: the separate reasoning text (inline
    thinking stays in ``raw_output``) and the thinking's state."""
    out: dict[str, Any] = {}
    if reasoning is not None:
        out["reasoning"] = reasoning
    if reply.state is not None:
        out["thinking"] = reply.state
    return out
