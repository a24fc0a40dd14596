"""Running a coroutine to its end from synchronous code."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``, with the result handed back outside the main task.

    On Python 3.11 ``asyncio.run`` formats its main task twice while it puts the SIGINT handler
    back (``signal.getsignal`` tries to turn the handler, which holds the task, into an enum,
    and the failed attempt's message is built from its repr). A finished task's repr includes
    its result's full repr, and a run's result holds every prompt: over a second for 1,000
    HotpotQA examples. Here the main task's result is None.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coroutine)

    asyncio.run(main())
    return box[0]
