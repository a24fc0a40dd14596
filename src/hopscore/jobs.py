"""One resumable job: the skeleton that ``run``, the agent, the judge and ``sql-match`` share.

A job has rows: items in input order, each with a key that names everything that made its row
(settings, prompt, input), and one results file of JSON Lines. The skeleton

1. **resumes by settings** (:func:`open_results`): rows of other settings already in the file
   are handled by the rerun policy (:func:`hopscore.files.reruns.prepare_results`: refused,
   ``--restart``, ``--resume-any``), the file is read back into a
   :class:`~hopscore.engine.ResultLog` (a torn last line cut off), and the user is told what
   of it this run will not reuse;
2. **runs the pending rows through an executor** (:func:`run_rows`): the command's
   :class:`~hopscore.distributed.Execution` (this process or Ray workers) under
   :func:`~hopscore.engine.run_batch`, which appends each finished row as it comes and at the
   end rewrites the file in input order, one row per item;
3. **stops cleanly**: Ctrl-C, or an endpoint down past ``--max-outage``, keeps every finished
   row, lets the command record it (config.json "interrupted") and ends with
   :class:`~hopscore.errors.Interrupted` (exit 130) or
   :class:`~hopscore.engine.outage.EndpointDown`, saying how many rows are kept and where;
4. hands back what the command **summarises** (:class:`Finished`).

What differs per command is passed in: the rows (:class:`Job`), how its execution starts, and
what it does before the first row and when it stops. A command's work asks its model through
the engine :func:`chat_engine` makes, the same in this process and on a Ray worker.
``sql-match`` grades CPU-bound rows: its steps 2 and 3 run them in threads
(:func:`run_in_threads`), or on Ray workers (:func:`stream_rows`), streamed from its input as
they are needed (the input is never held in memory).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from hopscore.engine.batch import BatchOutcome, run_batch
from hopscore.engine.budget import make_budget
from hopscore.engine.cache import cache_for, warn_printer
from hopscore.engine.core import ChatEngine
from hopscore.engine.outage import EndpointDown
from hopscore.engine.resume import KeyOf, ResultLog, note_resume
from hopscore.engine.retry import RetryPolicy
from hopscore.errors import Interrupted
from hopscore.files.reruns import prepare_results

if TYPE_CHECKING:
    from rich.console import Console

    from hopscore.distributed import Execution, Gate
    from hopscore.engine.backend import ChatBackend
    from hopscore.engine.core import EngineStats

T = TypeVar("T")
Row = dict[str, Any]

#: What stops a job early, keeping its finished rows.
STOPS = (asyncio.CancelledError, KeyboardInterrupt, EndpointDown)


@dataclass(frozen=True, slots=True, kw_only=True)
class Job(Generic[T]):
    """A command's rows and the words it says about them."""

    #: the results file
    path: Path
    items: Sequence[T]
    #: ``keys[i]``: item i's resume key (unique)
    keys: list[str]
    key_of: KeyOf
    #: whether a stored row is finished (a failed one is asked again)
    is_done: Callable[[Row], bool]
    #: the rows in messages: "samples", "judge rows", "attempts"
    what: str
    #: the rows of the file this run has no key for: "<path> holds <n> " + stale
    stale: str
    #: the progress bar's label
    description: str = "running"
    #: after "<finished> of <total> " when the job stops: "samples are saved in <path>"
    saved: str = ""
    #: after ``saved`` when the endpoint stayed down, and on Ctrl-C
    down_hint: str = "; rerun the same command to resume"
    interrupted_hint: str = "; rerun the same command to resume"

    def finished(self, log: ResultLog) -> int:
        """How many of this job's rows are finished in ``log``."""
        return len(log.done_keys() & set(self.keys))

    def pending(self, log: ResultLog) -> bool:
        """Whether any row is left to do (the endpoint is checked only then)."""
        return not all(log.is_done(key) for key in self.keys)

    def stopped(self, stop: BaseException, log: ResultLog) -> Exception:
        """The error a stopped job ends with (raised ``from None`` by the caller)."""
        kept = f"{self.finished(log)} of {len(self.keys)} {self.saved}"
        if isinstance(stop, EndpointDown):  # the endpoint stayed down past --max-outage
            return EndpointDown(stop.url, f"{stop.cause}; {kept}{self.down_hint}", stop.seconds)
        return Interrupted(f"{kept}{self.interrupted_hint}")


def open_results(job: Job[Any], *, warn: Console | None, rerun: str | None,
                 differences: Callable[[list[Row]], list[str]] | None = None,
                 set_aside: Callable[[Row], Row] | None = None,
                 other_inputs: str | None = None) -> ResultLog:
    """Step 1: the job's results file, read back for resuming.

    ``rerun`` (a policy of :mod:`hopscore.files.reruns`) decides first what happens to rows of
    other settings (``differences`` names them in a refusal, ``set_aside`` may change a row as
    it moves aside, ``other_inputs`` see :func:`~hopscore.files.reruns.prepare_results`);
    None: they stay and are replaced by this run. Then the file is loaded and the user warned
    of rows this run has no key for and of a torn last line cut off."""
    if rerun is not None:
        assert differences is not None, "a rerun policy names the settings that differ"
        done = prepare_results(job.path, job.keys, job.key_of, policy=rerun, what=job.what,
                               differences=differences, set_aside=set_aside,
                               other_inputs=other_inputs)
        note = done.note(job.path)
        if note and warn is not None:
            warn.print(f"note: {note}", markup=False, highlight=False)
    log = ResultLog(job.path, job.key_of)
    log.load(job.is_done)
    note_resume(log, job.keys, warn, job.stale)
    return log


@dataclass(slots=True)
class Finished:
    """What a job that ran to its end (or to a fatal failure) hands back to summarise."""

    outcome: BatchOutcome
    stats: EngineStats
    #: where the rows ran (``{"executor": "local"}``, or the Ray pool's counts)
    executor: dict[str, Any]


async def run_rows(job: Job[T], log: ResultLog, execution: Execution, *,
                   console: Console | None = None,
                   warm_up: Callable[[], Awaitable[None]] | None = None,
                   on_stop: Callable[[], None] | None = None) -> Finished:
    """Steps 2 and 3: the pending rows of ``job`` through ``execution`` (closed at the end,
    whatever happens), written as they finish and put in input order at the end.

    ``warm_up`` runs first (loading a local model), as part of the job: Ctrl-C there stops it
    like Ctrl-C later. On a stop, ``on_stop`` records it (config.json "interrupted") before
    the job ends with :meth:`Job.stopped`'s error."""
    try:
        if warm_up is not None:
            await warm_up()
        outcome = await run_batch(job.items, job.keys, execution.work, log,
                                  workers=execution.workers, console=console,
                                  description=job.description,
                                  start_interval=execution.start_interval)
    except STOPS as stop:
        if on_stop is not None:
            on_stop()
        raise job.stopped(stop, log) from None
    finally:
        await execution.close()
    return Finished(outcome, execution.stats(), execution.describe())


def run_in_threads(job: Job[Any], log: ResultLog, pending: Iterator[tuple[str, T]],
                   grade: Callable[[T, str], Row], *, threads: int,
                   on_row: Callable[[Row], None] | None = None,
                   on_stop: Callable[[], None] | None = None) -> None:
    """Steps 2 and 3 for CPU-bound rows: ``grade(item, key)`` (which never raises) on each of
    the ``pending`` (key, item) pairs in ``threads`` threads, the pairs read as they are needed
    (a few per thread ahead: the input is never held in memory), each row appended (and passed
    to ``on_row``) in input order as soon as it and those before it are done; at the end the
    file is put in the job's order.

    A stop (Ctrl-C) drops the rows not started, calls ``on_stop`` (to wake threads blocked on a
    worker, so the pool can close) and goes on as it came; every finished row is kept."""
    window = max(2, threads * 4)
    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futures: deque[Future[Row]] = deque()

            def submit_more() -> None:
                while len(futures) < window:
                    pair = next(pending, None)
                    if pair is None:
                        return
                    futures.append(pool.submit(grade, pair[1], pair[0]))

            try:
                submit_more()
                while futures:
                    row = futures.popleft().result()
                    log.append(row)
                    if on_row is not None:
                        on_row(row)
                    submit_more()
            except BaseException:
                for future in futures:
                    future.cancel()
                if on_stop is not None:
                    on_stop()
                raise
    finally:
        log.close()
    log.finalize(job.keys)


async def stream_rows(log: ResultLog, execution: Execution, pending: Iterator[tuple[str, T]], *,
                      on_row: Callable[[Row], None] | None = None) -> dict[str, Any]:
    """Steps 2 and 3 for rows read as they are needed: each of the ``pending`` (key, item) pairs
    through ``execution`` (closed at the end, whatever happens), at most its ``workers`` in
    flight, each row appended (and passed to ``on_row``) as it finishes. The caller puts the
    file in the job's order (:meth:`~hopscore.engine.ResultLog.finalize`). Returns where the
    rows ran (:attr:`~hopscore.distributed.Execution.describe`)."""
    slots = asyncio.Semaphore(execution.workers)

    async def one(key: str, item: T) -> None:
        try:
            result = await execution.work(item, key)
            log.append(result.row, line=result.line)
            if on_row is not None:
                on_row(result.row)
        finally:
            slots.release()

    tasks: list[asyncio.Task[None]] = []
    try:
        for key, item in pending:
            await slots.acquire()
            tasks.append(asyncio.create_task(one(key, item)))
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await execution.close()
    return execution.describe()


class EngineSettings(Protocol):
    """What a command's settings say of its requests (a run's, the agent's, the judge's)."""

    @property
    def timeout(self) -> float: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def adaptive(self) -> bool: ...
    @property
    def max_outage(self) -> float: ...


class RetrySettings(Protocol):
    """The retry options of a command's settings (``--max-retries``, ``--backoff``, ...)."""

    @property
    def max_retries(self) -> int: ...
    @property
    def backoff(self) -> float: ...
    @property
    def max_retry_wait(self) -> float: ...
    @property
    def deadline(self) -> float | None: ...


def retry_policy(settings: RetrySettings) -> RetryPolicy:
    """The engine's retry policy of ``settings``' retry options."""
    return RetryPolicy(max_retries=settings.max_retries, base_delay=settings.backoff,
                       max_retry_wait=settings.max_retry_wait, deadline=settings.deadline)


def chat_engine(backend: ChatBackend, gate: Gate | None, settings: EngineSettings, *,
                concurrency: int, retry: RetryPolicy, warn: Console | None) -> ChatEngine:
    """The engine a job's work asks through: ``backend`` (behind the Ray pool's ``gate`` on a
    worker, None in this process) with ``settings``' timeout, response cache (its warnings to
    ``warn``), adaptive concurrency and outage limit."""
    if gate is not None:
        backend = gate.wrap(backend)
    # --max-cost, --max-tokens-total, --max-time of any command whose settings have them
    budget = make_budget(getattr(settings, "max_cost", None),
                         getattr(settings, "max_tokens_total", None),
                         getattr(settings, "max_time", None),
                         str(getattr(settings, "model", "") or ""),
                         getattr(settings, "on_budget", "finish"))
    return ChatEngine(backend, concurrency=concurrency, timeout=settings.timeout, retry=retry,
                      cache=cache_for(settings.cache_dir, warn_printer(warn)),
                      adaptive=settings.adaptive, max_outage=settings.max_outage, budget=budget)
