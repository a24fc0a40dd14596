"""One record graded inside a query worker: gold query, agent queries, comparison, all bounded.

Runs in a worker process (:mod:`hopscore.sql.worker`), under the worker's memory limit, so a
result too big to hold, or a comparison that needs too much memory, ends that record with
``result_too_large`` instead of growing the grading process; and under one deadline for the
whole record (``timeout``: executing the gold and agent queries and comparing), so a
comparison that runs past it ends with ``compare_timeout``. Only the verdict numbers and the
rows shown (each cell capped) go back to the parent.

The request is a dict: ``path``, ``gold_sql``, ``agents`` (the agent SQL texts to grade, the
first for the verdict, others for the other extraction), ``max_rows``, ``timeout`` (0: none),
``compare``, ``order_matters``, ``table_rows``, ``max_cell_chars``. The reply: ``gold`` and
``agents`` (one each), every side with ``ok``, ``error``, ``kind``, ``columns``, ``row_count``,
``truncated``, ``duplicate_column_names``, ``table``; each agent side also ``comparison`` (the
:class:`~hopscore.sql.table_match.Comparison` fields) or ``limit`` (``compare_timeout`` or
``result_too_large``).
"""

from __future__ import annotations

import signal
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from hopscore.sql.query import run_query
from hopscore.sql.table_match import compare_tables
from hopscore.sql.tables import render_table

#: Gold results kept per worker (by database, query and row cap), when at most this many cells.
GOLD_CACHE_ENTRIES = 16
GOLD_CACHE_CELLS = 200_000
_gold_cache: OrderedDict[tuple[str, str, int], dict[str, Any]] = OrderedDict()


class CompareTimeout(Exception):
    """Raised by the alarm when the record's deadline passes during a comparison."""


def _alarm(signum: int, frame: Any) -> None:
    raise CompareTimeout


def _side(result: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    columns = [str(name) for name in result["columns"]]
    lowered = [name.lower() for name in columns]
    side = {
        "ok": result["ok"], "error": result["error"], "kind": result["kind"],
        "columns": columns, "row_count": len(result["rows"]), "truncated": result["truncated"],
        "duplicate_column_names": len(set(lowered)) != len(lowered),
        "elapsed": result.get("elapsed", 0.0),
    }
    if result["ok"]:
        side["table"] = render_table(columns, result["rows"], truncated=result["truncated"],
                                     limit=request["table_rows"],
                                     max_cell_chars=request["max_cell_chars"])
    return side


def _gold(request: dict[str, Any], heap_limit: int, deadline: float | None) -> dict[str, Any]:
    key = (request["path"], request["gold_sql"], request["max_rows"])
    cached = _gold_cache.get(key)
    if cached is not None:
        _gold_cache.move_to_end(key)
        return cached
    result = run_query(request["path"], request["gold_sql"], request["max_rows"],
                       request["timeout"], 0, heap_limit, deadline=deadline, digest=True)
    width = len(result["columns"])
    if result["ok"] and len(result["rows"]) * max(1, width) <= GOLD_CACHE_CELLS:
        _gold_cache[key] = result
        while len(_gold_cache) > GOLD_CACHE_ENTRIES:
            _gold_cache.popitem(last=False)
    return result


def _compare(agent: dict[str, Any], gold: dict[str, Any], request: dict[str, Any],
             deadline: float | None) -> tuple[dict[str, Any] | None, str | None]:
    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        return None, "compare_timeout"
    previous = signal.signal(signal.SIGALRM, _alarm)
    if left is not None:
        signal.setitimer(signal.ITIMER_REAL, left)
    try:
        result = compare_tables(agent["rows"], len(agent["columns"]), gold["rows"],
                                len(gold["columns"]), mode=request["compare"],
                                order_matters=request["order_matters"])
    except CompareTimeout:
        return None, "compare_timeout"
    except MemoryError:
        return None, "result_too_large"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return {
        "match": bool(result.match), "raw_score": float(result.raw_score),
        "column_precision": float(result.column_precision),
        "column_recall": float(result.column_recall), "decided_by": result.decided_by,
        "flags": list(result.flags), "alignment": [list(pair) for pair in result.alignment],
    }, None


def grade(request: dict[str, Any], heap_limit: int,
          progress: Callable[[str, int, dict[str, Any] | None], None]) -> dict[str, Any]:
    """Grade one record (see the module docstring); never raises for what the queries do.

    ``progress(phase, index, side)`` is told each step before it starts (``gold``, ``agent``)
    and each side when it is done (``gold_done``, ``agent_done``: the comparison comes next),
    so that the parent still has them if it must kill this worker at the deadline.
    """
    started = time.monotonic()
    deadline = started + request["timeout"] if request["timeout"] > 0 else None
    progress("gold", 0, None)
    try:
        gold = _gold(request, heap_limit, deadline)
        reply: dict[str, Any] = {"gold": _side(gold, request), "agents": []}
    except MemoryError:
        _gold_cache.clear()
        gold = None
        reply = {"gold": {"ok": False, "kind": "memory", "error": "Query ran out of memory.",
                          "columns": [], "row_count": 0, "truncated": False,
                          "duplicate_column_names": False}, "agents": []}
    progress("gold_done", 0, reply["gold"])
    if gold is None or not gold["ok"]:
        return reply
    for index, sql in enumerate(request["agents"]):
        progress("agent", index, None)
        agent: dict[str, Any] | None = None
        try:
            agent = run_query(request["path"], sql, request["max_rows"], request["timeout"], 0,
                              heap_limit, deadline=deadline, digest=True)
            side = _side(agent, request)
            if agent["ok"]:
                progress("agent_done", index, side)
                side["comparison"], side["limit"] = _compare(agent, gold, request, deadline)
        except MemoryError:
            agent = None
            side = {"ok": True, "error": None, "kind": None, "columns": [], "row_count": 0,
                    "truncated": False, "duplicate_column_names": False,
                    "comparison": None, "limit": "result_too_large"}
        reply["agents"].append(side)
        del agent
    reply["elapsed"] = time.monotonic() - started
    return reply
