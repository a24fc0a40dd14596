"""How many requests a server says it works on at once, asked before a run's first request.

* llama.cpp's ``llama-server``: ``GET /props`` has ``total_slots`` (its ``--parallel``), and
  ``GET /slots`` lists the slots;
* SGLang: ``GET /metrics`` has the gauge ``sglang:max_running_requests``;
* vLLM's ``/metrics`` has no gauge of ``--max-num-seqs``, only ``vllm:num_requests_running``
  and ``vllm:num_requests_waiting``: while requests wait, the running ones are what it takes
  at once, so the gauge is read only then;
* anything else (a hosted API, Ollama) says nothing: the limit follows the throughput curve.

Each question is one GET with a short timeout; an error, a non-200 status or a body without
the field is "says nothing". The answer is the server's own count, never a guess.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass

#: seconds one question may take
ASK_TIMEOUT = 3.0


@dataclass(frozen=True, slots=True)
class Capacity:
    """``slots`` requests at once, as ``source`` (the URL that said so) says."""

    slots: int
    source: str


def server_root(endpoint: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080`` (where /props and /metrics are)."""
    root = endpoint.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _get(url: str, headers: dict[str, str]) -> str | None:
    request = urllib.request.Request(url, headers={k: v for k, v in headers.items()
                                                   if k.lower() != "content-type"})
    try:
        with urllib.request.urlopen(request, timeout=ASK_TIMEOUT) as reply:
            if reply.status != 200:
                return None
            data: bytes = reply.read(4_000_000)
            return data.decode("utf-8", "replace")
    except (OSError, ValueError, urllib.error.URLError):
        return None


def from_props(text: str | None) -> int | None:
    """``total_slots`` of llama.cpp's /props."""
    try:
        value = json.loads(text or "").get("total_slots")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def from_slots(text: str | None) -> int | None:
    """The number of slots llama.cpp's /slots lists."""
    try:
        value = json.loads(text or "")
    except ValueError:
        return None
    return len(value) if isinstance(value, list) and value else None


_GAUGE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+([-+0-9.eE]+|NaN)\s*$")


def gauges(text: str | None) -> dict[str, float]:
    """Prometheus text: each metric's value (the sum over its label sets)."""
    out: dict[str, float] = {}
    for line in (text or "").splitlines():
        match = _GAUGE.match(line.strip())
        if match is None:
            continue
        try:
            value = float(match.group(2))
        except ValueError:
            continue
        out[match.group(1)] = out.get(match.group(1), 0.0) + value
    return out


def from_metrics(text: str | None) -> int | None:
    """SGLang's max_running_requests, or vLLM's running requests while others wait."""
    values = gauges(text)
    sglang = values.get("sglang:max_running_requests")
    if sglang is not None and sglang >= 1:
        return int(sglang)
    running = values.get("vllm:num_requests_running")
    if running is not None and running >= 1 and values.get("vllm:num_requests_waiting", 0) > 0:
        return int(running)
    return None


def ask(endpoint: str, headers: dict[str, str] | None = None) -> Capacity | None:
    """What the server at ``endpoint`` (an OpenAI base URL) says it takes at once, or None."""
    if not endpoint.startswith(("http://", "https://")):
        return None
    root = server_root(endpoint)
    headers = headers or {}
    for path, read in (("/props", from_props), ("/slots", from_slots),
                       ("/metrics", from_metrics)):
        slots = read(_get(root + path, headers))
        if slots is not None:
            return Capacity(slots, root + path)
    return None


async def ask_async(endpoint: str, headers: dict[str, str] | None = None) -> Capacity | None:
    """:func:`ask` on a thread."""
    return await asyncio.to_thread(ask, endpoint, headers)


async def cluster_limit(endpoint: str, concurrency: int, adaptive: bool) -> int:
    """The global limit of ``endpoint`` under ``--executor ray``: ``concurrency``, or the
    slots plus an eighth the server says it has when more (adaptive runs only: every worker's
    own limit then fits itself within it)."""
    if not adaptive:
        return concurrency
    capacity = await ask_async(endpoint)
    if capacity is None:
        return concurrency
    return max(concurrency, capacity.slots + max(1, capacity.slots // 8))
