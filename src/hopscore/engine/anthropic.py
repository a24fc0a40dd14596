"""Native Anthropic models (``--model anthropic/NAME``) through the Messages API.

The rest of hopscore speaks OpenAI chat completions: prompts, the agent's tool loop,
trajectories and the response cache all hold OpenAI-format messages. This backend translates at
the edge, both ways, so the same engine (retries, deadline, adaptive concurrency, cache, resume)
drives Claude:

* request: system messages become ``system``; ``tool`` messages become ``tool_result`` blocks of
  a user turn (consecutive ones merged, with any user text that follows); assistant tool calls
  become ``tool_use`` blocks (arguments parsed to an object); consecutive turns of one role are
  merged so roles alternate; empty text is dropped (the API refuses empty text blocks); tools
  become ``{name, description, input_schema}``; ``tool_choice`` auto/required/none/a function
  become auto/any/none/tool; ``stop`` becomes ``stop_sequences``; ``max_tokens`` is required by
  the API (:data:`DEFAULT_MAX_TOKENS` when unset); ``seed`` and other OpenAI-only parameters
  are not sent;
* reply: text blocks joined as ``content``, ``tool_use`` blocks as OpenAI ``tool_calls`` (JSON
  arguments), ``stop_reason`` mapped to ``finish_reason`` (``max_tokens`` -> ``length``,
  ``tool_use`` -> ``tool_calls``), usage as prompt and completion tokens (cache reads and writes
  counted as prompt tokens). The original stop reason is kept as ``anthropic_stop_reason``.

The ``anthropic`` SDK (extra ``hopscore[anthropic]``) sends the request, with its own retries
off: one client per endpoint.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from hopscore.engine.classify import body_error, error_message, status_error
from hopscore.engine.types import (
    BACKEND_ERROR,
    CONNECTION,
    MALFORMED_BODY,
    TIMEOUT,
    CallError,
    ChatRequest,
    ChatResponse,
)
from hopscore.errors import HopscoreError

if TYPE_CHECKING:
    import anthropic

DEFAULT_BASE_URL = "https://api.anthropic.com"
#: the anthropic-version header of the models listing (the SDK sends it with every request)
API_VERSION = "2023-06-01"
#: sent when a request sets no max_tokens (the Messages API requires one)
DEFAULT_MAX_TOKENS = 4096
#: OpenAI parameters with a Messages API equivalent of the same name
PASSED_THROUGH = ("top_p", "top_k", "metadata", "thinking")
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                  "tool_use": "tool_calls", "pause_turn": "stop", "refusal": "content_filter",
                  "model_context_window_exceeded": "length"}


def anthropic_endpoint(base_url: str | None) -> str:
    """The endpoint an :class:`AnthropicBackend` reports (part of cache keys)."""
    return "anthropic:" + (base_url or DEFAULT_BASE_URL).rstrip("/")


# -- request -------------------------------------------------------------------------------

def _text(content: Any) -> str:
    """The text of an OpenAI content value (a string, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and part.get("type") in (None, "text"))
    return str(content)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The Messages API content blocks of one OpenAI message (its role decided by the caller)."""
    role = message.get("role")
    if role == "tool":
        return [{"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or ""),
                 "content": _text(message.get("content")) or "(empty)"}]
    blocks: list[dict[str, Any]] = []
    text = _text(message.get("content"))
    if text.strip():
        blocks.append({"type": "text", "text": text})
    if role == "assistant":
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            blocks.append({"type": "tool_use", "id": str(call.get("id") or ""),
                           "name": str(function.get("name") or ""),
                           "input": _arguments(function.get("arguments"))})
    return blocks


def messages_of(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, Any]]]:
    """OpenAI messages as (system, Messages API turns that alternate user / assistant)."""
    system = [_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")]
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            continue
        target = "assistant" if role == "assistant" else "user"
        blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == target:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": target, "content": blocks})
    for turn in turns:  # tool results first in a user turn, as the API asks
        if turn["role"] == "user":
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(start)"}]})
    joined = "\n\n".join(part for part in system if part.strip())
    return joined or None, turns


def tools_of(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        entry: dict[str, Any] = {"name": function.get("name", ""),
                                 "input_schema": function.get("parameters")
                                 or {"type": "object", "properties": {}}}
        if function.get("description"):
            entry["description"] = function["description"]
        out.append(entry)
    return out


def tool_choice_of(choice: Any) -> dict[str, Any] | None:
    if choice in (None, "auto"):
        return {"type": "auto"} if choice else None
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name") or choice.get("name")
        if name:
            return {"type": "tool", "name": str(name)}
    raise CallError(BACKEND_ERROR, f"tool_choice {choice!r} has no Messages API equivalent")


def request_body(request: ChatRequest) -> dict[str, Any]:
    """The Messages API body for ``request``."""
    system, turns = messages_of(request.messages)
    body: dict[str, Any] = {"model": request.model, "messages": turns,
                            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS}
    if system:
        body["system"] = system
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if request.tools:
        body["tools"] = tools_of(request.tools)
    choice = tool_choice_of(request.extra.get("tool_choice"))
    if choice is not None and request.tools:
        body["tool_choice"] = choice
    for name in PASSED_THROUGH:
        if name in request.extra:
            body[name] = request.extra[name]
    return body


# -- reply ---------------------------------------------------------------------------------

def completion_of(message: dict[str, Any]) -> dict[str, Any]:
    """A Messages API reply as an OpenAI chat-completion body."""
    if message.get("type") == "error" or message.get("error") not in (None, "", {}):
        raise body_error(message.get("error") or message, 200)
    content = message.get("content")
    if not isinstance(content, list):
        raise CallError(MALFORMED_BODY, "Messages API reply has no 'content' list")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thoughts: list[str] = []  # extended thinking, kept as OpenAI-style reasoning_content
    for block in content:
        if not isinstance(block, dict):
            raise CallError(MALFORMED_BODY, "Messages API reply holds a non-object block")
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
            thoughts.append(block["thinking"])
        elif block.get("type") == "tool_use":
            calls.append({"id": str(block.get("id") or f"toolu_{len(calls)}"),
                          "type": "function",
                          "function": {"name": str(block.get("name") or ""),
                                       "arguments": json.dumps(block.get("input") or {},
                                                               ensure_ascii=False)}})
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        reply["tool_calls"] = calls
    if thoughts:
        reply["reasoning_content"] = "\n".join(thoughts)
    found = message.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    prompt = sum(_tokens(usage.get(k)) for k in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    stop = message.get("stop_reason")
    return {
        "id": message.get("id"), "object": "chat.completion", "model": message.get("model"),
        "choices": [{"index": 0, "message": reply,
                     "finish_reason": FINISH_REASONS.get(str(stop), stop)}],
        # cache reads are part of the prompt, as OpenAI counts its cached tokens; the
        # thinking a reply did is part of output_tokens (the API does not count it apart)
        "usage": {"prompt_tokens": prompt,
                  "completion_tokens": _tokens(usage.get("output_tokens")),
                  "prompt_tokens_details": {
                      "cached_tokens": _tokens(usage.get("cache_read_input_tokens"))}},
        "anthropic_stop_reason": stop,
    }


def _tokens(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class AnthropicBackend:
    """Claude through the Messages API (``POST {base_url}/v1/messages``)."""

    def __init__(self, base_url: str | None, api_key: str | None) -> None:
        try:
            import anthropic
        except ImportError:
            raise HopscoreError(
                "--model anthropic/...: the anthropic SDK is not installed; install it with "
                "pip install 'hopscore[anthropic]'") from None
        self.endpoint = anthropic_endpoint(base_url)
        self.url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/v1/messages"
        self._key = api_key or "EMPTY"
        self._client: anthropic.AsyncAnthropic = anthropic.AsyncAnthropic(
            base_url=base_url or None, api_key=api_key or "EMPTY", max_retries=0)

    def probe_urls(self) -> tuple[str, str | None, dict[str, str]]:
        """What :func:`hopscore.engine.preflight.check_endpoint` asks: the models listing."""
        base = self.url[: -len("/v1/messages")]
        return f"{base}/v1/models", None, {"x-api-key": self._key,
                                          "anthropic-version": API_VERSION,
                                          "User-Agent": "hopscore"}

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        import anthropic

        body = request_body(request)
        try:
            text = await self._client.post("/v1/messages", cast_to=str, body=body,
                                           options={"timeout": timeout})
        except anthropic.APITimeoutError:
            raise CallError(TIMEOUT, f"no response from {self.url} within {timeout:g} s") \
                from None
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__
            why = f"{type(cause).__name__}: {cause}" if cause is not None else exc.message
            raise CallError(CONNECTION, f"cannot connect to {self.url}: {why}") from None
        except anthropic.APIStatusError as exc:
            status = exc.status_code
            raise status_error(status, error_message(status, exc.response.text),
                               dict(exc.response.headers)) from None
        except anthropic.AnthropicError as exc:
            raise CallError(BACKEND_ERROR, f"{type(exc).__name__}: {exc}") from None
        try:
            message = json.loads(text)
        except ValueError:
            snippet = text[:120].replace("\n", " ")
            raise CallError(MALFORMED_BODY, f"response body is not JSON: {snippet!r}") from None
        if not isinstance(message, dict):
            raise CallError(MALFORMED_BODY, "response body is not a JSON object")
        return ChatResponse.from_body(completion_of(message), 200)

    async def aclose(self) -> None:
        await self._client.close()


def anthropic_backend(base_url: str | None, api_key: str, concurrency: int) -> AnthropicBackend:
    """The ``anthropic`` provider's backend (:data:`hopscore.engine.providers.FACTORIES`)."""
    return AnthropicBackend(base_url, api_key)
