"""Retry policy: exponential back-off with jitter, and the server's Retry-After if it sent one."""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait between attempts of one request, and for how long in all.

    ``max_retries`` retries follow the first attempt, so a request is sent at most
    ``max_retries + 1`` times. The n-th wait (n = 1, 2, ...) is drawn uniformly from
    ``[d/2, d]`` with ``d = min(max_delay, base_delay * 2**(n-1))`` ("equal jitter": waits
    grow exponentially but concurrent clients do not retry in lock-step). When the server sent
    Retry-After, the wait is at least that long. No wait is longer than ``max_retry_wait``
    (a server asking for more gets that long, then the next attempt).

    ``deadline`` bounds one request over all its attempts and waits (seconds from its first
    attempt; time spent queued for a concurrency slot does not count). None: ``timeout *
    (max_retries + 1)``, what the attempts would take if each ran to its timeout. A wait that
    would end past the deadline is not waited: the request fails at once.
    """

    max_retries: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_wait: float = 60.0
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_wait < 0:
            raise ValueError("delays must be >= 0")
        if self.deadline is not None and not self.deadline > 0:
            raise ValueError("deadline must be > 0")

    def delay(
        self, retry: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        uniform = (rng or random).uniform
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(retry - 1, 60))
        wait = uniform(ceiling / 2, ceiling)
        if retry_after is not None and retry_after > 0:
            wait = max(wait, retry_after)
        return min(wait, self.max_retry_wait)

    def deadline_for(self, timeout: float) -> float:
        """The deadline of one request whose attempts each have ``timeout`` seconds."""
        if self.deadline is not None:
            return self.deadline
        return timeout * (self.max_retries + 1)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` may be a number of seconds or an HTTP date (RFC 9110); a date in the past
    gives 0. Unparseable or negative values give None (fall back to back-off).
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        seconds = _finite(millis)
        if seconds is not None and seconds >= 0:
            return seconds / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return seconds if seconds >= 0 else None
    try:
        parsed = email.utils.parsedate_tz(value.strip())
        if parsed is None:
            return None
        when = email.utils.mktime_tz(parsed)
    except (TypeError, ValueError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def _finite(text: str) -> float | None:
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None
