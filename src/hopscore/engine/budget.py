"""Budgets of a command's requests: ``--max-cost``, ``--max-tokens-total``, ``--max-time``.

A :class:`Budget` is checked by the engine before every attempt it would send (a reply from
the response cache costs nothing and is always given): once one is reached, no request is
sent any more, and the request asked for fails with the kind :data:`BUDGET`, which stops the
batch as a fatal failure does (:func:`hopscore.engine.batch.run_batch`). Requests already in
flight finish and their rows are kept, so a run stops within the requests in flight of the
budget (within one request's cost at ``--concurrency 1``); a row whose request was refused is
not finished, and a rerun with a larger budget sends it (and only it: finished rows are
resumed, and nothing refused was sent).

Tokens and cost count what this process sent (prompt plus completion tokens of every reply
it received, at the dated list prices of :mod:`hopscore.engine.prices`); time counts from the
engine's first request.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from hopscore.engine.ledger import Tally
from hopscore.engine.prices import Price, model_name
from hopscore.engine.prices import load as load_prices
from hopscore.engine.types import Usage
from hopscore.errors import HopscoreError

#: the failure kind of a request a reached budget refused
BUDGET = "budget"


@dataclass(slots=True)
class Budget:
    max_cost: float | None = None
    max_tokens: int | None = None
    max_time: float | None = None
    price: Price | None = None
    tokens: int = 0
    cost: float = 0.0
    started: float | None = None
    #: which budget ended it: "--max-cost", "--max-tokens-total", "--max-time"
    reached_by: str | None = None
    #: --on-budget abandon: the requests in flight are given up once a budget is reached
    #: (they are not waited for; what they cost is not known), instead of finishing
    abandon: bool = False
    _stop: asyncio.Event | None = None

    def stop_signal(self) -> asyncio.Event:
        """Set once a budget is reached, or ``--max-time`` after the first request, for
        ``--on-budget abandon``: the engine then gives up the requests in flight."""
        if self._stop is None:
            self._stop = asyncio.Event()
            if self.reached_by is not None:
                self._stop.set()
            elif self.max_time is not None:
                if self.started is None:
                    self.started = time.monotonic()
                delay = max(0.0, self.started + self.max_time - time.monotonic())
                asyncio.get_running_loop().call_later(delay, self._time_up)
        return self._stop

    def _time_up(self) -> None:
        self.reached()  # names --max-time and sets the signal

    def reached(self) -> str | None:
        """Why no request may be sent any more (None while every budget has room)."""
        now = time.monotonic()
        if self.started is None:
            self.started = now
        if self.max_time is not None and now - self.started >= self.max_time:
            return self._end("--max-time", f"{self.max_time:g} s have passed")
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return self._end("--max-tokens-total",
                             f"{self.tokens} tokens were used of {self.max_tokens}")
        if self.max_cost is not None and self.cost >= self.max_cost:
            return self._end("--max-cost",
                             f"${self.cost:.4f} was spent of ${self.max_cost:g}")
        return None

    def _end(self, option: str, why: str) -> str:
        self.reached_by = option
        if self._stop is not None:
            self._stop.set()
        return f"the budget {option} was reached ({why}); no more requests are sent"

    def charge(self, usage: Usage) -> None:
        """Count one reply received."""
        self.tokens += usage.prompt_tokens + usage.completion_tokens
        if self.price is not None:
            self.cost += self.price.cost(Tally(prompt_tokens=usage.prompt_tokens,
                                               completion_tokens=usage.completion_tokens,
                                               cached_tokens=usage.cached_tokens))
        if self.abandon:
            self.reached()  # a budget this reply used up gives up the others in flight


#: --on-budget: what becomes of the requests in flight when a budget is reached
ON_BUDGET = ("finish", "abandon")


def make_budget(max_cost: float | None, max_tokens: int | None, max_time: float | None,
                model: str, on_budget: str = "finish") -> Budget | None:
    """The budget of a command's options, or None when none is given. ``--max-cost`` needs a
    price for ``model`` (a user error naming it otherwise)."""
    if max_cost is None and max_tokens is None and max_time is None:
        return None
    price = None
    if max_cost is not None:
        price = load_prices().get(model_name(model))
        if price is None:
            raise HopscoreError(
                f"--max-cost: no list price for the model {model_name(model)!r}; give one in "
                "a price file named by HOPSCORE_PRICES (docs/running-models.md)")
    if on_budget not in ON_BUDGET:
        raise HopscoreError(f"--on-budget must be one of {', '.join(ON_BUDGET)}, not "
                            f"{on_budget!r}")
    return Budget(max_cost=max_cost, max_tokens=max_tokens, max_time=max_time, price=price,
                  abandon=on_budget == "abandon")
