"""How many requests are in flight at once: adapted to what the endpoint sustains.

``--concurrency N`` is a ceiling. The engine sends the *opening wave* at once (N requests,
their slots opened a millisecond apart), learns the endpoint's latency from the first reply,
and from then on decides once per *round* (as many completed requests as the limit was when
the round began, about one round trip):

* at the **first reply** it comes down to what is *timeout-safe* even for a server with one
  slot (``timeout / (3 x that reply's latency)``) when the ceiling is above it, and refills
  no slot until fewer than that are in flight;
* after the first round it goes to the largest limit that is timeout-safe for the capacity it
  measured, or, when the requests queued (median latency over twice the fastest: the
  endpoint is saturated, a one-slot server that serialises requests, a small vLLM batch), it
  **settles** at that capacity (peak throughput x fastest latency, the bandwidth-delay
  product) plus a quarter; later it doubles while throughput grows (by at least half the
  proportional gain), and settles the same way when a larger limit did not raise throughput
  (never below the smaller limit that gave the same throughput). The round after a change is
  not judged (new connections, a queue draining);
* when latencies rise until the limit is no longer timeout-safe, it comes down to what is;
* it **backs off** at once on a timeout or a rate limit (halving; a 429 counts once a round),
  and after a rate limit it grows by quarters instead of jumping;
* while no request waits at the endpoint (every latency of the round within ``UNQUEUED`` x the
  fastest) it rises by one a round (**additive increase**), up to below the lowest limit at
  which requests queued or timed out: a limit at which nothing waited is timeout-safe whatever
  the latency, so a limit that fell to 1 after a slow first reply climbs back;
* it **probes** one quarter higher every few steady rounds, so a server that frees up is used.

A server that says how many requests it works on at once (:meth:`ConcurrencyLimit.declare`,
asked by the engine before its first request: :mod:`hopscore.engine.capacity`) sets a floor
and a ceiling instead: never fewer than its slots in flight (none of them waits in a queue), up
to an eighth more while that is timeout-safe.

*Timeout-safe* is the rule that keeps a one-slot server from ever being sent duplicate work:
a request queued behind everything in flight must still finish well within ``--timeout``
(``limit <= capacity * timeout / (3 * slowest recent latency)``). A request that times out
because it waited in the server's queue is sent again, and a server that does not notice the
abandoned copy computes it twice; below that limit it never times out for waiting.

The opening wave is sent before anything is known, so it is the one place where more could be
queued than the timeout allows. Its requests are therefore timed differently (by the engine,
:meth:`hopscore.engine.ChatEngine.complete`): an attempt of the opening wave is cut only when
``--timeout`` has passed both since it was sent and since the endpoint last answered one of the
opening wave. While a one-slot server works through the wave it answers one of them every
reply-latency, so none of them is abandoned while it waits its turn (none is sent twice), and
a request that hangs at a parallel server still ends ``--timeout`` after the wave's last reply.
The one assumption is the one ``--timeout`` already makes: one request, once the server starts
it, is answered within ``--timeout``. Everything sent after the first reply obeys the
timeout-safe limit.

Only rounds in which the limit was reached count (a run that has fewer requests to send than
the limit says nothing about the endpoint). ``adaptive=False`` keeps the limit at the ceiling.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: a queued request must finish within timeout / SAFETY
SAFETY = 3.0
#: settle this much above the measured capacity
HEADROOM = 1.25
#: a round whose median latency is this many times the fastest one queued at the endpoint
QUEUED = 2.0
#: a round whose slowest latency is within this many times the fastest one queued nowhere
UNQUEUED = 1.5
#: probe higher after this many steady rounds
PROBE_EVERY = 8
#: seconds between the openings of the opening wave's slots (64 slots: 64 ms)
OPENING_SPACING = 0.001

OK, TIMEOUT, RATE_LIMIT, OTHER = "ok", "timeout", "rate_limit", "other"


@dataclass(slots=True)
class LimitStats:
    """What the limit did, for config.json."""

    ceiling: int
    adaptive: bool
    start: int
    final: int = 0
    peak: int = 0
    lowest: int = 0
    changes: int = 0
    #: (seconds since start, new limit, why), the first 50 changes
    trace: list[tuple[float, int, str]] = field(default_factory=list)
    #: the slots the server said it has, and the URL that said so (None: it said nothing)
    server_slots: int | None = None
    server_said: str | None = None
    #: why the limit is where it ended
    why: str = "--concurrency"

    def to_json(self) -> dict[str, Any]:
        return {"ceiling": self.ceiling, "adaptive": self.adaptive, "start": self.start,
                "final": self.final, "peak": self.peak, "lowest": self.lowest,
                "changes": self.changes, "server_slots": self.server_slots,
                "server_said": self.server_said, "why": self.why,
                "trace": [{"t_s": round(t, 3), "limit": n, "why": why}
                          for t, n, why in self.trace]}


class ConcurrencyLimit:
    """An asyncio limit on requests in flight whose size adapts (see the module docstring)."""

    def __init__(self, ceiling: int, timeout: float, *, adaptive: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if ceiling < 1:
            raise ValueError("ceiling must be >= 1")
        self.ceiling = ceiling
        self.timeout = timeout
        self.adaptive = adaptive and ceiling > 1
        self._clock = clock
        self.limit = ceiling
        #: never below this: the slots the server said it has (:meth:`declare`)
        self.floor = 1
        #: the lowest limit at which requests queued at the endpoint or timed out: additive
        #: increase stops below it (probes still go past it now and then)
        self._crowded: int | None = None
        #: the highest limit at which no request waited at the endpoint (every latency within
        #: UNQUEUED x the fastest): as many in flight are timeout-safe whatever the latency
        self._clear = 1
        #: no reply yet: requests sent now belong to the opening wave (see the module docstring)
        self.opening = self.adaptive
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[int]] = deque()
        self._round_id = 0
        self._round_started = 0
        self._started = clock()
        self.stats = LimitStats(ceiling, self.adaptive, self.limit, self.limit, self.limit,
                                self.limit)
        # what the rounds measured
        self._throughputs: deque[float] = deque(maxlen=8)
        self._fastest: deque[float] = deque(maxlen=16)
        self._slowest: deque[float] = deque(maxlen=2)
        self._previous: tuple[int, float] | None = None  # (limit, throughput) of the last round
        self._steady = 0
        self._rate_limited = False
        self._transient = False
        #: (when, old limit, seconds between openings) of a raise still being opened, in real
        #: time (time.monotonic: the clock of the event loop that wakes the waiters)
        self._ramp: tuple[float, int, float] | None = None
        self._round_start: float | None = None
        #: the opening round's latencies include queueing at the ceiling: not kept as "slowest"
        self._skip_slowest = False
        self._opened = False
        self._new_round()

    # -- slots ---------------------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        """Whether a request is waiting for a slot."""
        return bool(self._waiters)

    async def acquire(self) -> int:
        """Wait for a slot; return the ticket to hand back to :meth:`release`."""
        if self.in_flight < self._open_slots() and not self._waiters:
            return self._take()
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            return await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(future.result(), OTHER)  # handed over just as we were cancelled
            else:
                self._waiters.remove(future)
            raise

    def _take(self) -> int:
        if not self._opened:
            self._opened = True
            if self.adaptive:
                self._pace(0, OPENING_SPACING)
        self.in_flight += 1
        if self._round_start is None:
            self._round_start = self._clock()
        if self.in_flight >= self._round_limit:
            self._round_binding = True
        self._round_started += 1
        return self._round_id

    def release(self, ticket: int, outcome: str, latency: float | None = None) -> None:
        """Give the slot back, saying how the attempt went (``OK`` with its latency).

        Only requests sent in the current round count towards its throughput; a timeout or a
        rate limit counts whenever it comes.
        """
        self.in_flight -= 1
        if self.adaptive:
            self._observe(outcome, latency, ticket == self._round_id)
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self._open_slots():
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(self._take())

    def _open_slots(self) -> int:
        """The limit, less the slots of a raise that are not open yet (see :meth:`_pace`)."""
        if self._ramp is None:
            return self.limit
        start, old, spacing = self._ramp
        opened = old + 1 + int((time.monotonic() - start) / spacing)
        if opened >= self.limit:
            self._ramp = None
            return self.limit
        return opened

    def _pace(self, old: int, spacing: float | None = None) -> None:
        """Open the slots of a raise one by one over half the fastest latency (at most 5 ms
        apart; the opening wave's ``spacing`` apart): opened at once, requests go out together,
        come back together and queue for the one thread that reads them, and stay in lock-step
        from then on."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if spacing is None:
            fastest = min(self._fastest) if self._fastest else 0.0
            spacing = min(0.005, fastest / (2 * self.limit))
        added = self.limit - old
        if spacing <= 0 or added <= 1:
            return
        self._ramp = (time.monotonic(), old, spacing)
        for step in range(1, added):
            loop.call_later(step * spacing, self._wake)

    # -- adaptation ----------------------------------------------------------------------

    def declare(self, slots: int, source: str) -> None:
        """The server says it works on ``slots`` requests at once (``source``: the URL that
        said so). The limit then never falls below ``slots`` (a request sent then waits in no
        queue, so it cannot time out for waiting) and its ceiling is at least ``slots`` plus
        an eighth, queued so that a slot freed is refilled without waiting for this process's
        round trip; the extra is dropped while latencies are too long for it to be
        timeout-safe."""
        self.stats.server_slots, self.stats.server_said = slots, source
        if not self.adaptive:
            return
        self.floor = max(1, slots)
        self.ceiling = max(self.ceiling, slots + max(1, slots // 8))
        self._set(self.ceiling, f"the server has {slots} slots ({source})")
        if not self._opened:  # asked before the first request: the run starts here
            stats = self.stats
            stats.ceiling = stats.start = stats.lowest = stats.peak = self.limit

    def _new_round(self) -> None:
        self._round_id += 1
        self._round_started = 0
        self._round_limit = self.limit
        self._round_start = None
        self._round_done = 0
        self._round_failed = 0
        self._round_fastest = math.inf
        self._round_latencies: list[float] = []
        self._round_slowest = 0.0
        self._round_binding = self.in_flight >= self.limit
        self._round_backed_off = False

    def _observe(self, outcome: str, latency: float | None, this_round: bool) -> None:
        if outcome == TIMEOUT:
            self._crowded = min(self._crowded or self.limit, self.limit)
            self._clear = min(self._clear, max(1, self.limit // 2))
            self._round_slowest = max(self._round_slowest, self.timeout)
            self._slowest.append(self.timeout)
            self._set(max(1, self.limit // 2), "timeout")
            self._previous = None
            self._new_round()
            return
        if outcome == RATE_LIMIT:
            self._rate_limited = True
            if not self._round_backed_off:
                self._set(max(1, self.limit // 2), "rate limit")
                self._previous = None
                self._new_round()
                self._round_backed_off = True
            return
        if outcome == OK and latency is not None and self.opening:
            self._first_reply(latency)
        if not this_round:
            return
        if outcome != OK or latency is None:
            # a failed request ends its part of the round too (else a round with a request
            # that failed for good would never end)
            self._round_failed += 1
            if self._round_done and self._round_done + self._round_failed >= self._round_limit:
                self._end_round()
            return
        self._round_done += 1
        self._round_fastest = min(self._round_fastest, latency)
        self._round_latencies.append(latency)
        self._round_slowest = max(self._round_slowest, latency)
        if self._round_done + self._round_failed >= self._round_limit:
            self._end_round()

    def _first_reply(self, latency: float) -> None:
        """The opening wave's first reply: come down to what would be timeout-safe even if
        the endpoint served one request at a time (capacity 1)."""
        self.opening = False
        safe = max(1, math.floor(self.timeout / (SAFETY * max(latency, 1e-6))))
        if safe < self.limit:
            self._skip_slowest = True
            self._set(safe, "first reply")

    def _end_round(self) -> None:
        now = self._clock()
        start = self._round_start if self._round_start is not None else now
        duration = max(now - start, 1e-6)
        self._fastest.append(self._round_fastest)
        if self._skip_slowest:
            self._skip_slowest = False
        else:
            self._slowest.append(self._round_slowest)
        if not self._round_binding or self._transient:
            # a round with fewer requests than the limit says nothing about the endpoint; the
            # first round after a change is a transient (new connections, a queue draining)
            self._transient = False
            self._new_round()
            return
        throughput = self._round_done / duration
        self._throughputs.append(throughput)
        capacity = max(1.0, max(self._throughputs) * min(self._fastest))
        safe = max(1, math.floor(capacity * self.timeout / (SAFETY * max(self._slowest))))
        limit = self.limit
        previous = self._previous
        queued = statistics.median(self._round_latencies) > QUEUED * min(self._fastest)
        if max(self._round_latencies) <= UNQUEUED * min(self._fastest):
            # nothing waited at the endpoint: every request in flight was being worked on, so
            # as many in flight again is timeout-safe whatever the latency
            self._clear = max(self._clear, limit)
            unqueued = True
        else:
            self._crowded = min(self._crowded or limit, limit)
            unqueued = False
        safe = max(safe, self._clear)
        top = min(self.ceiling, safe)
        if previous is None and queued and not self._rate_limited:
            # the first judged round already queued at the endpoint: it serves about
            # `capacity` at once
            new, why = min(top, max(1, math.ceil(capacity * HEADROOM))), "saturated"
        elif previous is None:
            new, why = self._grow(limit, top, jump=True), "first round"
        elif limit > previous[0]:
            wanted = previous[1] * (1 + 0.5 * (limit / previous[0] - 1))
            if throughput >= wanted or not queued:
                new = self._grow(limit, top, jump=False)
                why = "throughput grew" if new >= limit else "latency rose"
            else:
                # no gain: back to the measured capacity plus headroom, never below the
                # limit that already gave this throughput
                settled = math.ceil(capacity * HEADROOM)
                new = settled if previous[0] <= settled < limit else previous[0]
                new, why = min(new, top), "saturated"
            self._steady = 0
        elif limit > top:
            new, why = top, "latency rose"
        else:
            self._steady += 1
            new, why = limit, ""
            settled = max(1, math.ceil(capacity * HEADROOM))
            if queued and settled < limit and not self._rate_limited:
                # requests queue at the endpoint beyond what it serves at once (a server
                # that does not serve in order can hide this from the first round)
                new, why = settled, "saturated"
                self._steady = 0
            elif (unqueued and limit < self.ceiling and not self._rate_limited
                  and (self._crowded is None or limit + 1 < self._crowded)):
                # additive increase: the endpoint kept up, one more may be taken at once
                new, why = limit + 1, "additive increase"
            elif self._steady >= PROBE_EVERY and limit < self.ceiling and not queued:
                new, why = limit + max(1, limit // 4), "probe"
                self._steady = 0
                self._crowded = None
        self._previous = (limit, throughput)
        if new != limit:
            self._set(new, why)
        self._new_round()

    def _grow(self, limit: int, top: int, *, jump: bool) -> int:
        if self._rate_limited:
            return max(1, min(top, limit + max(1, limit // 4)))
        return max(1, min(top, top if jump else 2 * limit))

    def _set(self, limit: int, why: str) -> None:
        limit = max(self.floor, min(self.ceiling, limit))
        if limit == self.limit:
            return
        old, self.limit = self.limit, limit
        self._ramp = None
        if limit > old:
            self._pace(old)
        # an additive increase opens one slot more: no new connections, no queue to drain
        self._transient = why != "additive increase"
        stats = self.stats
        stats.why = why
        stats.changes += 1
        stats.final = limit
        stats.peak = max(stats.peak, limit)
        stats.lowest = min(stats.lowest, limit)
        if len(stats.trace) < 50:
            stats.trace.append((self._clock() - self._started, limit, why))
        self._wake()
