"""Run many items through async work functions, resumably, with a progress bar.

:func:`run_batch` is the loop every long run shares (the judge, model runs): it skips items whose
key is already done in the :class:`~hopscore.engine.resume.ResultLog`, keeps ``workers`` items in
flight, appends each finished row as soon as it exists, stops early on a fatal failure (bad
credentials or model name: every further request would fail the same way), and finally rewrites
the results file in input order with exactly one row per item.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rich.console import Console, RenderableType
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hopscore.engine.budget import BUDGET
from hopscore.engine.resume import ResultLog
from hopscore.engine.types import FATAL, CallFailure
from hopscore.files.io import frozen_heap

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RowResult:
    """What a work function produced for one item.

    ``done`` is false for a row that records a failure: it is written (so the file always has a
    row per item) but a re-run tries the item again. ``failure`` is the failure, if any.
    """

    row: dict[str, Any]
    done: bool = True
    failure: CallFailure | None = None
    #: the row's line, when the work function made it (``dumps_encodable(row)``, written as
    #: it is: :func:`hopscore.files.rowcap.fitting_line`)
    line: str | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # sent to another process (a Ray worker's rows) without the line: the row alone
        # crosses, as before, and the writer encodes it
        return (RowResult, (self.row, self.done, self.failure))


@dataclass(slots=True)
class BatchOutcome:
    total: int
    already_done: int
    processed: int = 0
    failed: int = 0
    wall_s: float = 0.0
    #: the fatal failure that stopped the run early, if one did
    aborted: CallFailure | None = None
    #: superseded or foreign rows dropped when the file was put in order
    dropped_rows: int = 0

    @property
    def complete(self) -> bool:
        return self.aborted is None

    def to_json(self) -> dict[str, Any]:
        """The ``batch`` block of a run's config.json."""
        return {"already_done": self.already_done, "processed": self.processed,
                "failed": self.failed, "wall_s": round(self.wall_s, 3),
                "aborted": None if self.aborted is None else str(self.aborted)}


@dataclass(frozen=True, slots=True)
class _Item(Generic[T]):
    key: str
    value: T


async def run_batch(
    items: Sequence[T],
    keys: Sequence[str],
    work: Callable[[T, str], Awaitable[RowResult]],
    log: ResultLog,
    *,
    workers: int,
    console: Console | None = None,
    description: str = "running",
    start_interval: float = 0.005,
    source: AsyncIterator[tuple[str, T]] | None = None,
) -> BatchOutcome:
    """Process every item whose key is not done yet; return counts.

    ``keys[i]`` is item i's unique key; ``work(item, key)`` must return a row whose
    ``log.key_of(row) == key``. When every item has a row the file is rewritten in ``keys``
    order; after a fatal failure it is left as is (in completion order) for a re-run to finish.

    ``source`` gives more ``(key, item)`` pairs, made while the batch runs (a run renders its
    prompts while the first requests are out); they come after ``items`` in the file's order.
    An exception it raises stops the batch.

    Workers start ``start_interval`` seconds apart (a worker whose turn comes after every item
    is taken does not start: a short batch does not wait for the last one's turn). Started
    together, all requests go out at once, come back at once and queue for the one CPU thread
    that parses them, and stay in lock-step from then on; staggered, the replies arrive spread
    out (and a rate-limited endpoint sees a ramp instead of a burst). 64 workers are all
    running after 0.3 s.
    """
    if len(items) != len(keys):
        raise ValueError("items and keys differ in length")
    order = list(keys)
    seen = set(order)
    if len(seen) != len(order):
        raise ValueError("keys are not unique")
    started = time.perf_counter()
    pending = [_Item(k, v) for k, v in zip(keys, items, strict=True) if not log.is_done(k)]
    outcome = BatchOutcome(total=len(order), already_done=len(order) - len(pending))
    queue: asyncio.Queue[_Item[T] | None] = asyncio.Queue()
    for item in pending:
        queue.put_nowait(item)
    stop = asyncio.Event()

    progress = _progress(console)
    task_id = progress.add_task(description, total=len(order), completed=outcome.already_done,
                                failed=0) if progress else None

    async def feed() -> None:
        assert source is not None
        async for key, value in source:
            if key in seen:
                raise ValueError(f"keys are not unique: {key!r}")
            seen.add(key)
            order.append(key)
            outcome.total += 1
            if log.is_done(key):
                outcome.already_done += 1
            elif not stop.is_set():
                queue.put_nowait(_Item(key, value))
            if progress is not None and task_id is not None:
                progress.update(task_id, total=outcome.total, completed=outcome.already_done
                                + outcome.processed)

    taken = asyncio.Event()  # every item is taken: a worker not started yet need not start

    async def worker(delay: float) -> None:
        if delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(taken.wait(), delay)
            if taken.is_set():
                return
        while not stop.is_set():
            item = await queue.get()
            if item is None:
                taken.set()
                return
            result = await work(item.value, item.key)
            if log.key_of(result.row) != item.key:
                raise ValueError(f"work returned a row for another key than {item.key!r}")
            log.append(result.row, done=result.done, line=result.line)
            outcome.processed += 1
            if not result.done:
                outcome.failed += 1
            failure = result.failure
            # a wrong key or model, or a budget reached (engine/budget.py): nothing more is
            # taken; the items in flight finish
            if failure is not None and failure.kind in (FATAL, BUDGET) \
                    and outcome.aborted is None:
                outcome.aborted = failure
                stop.set()
            if progress is not None and task_id is not None:
                progress.update(task_id, advance=1, failed=outcome.failed)

    count = max(1, workers if source is not None else min(workers, len(pending)))
    tasks = [asyncio.create_task(worker(i * start_interval)) for i in range(count)]
    feeder = None
    if source is None:
        for _ in tasks:
            queue.put_nowait(None)
    else:
        async def feed_all() -> None:
            try:
                await feed()
            finally:
                for _ in tasks:  # the workers end when the queue is drained
                    queue.put_nowait(None)

        feeder = asyncio.create_task(feed_all())
    running = [*tasks] + ([feeder] if feeder is not None else [])
    try:
        if progress is not None:
            progress.start()
        with frozen_heap():  # what was built before the batch is not walked again by it
            await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        if progress is not None:
            progress.stop()
        log.close()
    if outcome.aborted is None:
        outcome.dropped_rows = log.finalize(order)
    outcome.wall_s = time.perf_counter() - started
    return outcome


class _Bar(Progress):
    """A progress bar two columns narrower than the terminal: the "^C" a terminal echoes on
    Ctrl-C then stays on the bar's line, and the last redraw covers it; on a bar as wide as the
    terminal it wrapped to a new line, and the bar was printed twice."""

    def __init__(self, *columns: Any, console: Console, **options: Any) -> None:
        self._terminal = console  # Live asks for a renderable before the progress is set up
        super().__init__(*columns, console=console, **options)

    def get_renderable(self) -> RenderableType:
        from rich.constrain import Constrain

        return Constrain(super().get_renderable(), width=max(20, self._terminal.width - 2))


def _progress(console: Console | None) -> Progress | None:
    if console is None:
        return None
    return _Bar(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        redirect_stdout=False,
        redirect_stderr=False,
    )
