"""Grade one ``hopscore sql-match`` record: extract, resolve the database, run, compare.

Per record, in the reference's order: gold present, agent SQL extracted, database resolved,
gold query run, agent query run, tables compared. Any failure ends the record with a reason
(``missing_gold_sql``, ``agent_sql_extraction_failed``, ``sqlite_db_not_found: ...``,
``gold_sql_exec_error: ...``, ``agent_sql_exec_error: ...``).
"""

from __future__ import annotations

import string
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from hopscore.errors import HopscoreError
from hopscore.sql.compare import MODES, compare_tables
from hopscore.sql.extract import EXTRACT_MODES, Extraction, extract_sql
from hopscore.sql.order import reference_ordered, sqlite_ordered
from hopscore.sql.records import MatchRecord, Verdict, render_table
from hopscore.sql.sandbox import QueryResult, SqlExecutor

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
