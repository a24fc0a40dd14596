"""What an endpoint's answer means: an HTTP status, an error body, a 2xx body, a reply's text.

Independent of the HTTP library, so every backend classifies failures the same way:

* :func:`status_error`: 429 and 5xx (and 408/409) are retried, 401/403/404 stop a batch, other
  4xx fail the request at once;
* :func:`error_message`: the message of an error body, or a sentence saying the body was empty
  (or its message blank), always with the status;
* :func:`parse_body`: a 2xx chat completion, where a body that carries an ``error`` object (next
  to ``choices`` or instead of them) is an API error, never an answer;
* :func:`error_reply`: a reply whose whole text is an API error message some gateways put in
  ``content`` (``Error code: 429 - {...}``, ``{"error": {...}}``, ``502 Bad Gateway``): an API
  error, retried and never cached or scored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from hopscore.engine.retry import parse_retry_after
from hopscore.engine.types import (
    API_ERROR,
    CLIENT_ERROR,
    FATAL,
    MALFORMED_BODY,
    RATE_LIMIT,
    SERVER_ERROR,
    CallError,
    ChatResponse,
)

#: Replies longer than this are never taken for an error message (an answer may quote one).
MAX_ERROR_REPLY_CHARS = 600


def status_error(status: int, message: str, headers: Mapping[str, str]) -> CallError:
    """Classify an HTTP error status: 429 and 5xx (and 408/409) are retried, 401/403/404 stop."""
    retry_after = parse_retry_after(headers)
    if status == 429:
        return CallError(RATE_LIMIT, message, status=status, retry_after=retry_after)
    if status >= 500 or status in (408, 409):
        return CallError(SERVER_ERROR, message, status=status, retry_after=retry_after)
    if status in (401, 403, 404):
        return CallError(FATAL, message, status=status)
    return CallError(CLIENT_ERROR, message, status=status)


def error_message(status: int, text: str) -> str:
    """The message of an error response body; never empty."""
    stripped = text.strip()
    if not stripped:
        return f"HTTP {status} with an empty body"
    try:
        body = json.loads(stripped)
    except ValueError:
        return _snippet(stripped)
    inner = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(inner, str):
        return inner.strip()[:300] or f"HTTP {status}: the error body has an empty message"
    if isinstance(inner, dict):
        message = inner.get("message")
        if isinstance(message, str) and message.strip():
            return message.strip()[:300]
        if "message" in inner or not inner:
            return f"HTTP {status}: the error body has an empty message: {_snippet(stripped)}"
    return _snippet(stripped)


def parse_body(text: str | bytes, status: int | None = 200) -> ChatResponse:
    """Parse a 2xx body into a :class:`ChatResponse`; anything else is a retryable failure."""
    try:
        body = json.loads(text)
    except ValueError:
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        snippet = raw[:120].replace("\n", " ")
        raise CallError(MALFORMED_BODY, f"response body is not JSON: {snippet!r}") from None
    if not isinstance(body, dict):
        raise CallError(MALFORMED_BODY, "response body is not a JSON object")
    problem = body.get("error")
    if problem not in (None, "", {}, []):
        # Some gateways answer 200 with an error object (an upstream provider failed), with
        # or without a choices list beside it: never an answer.
        raise body_error(problem, status)
    return ChatResponse.from_body(body, status)


def body_error(problem: Any, status: int | None) -> CallError:
    """The failure for an ``error`` object inside a 2xx body."""
    message = _short(problem)
    code = problem.get("code") if isinstance(problem, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    where = f"error object in a {status or 2} response" if status else "error object in a reply"
    text = f"{where}: {message}"
    if isinstance(code, int) and not isinstance(code, bool):
        if code == 429:
            return CallError(RATE_LIMIT, text, status=status)
        if 400 <= code < 500 and code not in (408, 409):
            return CallError(CLIENT_ERROR, text, status=status)
    return CallError(API_ERROR, text, status=status)


_ERROR_REPLY = re.compile(
    r"""^(?:
        error\s+code:\s*\d{3}\b                                  # the openai SDK's str(exc)
      | (?:api|upstream|proxy|gateway|server|http|openai|litellm)?[\s_]*error\s*[:\-]?\s*
        (?:http\s*)?(?:status\s*)?(?:code\s*)?[:\-]?\s*(?:4\d\d|5\d\d)\b  # "Error: 429 ..."
      | (?:http\s*)?(?:4\d\d|5\d\d)\s+(?:too\s+many\s+requests|bad\s+gateway|service\s+
        unavailable|gateway\s+time-?out|internal\s+server\s+error|bad\s+request|
        unauthorized|forbidden|not\s+found)\b                    # "502 Bad Gateway"
      | (?:error\s*[:\-]\s*)?(?:rate\s+limit(?:ed)?(?:\s+(?:exceeded|reached))?|too\s+many\s+
        requests|quota\s+exceeded|service\s+unavailable|internal\s+server\s+error|bad\s+gateway|
        gateway\s+time-?out|upstream\s+(?:connect\s+)?error|the\s+server\s+is\s+overloaded|
        server\s+overloaded|overloaded_error|request\s+timed\s+out)\b[^\n]{0,200}$
      | (?:(?:api|upstream|provider|proxy|gateway|server|model|openai|litellm)[\s_]*)?
        error\s*[:\-]\s*[^\n]{0,200}?\b(?:overloaded|over\s+capacity|at\s+capacity|
        rate[\s_-]?limit\w*|too\s+many\s+requests|(?:temporarily\s+)?unavailable|try\s+again|
        retry|timed\s+out|time-?out|quota)\b[^\n]{0,200}$      # "Error: ... overloaded. Retry."
      | (?:the\s+)?(?:upstream\s+)?(?:model|server|service|provider|api|engine|endpoint|backend)
        (?:\s+[\w.-]+){0,2}\s+is\s+(?:currently\s+|temporarily\s+)?(?:overloaded|over\s+
        capacity|at\s+capacity|unavailable)\b[^\n]{0,200}$  # "The upstream model is overloaded."
    )""",
    re.IGNORECASE | re.VERBOSE,
)


_HTML_ERROR = re.compile(r"error|bad gateway|unavailable|time-?out|too many requests|\b[45]\d\d\b")


def error_reply(content: str | None) -> str | None:
    """The API error a reply's text is, or None when it reads as an answer.

    Only a short reply that is nothing but an error message counts: a JSON object with an
    ``error`` key, the text of an HTTP error status, or a rate-limit/overload notice.
    """
    if not content:
        return None
    text = content.strip()
    if not text or len(text) > MAX_ERROR_REPLY_CHARS:
        return None
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and value.get("error") not in (None, "", {}, []):
            return _short(value["error"])
        return None
    lowered = text.lower()
    if lowered.startswith(("<html", "<!doctype html")) and _HTML_ERROR.search(lowered):
        return _snippet(text)
    if _ERROR_REPLY.match(text):
        return _snippet(text)
    return None


def _short(value: Any) -> str:
    if isinstance(value, dict) and isinstance(value.get("message"), str) and value["message"]:
        return str(value["message"])[:200]
    if isinstance(value, str):
        return value[:200]
    return json.dumps(value, ensure_ascii=False)[:200]


def _snippet(text: str) -> str:
    return " ".join(text.split())[:200]
