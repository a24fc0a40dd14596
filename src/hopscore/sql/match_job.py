"""The ``hopscore sql-match`` pipeline: grade each input line, write verdicts, resume.

Every non-blank input line gives one output row (:mod:`hopscore.sql.evaluate` grades it; a line
that cannot be read or validated is an ``invalid_input`` row; an unexpected exception becomes an
``internal_error`` row, never an aborted run).

Resume is keyed by settings. Each row carries a ``key`` (:mod:`hopscore.sql.keys`): the input
line's number and bytes, the identity of its database file, and a fingerprint of every setting
that can change a verdict. Rows are appended and flushed as they finish (in input order); a
re-run reads the output back (dropping a torn last line), reuses the rows whose key it computes
again, grades the others (warning once with the count of rows of other settings or edited
lines), and at the end rewrites the file atomically with exactly one row per input line, in
input order. Two settings never end up in one file.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from hopscore.distributed import Built, Gate, ray_execution
from hopscore.distributed.actors import ray_line
from hopscore.engine.batch import RowResult
from hopscore.engine.resume import ResultLog
from hopscore.engine.types import CallFailure
from hopscore.errors import InputError
from hopscore.files.shard import write_sidecar
from hopscore.jobs import Job, open_results, run_in_threads, stream_rows
from hopscore.sql.evaluate import (
    DEFAULT_TEMPLATE,
    NEEDS_DB,
    MatchOptions,
    evaluate,
    resolve_db,
)
from hopscore.sql.inputs import InputLine, read_lines
from hopscore.sql.keys import DatabaseIdentity, row_key, settings_fingerprint
from hopscore.sql.records import MatchRecord, Verdict, cap_row, parse_record, record_id
from hopscore.sql.sandbox import SqlExecutor
from hopscore.sql.summary import Summary

if TYPE_CHECKING:
    from rich.console import Console

    from hopscore.files.shard import Shard

__all__ = ["DEFAULT_TEMPLATE", "NEEDS_DB", "MatchOptions", "Summary", "evaluate",
           "run_sql_match"]


def _parsed(item: InputLine) -> MatchRecord | InputError:
    if isinstance(item.value, InputError):
        return item.value
    try:
        return parse_record(item.value, item.where)
    except InputError as exc:
        return exc


def _grade(item: InputLine, options: MatchOptions, executor: SqlExecutor,
           key: str, settings: str) -> dict[str, Any]:
    """One output row for one input line; never raises."""
    record = _parsed(item)
    if isinstance(record, InputError):
        verdict = Verdict(record_id(item.value), item.line, options.compare).fail(
            "invalid_input", f"invalid_input: {record}")
    else:
        try:
            verdict = evaluate(record, options, executor)
        except Exception as exc:  # one bad row never aborts the run
            verdict = Verdict(record.instance_id, item.line, options.compare).fail(
                "internal_error", f"internal_error: {type(exc).__name__}: {exc}")
    row = verdict.to_json()
    row["key"] = key
    row["settings"] = settings
    cells = [f"{name}.cells" for name in ("agent_table", "gold_table")
             if isinstance(row.get(name), dict) and row[name].get("cells_cut")]
    row = cap_row(row, options.max_row_bytes, options.max_cell_chars)
    if cells:
        row["truncated"] = True
        row["truncated_fields"] = [*cells, *row.get("truncated_fields", [])]
    return row


def _checked(row: dict[str, Any], options: MatchOptions) -> dict[str, Any]:
    """``row`` if it can be written as JSON, else an ``internal_error`` row in its place."""
    try:
        json.dumps(row, allow_nan=False)
    except (TypeError, ValueError) as exc:
        fallback = Verdict(row.get("instance_id"), int(row.get("line") or 0), options.compare)
        replacement = fallback.fail("internal_error",
                                    f"internal_error: cannot write verdict: {exc}").to_json()
        replacement["key"], replacement["settings"] = row["key"], row["settings"]
        return replacement
    return row


def key_of(row: dict[str, Any]) -> str | None:
    """A verdict row's resume key; rows of hopscore versions before keys get a key no run
    computes (so they are graded again), rows of other files none (so they are refused)."""
    key = row.get("key")
    if isinstance(key, str):
        return key
    if row.get("judge_kind") == "s2sql_exec":
        return f"unkeyed:{row.get('line')}:{row.get('instance_id')}"
    return None


def read_done(output: Path) -> list[dict[str, Any]]:
    """The complete verdict rows already in ``output``, in file order (a torn last line is cut
    off, as a resuming run does)."""
    log = ResultLog(output, key_of)
    log.load(lambda row: True)
    if not output.exists():
        return []
    with output.open("rb") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def match_settings(options: MatchOptions, memory_mb: int) -> dict[str, Any]:
    """Every setting that can change a verdict (their hash is each row's ``settings``)."""
    return {"compare": options.compare, "extract": options.extract, "max_rows": options.max_rows,
            "timeout_s": options.timeout_s, "memory_mb": memory_mb,
            "db_template": options.db_template, "db_root": options.db_root}


def line_keys(input_path: Path, options: MatchOptions, settings: str,
              shard: Shard | None = None) -> tuple[list[str], list[int], int]:
    """Pass 1: the resume key and line number of every line of ``shard`` (all lines when
    None), in input order, and how many lines the input has in all. The record is parsed to
    find its database, then dropped."""
    identity = DatabaseIdentity()
    keys: list[str] = []
    lines: list[int] = []
    seen: dict[str, int] = {}
    total = 0
    for item in read_lines(input_path):
        total += 1
        if shard is not None:
            number = seen.get(item.digest, 0)
            seen[item.digest] = number + 1
            if not shard.owns(shard_key(item.digest, number)):
                continue
        record = _parsed(item)
        database = ""
        if not isinstance(record, InputError):
            status, where = resolve_db(record, options)
            database = identity(Path(where)) if status == "ok" else ""
        keys.append(row_key(settings, database, item.line, item.digest))
        lines.append(item.line)
    return keys, lines, total


def shard_key(digest: str, occurrence: int) -> str:
    """What decides a line's shard: its bytes and duplicate number (never the settings)."""
    return f"{digest}#{occurrence}"


def run_sql_match(input_path: Path, output_path: Path, options: MatchOptions, *,
                  executor: SqlExecutor, restart: bool = False,
                  on_row: Callable[[dict[str, Any]], None] | None = None,
                  warn: Console | None = None, shard: Shard | None = None,
                  ray: bool = False, ray_workers: int | None = None) -> Summary:
    """Grade every line of ``input_path`` (``shard``: the lines of that shard) into
    ``output_path`` (resuming unless ``restart``); ``ray``: on Ray workers, each with its own
    SQL sandbox of one worker process (the verdicts are still written here)."""
    options.check()
    described = match_settings(options, executor.memory_mb)
    settings = settings_fingerprint(described)
    keys, lines, total = line_keys(input_path, options, settings, shard)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    if shard is not None:
        write_sidecar(output_path, command="sql-match", shard=shard, fingerprint=settings,
                      input_path=input_path, rows=len(keys), rows_total=total,
                      settings=described)
    if restart and output_path.exists():
        output_path.unlink()
    # every verdict row is finished; rows of other settings stay until this run replaces them
    job = Job(path=output_path, items=lines, keys=keys, key_of=key_of, is_done=lambda row: True,
              what="verdicts", stale="verdicts of other settings or of input lines that "
                                     "changed; those lines are graded again")
    log = open_results(job, warn=warn, rerun=None)
    stale = len(log.keys() - set(keys))
    resumed = sum(1 for key in keys if log.is_done(key))
    todo = {line: key for line, key in zip(lines, keys, strict=True) if not log.is_done(key)}
    if ray:
        try:
            work = SqlWork(options, settings, executor.memory_mb)
            counts = asyncio.run(_grade_on_ray(input_path, todo, work, executor, log, on_row,
                                               ray_workers))
            if warn is not None and counts:
                warn.print(ray_line(counts), markup=False, highlight=False)
        finally:
            log.close()
        log.finalize(keys)
    else:  # pass 2: the lines to grade, read again (so the input is never held in memory)
        pending = ((todo[item.line], item) for item in read_lines(input_path)
                   if item.line in todo) if todo else iter(())

        def grade(item: InputLine, key: str) -> dict[str, Any]:
            return _checked(_grade(item, options, executor, key, settings), options)

        run_in_threads(job, log, pending, grade, threads=executor.workers, on_row=on_row,
                       on_stop=executor.terminate)
    summary = Summary(resumed=resumed, regraded=stale, extract=options.extract)
    with output_path.open("rb") as handle:
        for raw in handle:
            summary.add(json.loads(raw))
    return summary


@dataclass(frozen=True, slots=True)
class SqlWork:
    """sql-match's grading (:class:`hopscore.distributed.WorkFactory`): input lines travel to
    the Ray workers, each grading them in its own sandbox with :func:`_grade`, as here."""

    options: MatchOptions
    settings: str
    memory_mb: int
    ships_items: ClassVar[bool] = True

    async def build(self, gate: Gate | None) -> Built:
        """A Ray worker's: a sandbox of one process (the actor holds one CPU)."""
        sandbox = SqlExecutor(1, memory_mb=self.memory_mb)
        sandbox.__enter__()

        async def close() -> None:
            sandbox.__exit__(None, None, None)

        return self.on(sandbox, close)

    def on(self, sandbox: SqlExecutor, close: Callable[[], Awaitable[None]]) -> Built:
        """The grading in ``sandbox``; ``close``: the clean-up of whoever owns it."""

        async def work(item: InputLine, key: str) -> RowResult:
            row = await asyncio.to_thread(_grade, item, self.options, sandbox, key, self.settings)
            return RowResult(_checked(row, self.options))

        return Built(work, lambda: None, close)

    def lost_row(self, item: InputLine, key: str, failure: CallFailure) -> dict[str, Any]:
        verdict = Verdict(record_id(item.value), item.line, self.options.compare).fail(
            "internal_error", f"internal_error: {failure.message}")
        return {**verdict.to_json(), "key": key, "settings": self.settings}


async def _grade_on_ray(input_path: Path, todo: dict[int, str], work: SqlWork,
                        sandbox: SqlExecutor, log: ResultLog,
                        on_row: Callable[[dict[str, Any]], None] | None,
                        workers: int | None) -> dict[str, Any]:
    """The lines of ``todo`` graded on Ray workers; each verdict is appended here as it comes;
    where the rows ran (the pool's counts; empty when nothing was to do).
    The driver grades too, while Ray starts and beside the workers, in ``sandbox`` (the
    command's, as many processes as a local run's ``--workers``: the driver grades at a local
    run's pace until workers are ready, and the pace it measures is a local run's)."""
    if not todo:
        return {}

    async def local(gate: Gate) -> Built:
        async def keep() -> None:  # the command closes its sandbox
            return None

        return work.on(sandbox, keep)

    # two of the driver's loops per sandbox process, as a local run keeps more lines in flight
    # than processes: a process never waits for the driver to hand it the next line
    execution = await ray_execution(work, limits={}, per_worker=2, workers=workers,
                                    local=local, local_workers=2 * sandbox.workers,
                                    rows=len(todo), local_cpus=sandbox.workers)
    pending = ((todo[item.line], item) for item in read_lines(input_path)  # read again
               if item.line in todo)
    return await stream_rows(log, execution, pending, on_row=on_row)
