"""The executor: read by position, never truncate silently, never write, never hang."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from hopscore.sql.query import database_uri, run_query
from hopscore.sql.sandbox import ERROR_PREFIXES, SqlExecutor
from tests.sql.dbs import BIG_ROWS, build_shop, file_digest

TIMEOUT = 1.0

HOSTILE = {
    "delete": "DELETE FROM people",
    "insert": "INSERT INTO people (id) VALUES (100)",
    "update": "UPDATE people SET age = 0",
    "drop": "DROP TABLE people",
    "create": "CREATE TABLE t (x)",
    "create_temp": "CREATE TEMP TABLE t (x)",
    "alter": "ALTER TABLE people ADD COLUMN z",
    "attach": "ATTACH DATABASE 'evil.sqlite' AS evil",
    "attach_select": "SELECT * FROM (SELECT 1) -- harmless\n; ATTACH 'evil.sqlite' AS e",
    "detach": "DETACH DATABASE main",
    "vacuum": "VACUUM",
    "vacuum_into": "VACUUM INTO 'copy.sqlite'",
    "pragma_write": "PRAGMA user_version = 7",
    "pragma_journal": "PRAGMA journal_mode = WAL",
    "load_extension": "SELECT load_extension('libevil')",
    "two_statements": "SELECT 1; DELETE FROM people",
    "transaction": "BEGIN IMMEDIATE",
    "savepoint": "SAVEPOINT s",
    "reindex": "REINDEX",
    "analyze": "ANALYZE",
    "endless_cte": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                   "SELECT count(*) FROM c",
    "cross_join": "SELECT count(*) FROM big a, big b, big c",
    "nul_byte": "SELECT 1\x00; DROP TABLE people",
    "lone_surrogate": "SELECT '\ud83d'",
    "huge_query": "SELECT 1 WHERE 1 IN (" + ",".join(str(i) for i in range(40_000)) + ") "
                  "AND 0",
    "huge_write": "SELECT 1 /* " + "x" * 200_000 + " */; DROP TABLE people",
    "huge_literal_write": "DELETE FROM people WHERE name = '" + "y" * 200_000 + "'",
    "huge_blob": "SELECT randomblob(1000000000)",
    "explain_write": "EXPLAIN DELETE FROM people",
}


@pytest.fixture(scope="module")
def hostile_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    build_shop(root / "shop.sqlite")
    return root


def _start_every_worker(executor: SqlExecutor, db: Path) -> None:
    """Have every worker of ``executor`` running, so that a timed query does not also time the
    start of a worker (a Python process importing numpy: seconds on a busy 2-core machine).
    Idle workers are handed out in turn, so ``workers`` trivial queries reach every slot."""
    for _ in range(executor.workers):
        assert executor.execute(db, "SELECT 1").ok
    assert len(executor.worker_pids()) == executor.workers


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_query_cannot_write_or_hang(name: str, hostile_root: Path,
                                            executor: SqlExecutor) -> None:
    db = hostile_root / "shop.sqlite"
    before = file_digest(db)
    _start_every_worker(executor, db)
    # huge_query is not hostile to the clock: it is checked for running at all, so a busy
    # machine's pause must not turn it into a timeout
    timeout = 60.0 if name == "huge_query" else TIMEOUT
    started = time.monotonic()
    result = executor.execute(db, HOSTILE[name], timeout_s=timeout, max_rows=10)
    elapsed = time.monotonic() - started
    assert file_digest(db) == before
    assert sorted(p.name for p in hostile_root.iterdir()) == ["shop.sqlite"]
    assert elapsed < timeout + executor.kill_grace_s + 3
    if name == "huge_query":
        assert result.ok and result.rows == [], result  # 240 KB of SQL runs fine
        return
    assert not result.ok, result
    assert result.error and result.error.startswith(ERROR_PREFIXES)
    if name in ("endless_cte", "cross_join"):
        assert result.kind == "timeout"
        assert result.error == "Query timed out after 1s."


@pytest.mark.parametrize("name", sorted(
    n for n in HOSTILE if n not in ("nul_byte", "lone_surrogate", "huge_query")))
def test_authorizer_alone_refuses(name: str, hostile_root: Path) -> None:
    """Without the statement check, the worker's own defences still refuse every write."""
    db = hostile_root / "shop.sqlite"
    before = file_digest(db)
    reply = run_query(str(db), HOSTILE[name], 10, TIMEOUT)
    assert not reply["ok"], reply
    assert file_digest(db) == before
    assert sorted(p.name for p in hostile_root.iterdir()) == ["shop.sqlite"]


def test_columns_are_read_by_position(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(shop_db, "SELECT 1 AS id, 2 AS id, 3 AS Name, 4 AS name")
    assert result.ok
    assert result.columns == ("id", "id", "Name", "name")
    assert result.rows == [(1, 2, 3, 4)]
    assert result.duplicate_column_names


def test_join_with_repeated_names(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(
        shop_db, "SELECT p.id, o.id FROM people p JOIN orders o ON o.person_id = p.id "
        "WHERE p.id = 1 ORDER BY o.id")
    assert result.rows == [(1, 1), (1, 2)]


def test_empty_result_keeps_column_names(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(shop_db, "SELECT name, age FROM people WHERE id = 99")
    assert result.ok and result.rows == [] and result.columns == ("name", "age")


def test_cell_types(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(shop_db, "SELECT name, age, score, avatar, profile, joined "
                                       "FROM people WHERE id IN (1, 3) ORDER BY id")
    assert result.rows[0] == ("Walter White", 50, 3.14159, b"\x00\x01",
                              '{"job": "teacher", "kids": 2}', "2008-01-20")
    assert result.rows[1][1] is None and result.rows[1][3] is None


def test_no_silent_truncation(shop_db: Path, executor: SqlExecutor) -> None:
    full = executor.execute(shop_db, "SELECT i FROM big", max_rows=100_000)
    assert full.ok and full.row_count == BIG_ROWS and not full.truncated
    capped = executor.execute(shop_db, "SELECT i FROM big", max_rows=500)
    assert capped.row_count == 500 and capped.truncated
    exact = executor.execute(shop_db, "SELECT i FROM big LIMIT 500", max_rows=500)
    assert exact.row_count == 500 and not exact.truncated


def test_endless_stream_is_truncated_not_hung(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(
        shop_db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
        max_rows=1000, timeout_s=TIMEOUT)
    assert result.ok and result.truncated and result.row_count == 1000


def test_worker_that_ignores_its_deadline_is_killed(shop_db: Path) -> None:
    # instr() on long strings is one SQLite operation: the progress handler never runs.
    slow = "SELECT instr(hex(zeroblob(2000000)) || '1', hex(zeroblob(200000)) || '1')"
    with SqlExecutor(1, kill_grace_s=0.5) as ex:
        started = time.monotonic()
        result = ex.execute(shop_db, slow, timeout_s=0.3)
        assert time.monotonic() - started < 5
        assert result.kind == "killed" and result.error.startswith("Query killed")
        after = ex.execute(shop_db, "SELECT 42")  # a fresh worker takes over
        assert after.ok and after.rows == [(42,)]


def test_memory_limit(shop_db: Path) -> None:
    big = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 400000) "
           "SELECT x, printf('%.*c', 2000, 'a') FROM c")
    with SqlExecutor(1, memory_mb=300, max_result_mb=4096) as ex:
        result = ex.execute(shop_db, big, max_rows=1_000_000, timeout_s=30)
        assert not result.ok
        assert result.kind == "memory", result
        assert result.error == ("Query ran out of memory (limit 160 MiB per worker, "
                                "--memory-mb 300).")
        assert ex.execute(shop_db, "SELECT 1").ok


def test_result_size_limit(shop_db: Path) -> None:
    with SqlExecutor(1, max_result_mb=1) as ex:
        result = ex.execute(shop_db, "SELECT printf('%.*c', 100, 'x') FROM big",
                            max_rows=100_000)
        assert result.kind == "too_large" and result.error.startswith("Query result too large")


def test_missing_database_and_odd_paths(tmp_path: Path, executor: SqlExecutor) -> None:
    missing = executor.execute(tmp_path / "nope.sqlite", "SELECT 1")
    assert missing.kind == "not_found" and missing.error.startswith("Database file not found: ")
    odd = tmp_path / "a dir?#%" / "we?ird#name%20.sqlite"
    build_shop(odd)
    result = executor.execute(odd, "SELECT count(*) FROM people")
    assert result.ok and result.rows == [(6,)]
    assert "%3F" in database_uri(str(odd)) and "mode=ro&immutable=1" in database_uri(str(odd))


def test_leftover_journal_is_ignored(tmp_path: Path, executor: SqlExecutor) -> None:
    db = build_shop(tmp_path / "j.sqlite")
    (tmp_path / "j.sqlite-journal").write_bytes(b"garbage")
    result = executor.execute(db, "SELECT count(*) FROM orders")
    assert result.ok and result.rows == [(6,)]


def test_sql_errors_keep_reference_prefixes(shop_db: Path, executor: SqlExecutor) -> None:
    result = executor.execute(shop_db, "SELECT nope FROM people")
    assert result.error == "SQL error: no such column: nope"
    bad = executor.execute(shop_db, "SELECT 'unterminated")
    assert bad.error is not None and bad.error.startswith("SQL error: ")


def test_read_only_introspection_is_allowed(shop_db: Path, executor: SqlExecutor) -> None:
    assert executor.execute(shop_db, "PRAGMA table_info(people)").row_count == 9
    assert executor.execute(shop_db, "SELECT name FROM pragma_table_info('people')").ok
    assert executor.execute(shop_db, "PRAGMA user_version").rows == [(0,)]
    assert executor.execute(shop_db, "SELECT json_extract(profile, '$.job') FROM people "
                                     "WHERE id = 1").rows == [("teacher",)]


def test_threads_share_the_workers(shop_db: Path, executor: SqlExecutor) -> None:
    results: list[object] = []

    def work(n: int) -> None:
        results.append(executor.execute(shop_db, f"SELECT {n}").rows)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r[0][0] for r in results) == list(range(12))  # type: ignore[index]


def test_executor_matches_plain_sqlite(shop_db: Path, executor: SqlExecutor) -> None:
    query = "SELECT id, name, score, avatar FROM people ORDER BY id"
    with sqlite3.connect(shop_db) as conn:
        expected = conn.execute(query).fetchall()
    assert executor.execute(shop_db, query).rows == expected


def test_closed_executor_refuses(shop_db: Path) -> None:
    ex = SqlExecutor(1)
    ex.close()
    with pytest.raises(RuntimeError):
        ex.execute(shop_db, "SELECT 1")
