"""Typed records of the request engine: what goes out, what comes back, and how it failed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from hopscore.files.jsontext import dumps as json_text

#: Failure kinds. Retryable ones are retried by the engine; the others fail at once.
RATE_LIMIT = "rate_limit"  # HTTP 429
SERVER_ERROR = "server_error"  # HTTP 5xx, 408, 409
TIMEOUT = "timeout"  # no complete response within the per-request timeout
CONNECTION = "connection"  # refused, reset, DNS, TLS
MALFORMED_BODY = "malformed_body"  # 2xx whose body is not a chat completion
EMPTY_CHOICES = "empty_choices"  # a completion with no choices
EMPTY_CONTENT = "empty_content"  # null or blank content and no tool calls
CLIENT_ERROR = "client_error"  # other 4xx (bad request, context too long): not retried
FATAL = "fatal"  # 401, 403, 404: credentials or model name wrong; stops a batch
BACKEND_ERROR = "backend_error"  # anything else a backend raised
API_ERROR = "api_error"  # a 2xx that carries an error object, or whose reply is an error message
#: a reply body over the backend's cap (engine/http1.MAX_BODY): not retried
RESPONSE_TOO_LARGE = "response_too_large"

RETRYABLE_KINDS = frozenset(
    {RATE_LIMIT, SERVER_ERROR, TIMEOUT, CONNECTION, MALFORMED_BODY, EMPTY_CHOICES, EMPTY_CONTENT,
     API_ERROR}
)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text (for hashing)."""
    return json_text(value, sort_keys=True, separators=(",", ":"))  # ensure_ascii=False


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """One chat-completions request.

    ``None`` parameters are not sent. ``extra`` holds any other body parameter (``top_p``,
    ``tool_choice``, ``response_format``, provider-specific keys) and is sent as is.
    ``cache_tag`` is never sent: it only tells apart otherwise identical requests that must
    not share a cached response (e.g. the sample index of repeated sampling).
    ``require_content``: when true (the default), a reply with null or blank content and no
    tool calls counts as a failure (``empty_content``) and is retried.
    """

    model: str
    messages: list[dict[str, Any]]
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None
    tools: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    cache_tag: str = ""
    require_content: bool = True
    #: endpoint -> cache key, computed once (hashing the messages is the costly part); a
    #: request is not changed after it is made (dataclasses.replace makes a new memo)
    _keys: dict[str, str] = field(default_factory=dict, init=False, compare=False, repr=False)

    def body(self) -> dict[str, Any]:
        """The parameters sent to the endpoint (besides ``model`` and ``messages``)."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.max_tokens is not None:
            params["max_tokens"] = self.max_tokens
        if self.seed is not None:
            params["seed"] = self.seed
        if self.stop is not None:
            params["stop"] = list(self.stop)
        if self.tools is not None:
            params["tools"] = self.tools
        params.update(self.extra)
        return params

    def cache_key(self, endpoint: str, messages_json: str | None = None) -> str:
        """sha256 over the endpoint, model, messages, every sent parameter and the cache tag.

        ``messages_json``: ``canonical_json(self.messages)`` when the caller has it already
        (a run hashes the prompt too), so that the messages are encoded once; the text hashed
        is the same either way."""
        known = self._keys.get(endpoint)
        if known is not None:
            return known
        messages = canonical_json(self.messages) if messages_json is None else messages_json
        # canonical_json of {endpoint, messages, model, params, require_content, tag}, written
        # in three pieces so that the messages are encoded once: the keys sort as written
        rest = canonical_json({"model": self.model, "params": self.body(),
                               "require_content": self.require_content, "tag": self.cache_tag})
        text = f'{{"endpoint":{canonical_json(endpoint)},"messages":{messages},{rest[1:]}'
        key = self._keys[endpoint] = sha256_text(text)
        return key


@dataclass(frozen=True, slots=True)
class Usage:
    """The tokens one reply reported. ``reasoning_tokens`` are part of ``completion_tokens``
    (OpenAI's ``completion_tokens_details.reasoning_tokens``) and ``cached_tokens`` part of
    ``prompt_tokens`` (``prompt_tokens_details.cached_tokens``; Anthropic's
    ``cache_read_input_tokens``): 0 where the endpoint does not say."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "reasoning_tokens": self.reasoning_tokens, "cached_tokens": self.cached_tokens}

    @staticmethod
    def from_body(usage: dict[str, Any]) -> Usage:
        """Read a chat completion's ``usage`` object (missing or odd counts read as 0)."""
        completion = usage.get("completion_tokens_details")
        prompt = usage.get("prompt_tokens_details")
        reasoning = completion.get("reasoning_tokens") if isinstance(completion, dict) else None
        cached = prompt.get("cached_tokens") if isinstance(prompt, dict) else None
        return Usage(_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")),
                     _count(reasoning), _count(cached))


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The first choice of a chat completion, plus the whole body for audit."""

    content: str | None
    tool_calls: list[dict[str, Any]] | None
    finish_reason: str | None
    usage: Usage
    model: str | None
    raw: dict[str, Any]
    #: the HTTP status it came with (None for an in-process model or a cached reply)
    status: int | None = None
    #: answered by a provider's batch (``--batch``): priced at its batch discount
    batched: bool = False

    @staticmethod
    def from_body(body: dict[str, Any], status: int | None = None) -> ChatResponse:
        """Read a chat-completions body; raise :class:`CallError` when it has no usable choice."""
        choices = body.get("choices")
        if not isinstance(choices, list):
            raise CallError(MALFORMED_BODY, "response has no 'choices' list")
        if not choices:
            raise CallError(EMPTY_CHOICES, "response has an empty 'choices' list")
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            raise CallError(MALFORMED_BODY, "choices[0] has no 'message' object")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise CallError(MALFORMED_BODY, "choices[0].message.content is not a string")
        tool_calls = message.get("tool_calls") or None
        if tool_calls is not None and not isinstance(tool_calls, list):
            raise CallError(MALFORMED_BODY, "choices[0].message.tool_calls is not a list")
        usage_body = body.get("usage")
        usage: dict[str, Any] = usage_body if isinstance(usage_body, dict) else {}
        model = body.get("model")
        finish = first.get("finish_reason")
        return ChatResponse(
            content=content,
            tool_calls=tool_calls,
            finish_reason=finish if isinstance(finish, str) else None,
            usage=Usage.from_body(usage),
            model=model if isinstance(model, str) else None,
            raw=body,
            status=status,
        )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class CallError(Exception):
    """Raised by a backend for one failed attempt; the engine decides whether to retry."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


@dataclass(frozen=True, slots=True)
class CallFailure:
    """Why a request failed for good (after the last retry, or at once when not retryable)."""

    kind: str
    message: str
    status: int | None = None

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.kind}{status}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "status": self.status}


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One attempt actually sent: its HTTP status (None without one: timeout, refused
    connection, an in-process model), why it failed (None for the one that succeeded) and how
    long it took."""

    status: int | None
    error: str | None
    elapsed_s: float

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "error": self.error, "elapsed_s": round(self.elapsed_s, 4)}


@dataclass(frozen=True, slots=True)
class CallResult:
    """The outcome of one request through the engine: a response or a failure, never both.

    ``attempts`` counts requests actually sent (0 for a cache hit) and ``attempt_log`` says
    what each one got; ``latency_s`` is the time of the successful attempt, ``elapsed_s`` the
    whole time including retries and back-off.
    """

    key: str
    response: ChatResponse | None
    failure: CallFailure | None
    attempts: int
    latency_s: float | None
    elapsed_s: float
    cached: bool = False
    attempt_log: tuple[AttemptRecord, ...] = ()

    @property
    def ok(self) -> bool:
        return self.response is not None

    def to_json(self) -> dict[str, Any]:
        """Bookkeeping for a result row (the response text itself is the caller's business)."""
        usage = self.response.usage if self.response is not None else Usage()
        return {
            "cache_key": self.key,
            "cached": self.cached,
            "attempts": [attempt.to_json() for attempt in self.attempt_log],
            "latency_s": None if self.latency_s is None else round(self.latency_s, 4),
            "elapsed_s": round(self.elapsed_s, 4),
            **usage.to_json(),
            "finish_reason": self.response.finish_reason if self.response else None,
            "error": None if self.failure is None else self.failure.to_json(),
            **({"batched": True} if self.response is not None and self.response.batched
               else {}),
        }
