"""Reads see what SQLite sees: committed WAL content counts, and nothing changes under the db."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore.agent.tools import Toolset
from hopscore.sql.match_job import MatchOptions, run_sql_match
from hopscore.sql.observation import run_sql
from hopscore.sql.sandbox import SqlExecutor


class _NoSearch:
    label = "none"

    def search(self, query: str, count: int) -> list[object]:
        return []

    def fetch(self, url: str) -> str:
        return ""


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture
def wal_db(tmp_path: Path) -> Iterator[Path]:
    """``w/wal.sqlite`` in WAL mode: 1 row checkpointed into the file, 2 more committed in the
    ``-wal`` only (a writer still holds the database open, so nothing checkpoints them)."""
    folder = tmp_path / "w"
    folder.mkdir()
    path = folder / "wal.sqlite"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("CREATE TABLE t (x INTEGER, label TEXT)")
    writer.execute("INSERT INTO t VALUES (1, 'one')")
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO t VALUES (2, 'two')")
    writer.execute("INSERT INTO t VALUES (3, 'three')")
    assert (folder / "wal.sqlite-wal").stat().st_size > 0
    assert sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True).execute(
        "SELECT count(*) FROM t").fetchone() == (1,)  # what an immutable read sees
    yield path
    writer.close()


def test_sql_match_and_run_sql_see_committed_wal_rows(wal_db: Path, tmp_path: Path) -> None:
    before = snapshot(wal_db.parent)
    assert set(before) == {"wal.sqlite", "wal.sqlite-wal", "wal.sqlite-shm"}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({
        "instance_id": "w", "db_path": str(wal_db), "gold_sql": "SELECT count(*) FROM t",
        "response": "```sql\nSELECT 3\n```"}) + "\n")
    with SqlExecutor(2) as executor:
        summary = run_sql_match(source, tmp_path / "out.jsonl", MatchOptions(timeout_s=5),
                                executor=executor)
        observation = run_sql(executor, wal_db, "SELECT max(x) FROM t")
        tools = Toolset(db_path=wal_db, knowledge=None, search=_NoSearch(), executor=executor)
        agent = asyncio.run(tools.call("run_sql", {"sql": "SELECT label FROM t WHERE x = 3"}))
    assert summary.matched == 1
    assert observation.splitlines()[-1].strip() == "3"
    assert not agent.error and agent.text.splitlines()[-1].strip() == "three"
    assert snapshot(wal_db.parent) == before  # no file added, none changed


def test_verdicts_on_a_wal_database_equal_those_on_its_checkpointed_copy(
        wal_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    target = sqlite3.connect(copy)
    sqlite3.connect(wal_db).backup(target)
    target.close()
    queries = ["SELECT count(*) FROM t", "SELECT x, label FROM t ORDER BY x",
               "SELECT label FROM t WHERE x > 1", "SELECT sum(x) FROM t"]
    records = [{"instance_id": f"{i}-{j}", "gold_sql": gold,
                "response": f"```sql\n{agent}\n```"}
               for i, gold in enumerate(queries) for j, agent in enumerate(queries)]
    records.append({"instance_id": "three", "gold_sql": "SELECT 3",
                    "response": "```sql\nSELECT count(*) FROM t\n```"})

    def grade(db: Path, name: str) -> list[dict[str, object]]:
        source = tmp_path / f"{name}.jsonl"
        source.write_text("".join(json.dumps({**r, "db_path": str(db)}) + "\n" for r in records))
        output = tmp_path / f"{name}.out.jsonl"
        with SqlExecutor(1) as executor:
            run_sql_match(source, output, MatchOptions(timeout_s=5), executor=executor)
        return [{k: v for k, v in json.loads(line).items()
                 if k not in ("db_path", "key", "settings")}
                for line in output.read_text().splitlines()]

    on_wal = grade(wal_db, "wal")
    assert on_wal == grade(copy, "copy")
    assert [row["instance_id"] for row in on_wal if row["match"]] == [
        "0-0", "1-1", "2-2", "3-3", "three"]
