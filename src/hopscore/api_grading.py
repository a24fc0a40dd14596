"""Grading from Python: :func:`judge_rows` and :func:`judge` (the LLM judge, as ``hopscore
judge``) and :func:`sql_match` (execution match, as ``hopscore sql-match``), on rows in memory or
files. Re-exported by ``hopscore`` (docs/python-api.md), like :mod:`hopscore.api`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from collections.abc import Coroutine, Iterable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, TypeVar

from hopscore.api import PathLike, plain_row
from hopscore.errors import HopscoreError

__all__ = ["judge", "judge_rows", "sql_match"]

T = TypeVar("T")


def judge_rows(
    rows: Iterable[Mapping[str, Any]],
    *,
    model: str,
    base_url: str | None = None,
    api_key: str | None = None,
    prompt_file: PathLike | None = None,
    preset: str | None = None,
    concurrency: int = 8,
    timeout: float = 120.0,
    max_retries: int = 5,
    max_tokens: int | None = 2048,
    cache: bool = True,
    max_cell_chars: int = 20_000,
    max_row_bytes: int = 1_000_000,
    output: PathLike | None = None,
) -> list[dict[str, Any]]:
    """Grade each row's ``response`` against its ``correct_answer`` with an LLM judge, as
    ``hopscore judge`` does; returns one output row per input row, in order.

    Each output row is the input row plus ``correct`` (True, False, or None when the judge
    gave no decision), ``parse_ok``, ``extracted_final_answer``, ``reasoning``,
    ``confidence``, ``raw_judge_output``, ``error`` and a ``judge`` object (status, model,
    prompt hash, attempts, tokens). ``model`` and ``base_url`` name any OpenAI-compatible
    endpoint (default: OpenAI); the key is ``api_key``, else ``$JUDGE_API_KEY``. Responses
    are cached (``~/.cache/hopscore``, ``$HOPSCORE_CACHE_DIR``) unless ``cache=False``;
    with ``output`` (a JSON Lines path) the run resumes where an earlier one stopped. Text
    fields longer than ``max_cell_chars`` and rows longer than ``max_row_bytes`` are cut in
    the output (``judge.truncated``); the verdict is parsed from the full reply. ``preset``
    names a benchmark's judge preset (``BENCHMARK/NAME``, ``BENCHMARK``, ``builtin``; as
    ``hopscore judge --judge-preset``), whose template ``prompt_file`` replaces.

    >>> judged = judge_rows([
    ...     {"question": "Capital of France?", "response": "Paris", "correct_answer": "Paris"},
    ...     {"question": "2 + 2?", "response": "5", "correct_answer": "4"},
    ... ], model="judge", base_url=JUDGE_URL)
    >>> [row["correct"] for row in judged], judged[0]["judge"]["status"]
    ([True, False], 'judged')

    (``JUDGE_URL`` is an OpenAI-compatible endpoint such as ``http://localhost:8000/v1``; the
    tests run this example against a local one.)
    """
    from hopscore.engine import RetryPolicy, default_cache_dir
    from hopscore.errors import Location
    from hopscore.files.io import iter_jsonl
    from hopscore.judge import JudgeConfig
    from hopscore.judge.judge_job import judge_items
    from hopscore.judge.presets import judge_prompt
    from hopscore.judge.rows import items_of

    items = items_of((Location("rows", index=i), plain_row(row)) for i, row in enumerate(rows))
    if not items:
        return []
    prompt = judge_prompt(preset, Path(prompt_file) if prompt_file else None)
    config = JudgeConfig(
        model=model, base_url=base_url or None,
        api_key=api_key or os.environ.get("JUDGE_API_KEY") or "EMPTY", prompt=prompt,
        max_tokens=max_tokens or None, concurrency=concurrency, timeout=timeout,
        retry=RetryPolicy(max_retries=max_retries),
        cache_dir=default_cache_dir() if cache else None,
        max_cell_chars=max_cell_chars, max_row_bytes=max_row_bytes)
    with tempfile.TemporaryDirectory(prefix="hopscore-judge-") as folder:
        path = Path(output) if output is not None else Path(folder) / "judged.jsonl"
        summary = _run(judge_items(items, path, config))
        if summary.aborted:
            raise HopscoreError(f"the judge stopped early: {summary.aborted}")
        return [value for _, value in iter_jsonl(path)]


def judge(question: str, response: str | None, correct_answer: str, *, model: str,
          **options: Any) -> dict[str, Any]:
    """Grade one answer with an LLM judge: :func:`judge_rows` on one row (same options).

    >>> row = judge("Who wrote Hamlet?", "Shakespeare", "William Shakespeare",
    ...             model="judge", base_url=JUDGE_URL)
    >>> row["correct"], row["extracted_final_answer"]
    (True, 'Shakespeare')
    """
    rows = judge_rows([{"question": question, "response": response,
                        "correct_answer": correct_answer}], model=model, **options)
    return rows[0]


def sql_match(
    records: PathLike | Iterable[Mapping[str, Any]],
    *,
    db_root: PathLike | None = None,
    db_template: str = "{db}/{db}_template.sqlite",
    compare: str = "reference",
    extract: str = "reference",
    timeout: float | None = 120.0,
    max_rows: int = 100_000,
    table_rows: int = 20,
    workers: int | None = None,
    memory_mb: int = 2048,
    max_cell_chars: int = 1000,
    max_row_bytes: int = 1_000_000,
    output: PathLike | None = None,
) -> list[dict[str, Any]]:
    """Grade Search-to-SQL answers by execution match, as ``hopscore sql-match`` does: the
    agent's SQL and the gold SQL run read-only in sandboxed workers and their result tables are
    compared (``compare``: reference, strict, rows, spider or bird; docs/sql-grading.md).

    ``records`` is a JSON Lines file or records in memory, each with ``instance_id``, the
    answer in ``response``, ``gold_sql`` and the database as ``db_path`` (or ``db`` below
    ``db_root``). Returns one verdict per record, in order: ``match`` (True, False, or None
    for an invalid record), ``score``, ``reason``, ``reason_kind``, ``agent_sql`` and more.
    ``timeout`` bounds each record (queries and comparison), ``memory_mb`` the executor's
    processes together; ``max_cell_chars`` and ``max_row_bytes`` cap each verdict's table
    cells and line (a cut verdict says ``truncated``).

    >>> import sqlite3, tempfile
    >>> db = tempfile.mkdtemp() + "/shop.sqlite"
    >>> with sqlite3.connect(db) as connection:
    ...     _ = connection.executescript("CREATE TABLE item(name TEXT, price REAL);"
    ...                                  "INSERT INTO item VALUES ('pen', 1.5), ('ink', 3.0);")
    >>> answer = "```sql\\nSELECT name FROM item WHERE price >= 3\\n```"
    >>> verdicts = sql_match([{"instance_id": "q1", "db_path": db, "response": answer,
    ...                        "gold_sql": "SELECT name FROM item WHERE price > 2"}])
    >>> verdicts[0]["match"], verdicts[0]["agent_sql"]
    (True, 'SELECT name FROM item WHERE price >= 3')
    """
    from hopscore.files.io import iter_jsonl
    from hopscore.sql.match_job import MatchOptions, run_sql_match
    from hopscore.sql.sandbox import SqlExecutor

    options = MatchOptions(
        db_root=None if db_root is None else Path(db_root).expanduser().resolve(),
        db_template=db_template, timeout_s=timeout if timeout else None, max_rows=max_rows,
        compare=compare, table_rows=table_rows, extract=extract,
        max_cell_chars=max_cell_chars, max_row_bytes=max_row_bytes)
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hopscore-sql-")))
        if isinstance(records, (str, os.PathLike)):
            source = Path(records)
        else:
            from hopscore.files.io import json_line

            source = folder / "records.jsonl"
            source.write_text("".join(json_line(plain_row(r)) for r in records), encoding="utf-8")
        path = Path(output) if output is not None else folder / "verdicts.jsonl"
        with SqlExecutor(workers, memory_mb=memory_mb) as executor:
            run_sql_match(source, path, options, executor=executor)
        return [value for _, value in iter_jsonl(path)]


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end, also from a thread whose event loop is already running (a
    notebook cell)."""
    from hopscore.engine.sync import run_sync

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_sync(coroutine)
    result: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(run_sync(coroutine))
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=target, name="hopscore-api")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
