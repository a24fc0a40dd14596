"""The end-of-run account of failed requests: each failure class counted with its first
message (the server's own words) and advice that fits it.

A run's rows keep their error as ``{kind, message, status}`` (:class:`CallFailure`);
:func:`tally` counts them by class and keeps the first message of each, and
:func:`failure_lines` says it on the console. A context overflow is a class of its own (a
``client_error`` whose message says the prompt is too long): a re-run fails it the same way,
so the advice is not to re-run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from hopscore.engine.types import (
    API_ERROR,
    BACKEND_ERROR,
    CLIENT_ERROR,
    CONNECTION,
    EMPTY_CHOICES,
    EMPTY_CONTENT,
    FATAL,
    MALFORMED_BODY,
    RATE_LIMIT,
    SERVER_ERROR,
    TIMEOUT,
)

#: a client error whose message says the prompt does not fit the model's context
CONTEXT_OVERFLOW = "context_overflow"
_CONTEXT = re.compile(
    r"context[ _](?:length|size|window)|maximum context|exceeds? the (?:available )?context|"
    r"too many tokens|prompt is too long|input is too long|n_ctx|reduce the length",
    re.IGNORECASE)

RETRIED = "a re-run of the same command retries only these"
ADVICE = {
    CONNECTION: "the endpoint could not be reached or dropped the connection: check that the "
                f"server runs at --base-url; {RETRIED}",
    TIMEOUT: "no complete answer within --timeout: raise --timeout or lower --concurrency; "
             + RETRIED,
    RATE_LIMIT: "the endpoint kept answering 429 (too many requests): lower --concurrency or "
                f"wait; {RETRIED}",
    SERVER_ERROR: f"the server failed (5xx): its log says why; {RETRIED}",
    CONTEXT_OVERFLOW: "the prompt does not fit the model's context, and a re-run fails the same "
                      "way: use a longer context (llama-server -c, vLLM --max-model-len), "
                      "fewer --shots, a smaller --context-tokens or --max-tokens",
    CLIENT_ERROR: "the server refused these requests as sent (4xx), and a re-run fails the "
                  "same way: the message names what it refused",
    FATAL: "the key or the model name is wrong (401/403/404): fix it, then re-run",
    MALFORMED_BODY: f"the server's replies were not chat completions; {RETRIED}",
    EMPTY_CHOICES: f"the server's replies had no choices; {RETRIED}",
    EMPTY_CONTENT: "the replies were empty (a model that only thinks, or a cut stream): "
                   f"raise --max-tokens; {RETRIED}",
    API_ERROR: f"the replies carried an API error instead of an answer; {RETRIED}",
    BACKEND_ERROR: "hopscore's backend failed (a bug: please report it with the message)",
}


def failure_class(error: dict[str, Any]) -> str:
    """The class of one row's error: its kind, or :data:`CONTEXT_OVERFLOW`."""
    kind = str(error.get("kind") or "?")
    if kind == CLIENT_ERROR and _CONTEXT.search(str(error.get("message") or "")):
        return CONTEXT_OVERFLOW
    return kind


def tally(errors: Iterable[dict[str, Any] | None]) -> dict[str, dict[str, Any]]:
    """Failure class -> ``{"count", "first"}`` (the first message, as the server said it), in
    the order the classes were first met."""
    out: dict[str, dict[str, Any]] = {}
    for error in errors:
        if not isinstance(error, dict):
            continue
        entry = out.setdefault(failure_class(error),
                               {"count": 0, "first": str(error.get("message") or "")})
        entry["count"] += 1
    return out


def failure_lines(failures: dict[str, dict[str, Any]], unit: str = "request") -> list[str]:
    """One line per failure class: how many, the first message, the advice."""
    lines = []
    for kind, entry in failures.items():
        count = int(entry.get("count") or 0)
        noun = unit if count == 1 else f"{unit}s"
        first = " ".join(str(entry.get("first") or "").split())
        if len(first) > 300:
            first = first[:297] + "..."
        advice = ADVICE.get(kind, RETRIED)
        lines.append(f"{count} {noun} failed with {kind}; first: {first}; {advice}")
    return lines


def incomplete_lines(failures: dict[str, dict[str, Any]], of: int | None, unit: str
                     ) -> list[str]:
    """The end-of-run account: a first line saying the run is incomplete (how many of ``of``
    ``unit``s have no answer), then :func:`failure_lines`; none when nothing failed."""
    total = sum(int(entry.get("count") or 0) for entry in failures.values())
    if not total:
        return []
    head = (f"incomplete: {total}{f' of {of}' if of else ''} {unit}s have no answer because "
            "their requests failed (they score 0):")
    return [head, *(f"  {line}" for line in failure_lines(failures, unit))]


def rerun_advice(failures: dict[str, dict[str, Any]]) -> str:
    """Whether re-running helps, from the classes that failed: a request refused as sent
    (a 4xx, a context overflow) fails the same way again."""
    again = {kind: entry for kind, entry in failures.items()
             if kind in (CLIENT_ERROR, CONTEXT_OVERFLOW, BACKEND_ERROR)}
    if not again:
        return "re-run the same command to retry only those"
    classes = ", ".join(again)
    same = sum(int(entry.get("count") or 0) for entry in again.values())
    if len(again) == len(failures):
        return f"a re-run would fail them the same way ({classes}: see the failure classes)"
    return (f"a re-run retries the others, but the {same} of {classes} would fail the same way "
            "(see the failure classes)")


def stopped(failure: object, model: str, endpoint: str) -> str:
    """Why a batch stopped at its first fatal failure, naming the model and the endpoint."""
    return f"{endpoint} refused {model}: {failure}"
