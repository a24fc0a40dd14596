"""Running a coroutine to its end from synchronous code."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from hopscore.errors import TERMINATED, stop_on_sigterm

T = TypeVar("T")


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)``, with the result handed back outside the main task.

    On Python 3.11 ``asyncio.run`` formats its main task twice while it puts the SIGINT handler
    back (``signal.getsignal`` tries to turn the handler, which holds the task, into an enum,
    and the failed attempt's message is built from its repr). A finished task's repr includes
    its result's full repr, and a run's result holds every prompt: over a second for 1,000
    examples with long contexts. Here the main task's result is None.

    The CLI's SIGTERM handler (:func:`hopscore.errors.stop_on_sigterm`) cancels the main task
    meanwhile, as Ctrl-C does, instead of raising wherever the loop happens to be.
    """
    box: list[T] = []
    on_term = _sigterm_handler()

    async def main() -> None:
        task = asyncio.current_task()
        if on_term is not None and task is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().add_signal_handler(
                    signal.SIGTERM, _terminate, task)
        box.append(await coroutine)

    try:
        asyncio.run(main())
    except asyncio.CancelledError:
        if TERMINATED:  # cancelled by SIGTERM, and not turned into Interrupted
            raise KeyboardInterrupt from None
        raise
    finally:
        if on_term is not None:  # the loop put the default back
            signal.signal(signal.SIGTERM, on_term)
    return box[0]


def _sigterm_handler() -> Any:
    """The CLI's SIGTERM handler when it is installed (and this is the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    handler = signal.getsignal(signal.SIGTERM)
    return handler if handler is stop_on_sigterm else None


def _terminate(task: asyncio.Task[Any]) -> None:
    TERMINATED.append(True)
    task.cancel()
