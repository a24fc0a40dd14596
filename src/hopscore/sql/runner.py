"""The ``hopscore sql-match`` pipeline: grade each input line, write verdicts, resume.

Per record, in the reference's order: gold present, agent SQL extracted, database resolved,
gold query run, agent query run, tables compared. Any failure ends the record with a reason
(``missing_gold_sql``, ``agent_sql_extraction_failed``, ``sqlite_db_not_found: ...``,
``gold_sql_exec_error: ...``, ``agent_sql_exec_error: ...``) and the run goes on; an
unexpected exception becomes an ``internal_error`` verdict, never an aborted run.

Output: one line per non-blank input line, in input order, appended and flushed as soon as it
(and every line before it) is done. Re-running with the same output skips the lines already
there (checked against the input by line number and id) after dropping a torn last line.
"""

from __future__ import annotations

import json
import os
import string
import threading
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError, Location
from hopscore.sql.compare import MODES, compare_tables
from hopscore.sql.extract import EXTRACT_MODES, Extraction, extract_sql
from hopscore.sql.inputs import read_lines
from hopscore.sql.order import reference_ordered, sqlite_ordered
from hopscore.sql.records import (
    MatchRecord,
    Verdict,
    dumps_line,
    parse_record,
    record_id,
    render_table,
)
from hopscore.sql.sandbox import QueryResult, SqlExecutor, sqlite_version

DEFAULT_TEMPLATE = "{db}/{db}_template.sqlite"
NEEDS_DB = "record needs db_path, or db together with --db-root"


@dataclass(frozen=True, slots=True)
class MatchOptions:
    db_root: Path | None = None
    db_template: str = DEFAULT_TEMPLATE
    timeout_s: float | None = 120.0
    max_rows: int = 100_000
    compare: str = "reference"
    table_rows: int = 20
    #: how the agent's SQL is read: "reference" (exactly as the reference) or "lenient"
    extract: str = "reference"

    @property
    def other_extract(self) -> str:
        return "lenient" if self.extract == "reference" else "reference"

    def check(self) -> None:
        if self.extract not in EXTRACT_MODES:
            raise HopscoreError(f"--extract must be one of {', '.join(EXTRACT_MODES)}, not "
                                f"{self.extract!r}")
        if self.compare not in MODES:
            raise HopscoreError(
                f"--compare must be one of {', '.join(MODES)}, not {self.compare!r}")
        try:
            fields = [name for _, name, _, _ in string.Formatter().parse(self.db_template) if name]
        except ValueError as exc:
            raise HopscoreError(f"--db-template {self.db_template!r}: {exc}") from None
        if any(name != "db" for name in fields) or "db" not in fields:
            raise HopscoreError(f"--db-template {self.db_template!r} must use {{db}} and no other "
                                "field")


class GoldCache:
    """Recent gold results by (database, query), so repeated golds run once."""

    def __init__(self, size: int = 64) -> None:
        self._items: OrderedDict[tuple[str, str], QueryResult] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> QueryResult | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: tuple[str, str], result: QueryResult) -> None:
        with self._lock:
            self._items[key] = result
            while len(self._items) > self._size:
                self._items.popitem(last=False)


def resolve_db(record: MatchRecord, options: MatchOptions) -> tuple[str, Path | str]:
    """``("ok", path)``, or a failure ``(reason_kind, reason)``."""
    if record.db_path:
        return "ok", Path(record.db_path).expanduser().resolve()
    if not record.db or options.db_root is None:
        return "missing_db", NEEDS_DB
    name = record.db
    if any(part in ("", ".", "..") for part in name.replace("\\", "/").split("/")) \
            or "/" in name or "\\" in name or "\x00" in name:
        return "invalid_db_name", f"invalid_db_name: {name!r} is not a plain database name"
    return "ok", options.db_root / options.db_template.format(db=name)


def evaluate(record: MatchRecord, options: MatchOptions, executor: SqlExecutor,
             cache: GoldCache | None = None) -> Verdict:
    """Grade one record (see the module docstring for the steps).

    When the other extraction (lenient for reference, and back) reads another SQL, that one is
    graded too and recorded as ``other_extraction``, so a summary can say how many verdicts the
    other reading would change.
    """
    if cache is None:
        cache = GoldCache()
    found = extract_sql(record.response, record.messages, record.message_format,
                        mode=options.extract)
    verdict = _evaluate_with(record, found, options, executor, cache)
    other = extract_sql(record.response, record.messages, record.message_format,
                        mode=options.other_extract)
    if other.sql != found.sql and verdict.reason_kind != "missing_gold_sql":
        alternative = _evaluate_with(record, other, options, executor, cache)
        verdict.other_extraction = {
            "extract": options.other_extract, "agent_sql": other.sql,
            "agent_sql_source": other.source, "match": alternative.match,
            "reason_kind": alternative.reason_kind,
        }
    return verdict


def _evaluate_with(record: MatchRecord, found: Extraction, options: MatchOptions,
                   executor: SqlExecutor, cache: GoldCache | None) -> Verdict:
    verdict = Verdict(record.instance_id, record.line, options.compare)
    verdict.extract = options.extract
    if not record.gold_sql:
        return verdict.fail("missing_gold_sql")
    verdict.agent_sql, verdict.agent_sql_source = found.sql, found.source
    if not found.sql:
        return verdict.fail("agent_sql_extraction_failed")
    status, where = resolve_db(record, options)
    if status != "ok":
        return verdict.fail(status, str(where))
    path = Path(where)
    verdict.db_path = str(path)
    if not path.is_file():
        return verdict.fail("sqlite_db_not_found", f"sqlite_db_not_found: {path}")
    key = (str(path), record.gold_sql)
    gold = cache.get(key) if cache is not None else None
    if gold is None:
        gold = executor.execute(path, record.gold_sql, max_rows=options.max_rows,
                                timeout_s=options.timeout_s)
        if cache is not None and gold.ok:
            cache.put(key, gold)
    if not gold.ok:
        verdict.gold_exec_error = gold.error
        return verdict.fail("gold_sql_exec_error", f"gold_sql_exec_error: {gold.error}")
    agent = executor.execute(path, found.sql, max_rows=options.max_rows,
                             timeout_s=options.timeout_s)
    if not agent.ok:
        verdict.agent_exec_error = agent.error
        return verdict.fail("agent_sql_exec_error", f"agent_sql_exec_error: {agent.error}")
    verdict.order_sensitive = reference_ordered(record.gold_sql)
    verdict.order_sensitive_sqlite = sqlite_ordered(record.gold_sql)
    reference_like = options.compare in ("reference", "strict")
    ordered = verdict.order_sensitive if reference_like else verdict.order_sensitive_sqlite
    result = compare_tables(agent.rows, len(agent.columns), gold.rows, len(gold.columns),
                            mode=options.compare, order_matters=ordered)
    verdict.match = result.match
    verdict.score = 1.0 if result.match else 0.0
    verdict.raw_score = float(result.raw_score)
    verdict.column_precision = float(result.column_precision)
    verdict.column_recall = float(result.column_recall)
    verdict.decided_by = result.decided_by
    verdict.flags = list(result.flags)
    verdict.alignment = [list(pair) for pair in result.alignment]
    verdict.truncated = {"agent": agent.truncated, "gold": gold.truncated}
    if agent.truncated or gold.truncated:
        verdict.flags.append("truncated")
    if agent.duplicate_column_names or gold.duplicate_column_names:
        verdict.flags.append("duplicate_column_names")
    verdict.agent_table = render_table(agent, options.table_rows)
    verdict.gold_table = render_table(gold, options.table_rows)
    if result.match:
        return verdict.fail("exec_match")
    return verdict.fail("exec_mismatch", (
        f"exec_mismatch: raw_score={result.raw_score:.3f} "
        f"col_precision={result.column_precision:.3f} col_recall={result.column_recall:.3f}"))


def _input_rows(path: Path) -> Iterator[tuple[Location, Any]]:
    """``(location, value or InputError)`` for each non-blank line, never raising per line."""
    for item in read_lines(path):
        yield item.where, item.value


def _grade(where: Location, value: Any, options: MatchOptions, executor: SqlExecutor,
           cache: GoldCache) -> dict[str, Any]:
    """One output row for one input line; never raises."""
    line = where.line or 0
    try:
        if isinstance(value, InputError):
            raise value
        record = parse_record(value, where)
    except InputError as exc:
        return Verdict(record_id(value), line, options.compare).fail(
            "invalid_input", f"invalid_input: {exc}").to_json()
    try:
        return evaluate(record, options, executor, cache).to_json()
    except Exception as exc:  # one bad row never aborts the run
        return Verdict(record.instance_id, line, options.compare).fail(
            "internal_error", f"internal_error: {type(exc).__name__}: {exc}").to_json()


def _serialize(row: dict[str, Any], options: MatchOptions) -> str:
    try:
        return dumps_line(row)
    except (TypeError, ValueError) as exc:
        fallback = Verdict(row.get("instance_id"), int(row.get("line") or 0), options.compare)
        return dumps_line(fallback.fail("internal_error",
                                        f"internal_error: cannot write verdict: {exc}").to_json())


def read_done(output: Path) -> list[dict[str, Any]]:
    """The complete verdict rows already in ``output``; a torn last line is cut off."""
    if not output.exists():
        return []
    data = output.read_bytes()
    rows: list[dict[str, Any]] = []
    keep = 0
    position = 0
    while position < len(data):
        end = data.find(b"\n", position)
        if end < 0:
            break
        chunk = data[position:end]
        if chunk.strip():
            try:
                row = json.loads(chunk.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                break
            if not isinstance(row, dict):
                break
            rows.append(row)
        position = end + 1
        keep = position
    if keep < len(data):
        with output.open("r+b") as handle:
            handle.truncate(keep)
    return rows


@dataclass(slots=True)
class Summary:
    """Totals over every verdict of the output file (resumed ones included)."""

    total: int = 0
    matched: int = 0
    gold_failures: int = 0
    undecided: int = 0
    resumed: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    decided_by: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    sqlite_version: str = field(default_factory=sqlite_version)
    #: the extraction the verdicts used, and the other one (lenient or reference)
    extract: str = "reference"
    #: rows where the other extraction reads another SQL, and where that changes the verdict
    other_sql: int = 0
    other_changes: int = 0

    def add(self, row: dict[str, Any]) -> None:
        self.total += 1
        other = row.get("other_extraction")
        if isinstance(other, dict):
            self.other_sql += 1
            if row.get("match") is not None and bool(other.get("match")) != bool(row["match"]):
                self.other_changes += 1
        self.matched += bool(row.get("match"))
        self.gold_failures += bool(row.get("gold_failure"))
        self.undecided += row.get("match") is None
        self.reasons[str(row.get("reason_kind") or "unknown")] += 1
        if row.get("decided_by"):
            self.decided_by[str(row["decided_by"])] += 1
        for flag in row.get("flags") or ():
            self.flags[str(flag)] += 1

    @property
    def accuracy(self) -> float:
        """Matched over every row, as the reference (and the leaderboard) count."""
        return self.matched / self.total if self.total else 0.0

    @property
    def accuracy_without_gold_failures(self) -> float:
        graded = self.total - self.gold_failures
        return self.matched / graded if graded else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total, "matched": self.matched, "accuracy": self.accuracy,
            "gold_failures": self.gold_failures, "undecided": self.undecided,
            "accuracy_without_gold_failures": self.accuracy_without_gold_failures,
            "resumed": self.resumed, "reasons": dict(self.reasons),
            "decided_by": dict(self.decided_by), "flags": dict(self.flags),
            "sqlite_version": self.sqlite_version, "extract": self.extract,
            "other_extract": "lenient" if self.extract == "reference" else "reference",
            "other_extract_reads_other_sql": self.other_sql,
            "other_extract_changes_verdict": self.other_changes,
        }


def _check_resumed(row: dict[str, Any], where: Location, value: Any, output: Path) -> None:
    expected_id = record_id(value)
    if row.get("line") != where.line or row.get("instance_id") != expected_id:
        raise HopscoreError(
            f"{output}: a verdict is for line {row.get('line')} id {row.get('instance_id')!r}, "
            f"but that input row is line {where.line} id {expected_id!r}; this output belongs "
            "to another input (use another --output, or --restart)")


def run_sql_match(input_path: Path, output_path: Path, options: MatchOptions, *,
                  executor: SqlExecutor, restart: bool = False,
                  on_row: Callable[[dict[str, Any]], None] | None = None) -> Summary:
    """Grade every line of ``input_path`` into ``output_path`` (resuming unless ``restart``)."""
    options.check()
    rows = _input_rows(input_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    if restart and output_path.exists():
        output_path.unlink()
    done = read_done(output_path)
    summary = Summary(resumed=len(done), extract=options.extract)
    for row in done:
        where, value = next(rows, (None, None))
        if where is None:
            raise HopscoreError(f"{output_path} holds {len(done)} verdicts, more than the input "
                                "has rows; use another --output, or --restart")
        _check_resumed(row, where, value, output_path)
        summary.add(row)
    cache = GoldCache()
    window = max(2, executor.workers * 4)
    with output_path.open("a", encoding="utf-8") as out, \
            ThreadPoolExecutor(max_workers=executor.workers) as pool:
        futures: deque[Future[dict[str, Any]]] = deque()

        def submit_more() -> None:
            while len(futures) < window:
                where, value = next(rows, (None, None))
                if where is None:
                    return
                futures.append(pool.submit(_grade, where, value, options, executor, cache))

        submit_more()
        while futures:
            row = futures.popleft().result()
            out.write(_serialize(row, options))
            out.flush()
            summary.add(row)
            if on_row is not None:
                on_row(row)
            submit_more()
        os.fsync(out.fileno())
    return summary
