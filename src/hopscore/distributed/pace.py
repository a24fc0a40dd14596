"""Whether Ray is worth asking for: the driver's pace on its own rows (the overlap of
:mod:`hopscore.distributed.ray_pool`). The driver works alone for :data:`PROBE_S`, then Ray is
started or connected to as soon as the rows left would take the driver, at its pace, at least
:data:`WORKER_PAYOFF_S`; until then Ray would only take CPU from the driver."""

from __future__ import annotations

from collections import deque

#: Ray is started or connected to only when the driver has at least this many seconds of
#: work left at its pace: Ray and its workers take 4 to 10 s to start here (a busy 2-core
#: machine) and take CPU from the driver meanwhile, so they need more than that to pay back
WORKER_PAYOFF_S = 15.0
#: the window over which the driver's pace is measured, seconds
PACE_S = 1.0
#: seconds the driver works alone before it decides whether Ray is worth starting
PROBE_S = 2.0


class Pace:
    """The driver's finished rows over time (``now``: the event loop's clock)."""

    def __init__(self) -> None:
        self.done = 0
        #: when the driver's last rows finished (within one window)
        self._finished: deque[float] = deque()
        #: the most rows the driver finished within one window
        self._best = 0

    def finished(self, now: float) -> None:
        self.done += 1
        self._finished.append(now)
        while self._finished[0] < now - PACE_S:
            self._finished.popleft()
        self._best = max(self._best, len(self._finished))

    def too_short(self, rows: int, elapsed: float) -> str | None:
        """Why Ray is not worth asking for yet (the driver, at the pace it has kept so far,
        will finish the ``rows`` too soon for Ray's workers to pay back their start), or
        None: it is."""
        # the driver's best pace over a second (the first seconds' ramp, and Ray's start
        # taking CPU meanwhile, make the whole run's pace too slow), else the whole run's
        pace = max(self._best / PACE_S, self.done / max(elapsed, 1e-9))
        if self.done <= 0 or pace <= 0:
            return None
        left = (rows - self.done) / pace
        if left >= WORKER_PAYOFF_S:
            return None
        return (f"the driver had {rows - self.done} rows left after {elapsed:.1f} s, about "
                f"{left:.1f} s at its pace, under the {WORKER_PAYOFF_S:.0f} s a worker needs "
                "to pay back its start")
