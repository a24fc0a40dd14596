"""The circuit breaker: a run whose endpoint went away pauses instead of failing every row.

After :data:`TRIP_AFTER` connection failures in a row (refused, reset, cut off: nothing
answered) the endpoint is taken to be down. Requests then wait instead of being sent, and one
attempt at a time (a *probe*, every :data:`PROBE_EVERY` seconds) checks whether it is back;
the attempts that failed during the outage use none of their request's retries nor of its
deadline. The first attempt answered (any HTTP status but 503, which llama.cpp's server
answers while it loads its model) ends the outage and every waiting request goes out again.
When the endpoint is still down ``max_outage`` seconds after the outage began, every waiting
request raises :class:`EndpointDown`: the run ends with the rows it finished
kept, and rerunning the same command resumes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from hopscore.defaults import DEFAULT_MAX_OUTAGE
from hopscore.errors import HopscoreError

#: connection failures in a row that make an outage
TRIP_AFTER = 5
#: seconds between probes during an outage
PROBE_EVERY = 2.0
#: the default of --max-outage
MAX_OUTAGE = DEFAULT_MAX_OUTAGE


class EndpointDown(HopscoreError):
    """The endpoint stayed unreachable for longer than ``--max-outage``."""

    def __init__(self, url: str, cause: str, seconds: float) -> None:
        self.url, self.cause, self.seconds = url, cause, seconds
        super().__init__(f"{url} has not answered for {seconds:.0f} s (--max-outage): {cause}")


class Breaker:
    """Counts connection failures in a row; during an outage, holds requests back."""

    def __init__(self, url: str, max_outage: float = MAX_OUTAGE, *,
                 say: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url
        self.max_outage = max_outage
        self._say = say
        self._clock = clock
        self._in_a_row = 0
        #: when the outage began (None: the endpoint answers)
        self.down_since: float | None = None
        self.cause = ""
        self._probing = False
        self._next_probe = 0.0
        self._back: asyncio.Event | None = None
        #: outages so far, and their seconds in all (for config.json)
        self.outages = 0
        self.outage_s = 0.0

    def answered(self) -> None:
        """An attempt got an HTTP reply (any status): the endpoint is up."""
        self._in_a_row = 0
        self._probing = False
        if self.down_since is not None:
            seconds = self._clock() - self.down_since
            self.outage_s += seconds
            self.down_since = None
            if self._back is not None:
                self._back.set()
            self._tell(f"{self.url} answers again after {seconds:.0f} s; the run goes on")

    def failed(self, cause: str) -> bool:
        """An attempt could not reach the endpoint; True when it fell in an outage (it then
        counts against no retry and no deadline: the request waits and sends it again)."""
        self._in_a_row += 1
        self._probing = False
        if self.down_since is None and self._in_a_row >= TRIP_AFTER:
            self.down_since = self._clock()
            self._next_probe = self.down_since + PROBE_EVERY
            self.cause = cause
            self.outages += 1
            self._back = asyncio.Event()
            self._tell(f"{self.url} is not answering ({cause}); requests are paused until it "
                       f"is back, for at most {self.max_outage:g} s (--max-outage), and the "
                       "rows finished so far are kept")
        return self.down_since is not None

    def neither(self) -> None:
        """An attempt ended without telling whether the endpoint is up (a timeout): a probe
        may go out again."""
        self._probing = False

    async def wait(self) -> None:
        """Before an attempt: return at once while the endpoint is up; during an outage,
        return for one probe at a time, or raise :class:`EndpointDown` once ``max_outage``
        has passed."""
        while self.down_since is not None:
            now = self._clock()
            if now - self.down_since >= self.max_outage:
                raise EndpointDown(self.url, self.cause, now - self.down_since)
            if not self._probing and now >= self._next_probe:
                self._probing = True
                self._next_probe = now + PROBE_EVERY
                return
            back = self._back
            wake = min(self._next_probe, self.down_since + self.max_outage) - now
            if back is None:
                await asyncio.sleep(max(wake, 0.05))
                continue
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(back.wait(), timeout=max(wake, 0.05))

    def _tell(self, message: str) -> None:
        if self._say is not None:
            self._say(message)
