"""Bounded grading: --timeout covers execution and comparison, --memory-mb the whole run, and
verdict rows are capped per cell and per row."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _cli_env, run_cli
from tests.sql.dbs import factorial_columns

FENCE = "```sql\n{}\n```"


def grade(tmp_path: Path, db: Path, records: list[dict[str, Any]], *options: str,
          ) -> tuple[list[dict[str, Any]], str, float]:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"instance_id": str(i), "db_path": str(db), **r}) + "\n"
                              for i, r in enumerate(records)))
    output = tmp_path / "out.jsonl"
    started = time.monotonic()
    result = run_cli("sql-match", "-i", source, "-o", output, "--workers", "1", *options)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    lines = output.read_bytes().splitlines()
    return [json.loads(line) for line in lines], result.stderr, elapsed


def build(path: Path, sql: str, rows: list[tuple[Any, ...]]) -> Path:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql)
        marks = ", ".join("?" * len(rows[0]))
        conn.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    conn.close()
    return path


def test_a_slow_comparison_ends_with_compare_timeout(tmp_path: Path) -> None:
    # 20,000 JSON cells in reverse order: the reference's pairwise walk is quadratic.
    db = build(tmp_path / "j.sqlite", "CREATE TABLE t (v TEXT)",
               [(json.dumps({"k": i, "s": "x" * (i % 7)}),) for i in range(20_000)])
    records = [
        {"gold_sql": "SELECT v FROM t", "response": FENCE.format(
            "SELECT v FROM t ORDER BY rowid DESC")},
        {"gold_sql": "SELECT 1", "response": FENCE.format("SELECT 1")},
    ]
    rows, stderr, elapsed = grade(tmp_path, db, records, "--timeout", "2")
    assert rows[0]["reason_kind"] == "compare_timeout" and rows[0]["match"] is False
    assert rows[0]["reason"].startswith("compare_timeout: ")
    assert rows[0]["gold_table"]["row_count"] == 20_000  # what finished is kept
    assert rows[1]["reason_kind"] == "exec_match"  # the run went on
    assert "1 row hit --timeout or --memory-mb" in stderr
    assert elapsed < 2 + 2 + 4  # the record's bound, plus two process starts


#: Runs a command as its only child and prints the peak resident size (KiB) of the largest
#: process of its tree: RUSAGE_CHILDREN of a fresh process sees only that command's processes.
PEAK = ("import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def test_a_result_beyond_the_memory_limit_is_result_too_large(tmp_path: Path) -> None:
    db = build(tmp_path / "s.sqlite", "CREATE TABLE t (x INTEGER)", [(1,)])
    big = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) "
           "SELECT x, printf('%.*c', 500, 'a') FROM c")
    records = [
        {"gold_sql": "SELECT x FROM t", "response": FENCE.format(big)},
        {"gold_sql": big, "response": FENCE.format("SELECT x FROM t")},
        {"gold_sql": "SELECT x FROM t", "response": FENCE.format("SELECT 1")},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"instance_id": str(i), "db_path": str(db), **r}) + "\n"
                              for i, r in enumerate(records)))
    output = tmp_path / "out.jsonl"
    measured = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "hopscore", "sql-match", "-i",
         str(source), "-o", str(output), "--workers", "1", "--memory-mb", "512",
         "--timeout", "60", "--max-rows", "5000000"],
        env=_cli_env(None), capture_output=True, text=True, timeout=300, check=True)
    code, peak_kib = map(int, measured.stdout.split())
    assert code == 0, measured.stderr
    stderr = measured.stderr
    rows = [json.loads(line) for line in output.read_bytes().splitlines()]
    peak_mib = peak_kib / 1024
    assert [r["reason_kind"] for r in rows] == ["result_too_large", "result_too_large",
                                                "exec_match"]
    assert "the agent's result" in rows[0]["reason"] and not rows[0]["gold_failure"]
    assert "the gold result" in rows[1]["reason"] and rows[1]["gold_failure"]
    assert peak_mib < 512  # no process of the run grew past the whole run's limit
    assert "2 rows hit --timeout or --memory-mb" in stderr


def test_cells_and_rows_are_capped(tmp_path: Path) -> None:
    db = tmp_path / "b.sqlite"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("CREATE TABLE t (id INTEGER, b BLOB, s TEXT)")
        for i in range(5):
            conn.execute("INSERT INTO t VALUES (?, ?, ?)",
                         (i, random.Random(i).randbytes(3_000_000), chr(65 + i) * 3_000_000))
    conn.close()
    records = [
        {"gold_sql": "SELECT b, s FROM t", "response": FENCE.format(
            "SELECT b, s FROM t ORDER BY id DESC")},
        {"gold_sql": "SELECT b FROM t", "response": FENCE.format("SELECT b FROM t WHERE id < 4 "
                                                                 "UNION ALL SELECT zeroblob(9)")},
    ]
    rows, stderr, _ = grade(tmp_path, db, records)
    sizes = [len(line) for line in (tmp_path / "out.jsonl").read_bytes().splitlines()]
    assert max(sizes) < 1_000_000
    first = rows[0]
    assert first["reason_kind"] == "exec_match" and first["truncated"] is True
    assert set(first["truncated_fields"]) == {"agent_table.cells", "gold_table.cells"}
    cell = first["agent_table"]["rows"][0][1]
    assert cell == "E" * 1000 + " … [3,000,000 chars]"
    blob = first["agent_table"]["rows"][0][0]
    assert blob["bytes"] == 3_000_000 and blob["truncated"] and len(blob["blob"]) == 1000
    assert rows[1]["reason_kind"] == "exec_mismatch"  # equal digests only for equal BLOBs
    assert "2 verdict rows were cut" in stderr
    # A smaller row cap drops the rows shown first, keeping the tables' sizes.
    (tmp_path / "out.jsonl").unlink()
    rows, _, _ = grade(tmp_path, db, records[:1], "--max-row-bytes", "5000")
    assert len((tmp_path / "out.jsonl").read_bytes()) <= 5001
    assert rows[0]["agent_table"]["rows"] == [] and rows[0]["agent_table"]["row_count"] == 5
    assert "agent_table.rows" in rows[0]["truncated_fields"] and rows[0]["match"] is True


def test_a_huge_agent_query_text_is_cut_in_the_row(tmp_path: Path) -> None:
    db = build(tmp_path / "s.sqlite", "CREATE TABLE t (x INTEGER)", [(1,)])
    sql = "SELECT x FROM t WHERE x IN (" + ", ".join(["1"] * 30_000) + ")"
    rows, _, _ = grade(tmp_path, db, [{"gold_sql": "SELECT x FROM t",
                                       "response": FENCE.format(sql)}],
                       "--max-row-bytes", "50000")
    assert rows[0]["match"] is True and rows[0]["truncated"] is True
    assert rows[0]["agent_sql"].endswith(f" … [{len(sql):,} chars]")
    assert len((tmp_path / "out.jsonl").read_bytes()) <= 50_001


def test_a_huge_instance_id_is_cut_and_the_row_resumes(tmp_path: Path) -> None:
    db = build(tmp_path / "s.sqlite", "CREATE TABLE t (x INTEGER)", [(1,)])
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"instance_id": "q" * 3_000_000, "db_path": str(db),
                                  "gold_sql": "SELECT x FROM t",
                                  "response": FENCE.format("SELECT x FROM t")}) + "\n")
    output = tmp_path / "out.jsonl"
    first = run_cli("sql-match", "-i", source, "-o", output, "--workers", "1")
    assert first.returncode == 0, first.stderr
    written = output.read_bytes()
    assert len(written) <= 1_000_001
    row = json.loads(written)
    assert row["match"] is True and row["truncated"] is True
    assert "instance_id" in row["truncated_fields"]
    again = run_cli("sql-match", "-i", source, "-o", output, "--workers", "1")
    assert again.returncode == 0 and "resumed: 1 row was" in again.stderr
    assert output.read_bytes() == written


@pytest.mark.slow
def test_the_factorial_alignment_case_through_the_cli(tmp_path: Path) -> None:
    n = 20_000
    gold_columns, agent_columns = factorial_columns(n)
    db = build(tmp_path / "f.sqlite", "CREATE TABLE t (" + ", ".join(
        f"{side}{k} INTEGER" for side in "ga" for k in range(8)) + ")",
        [tuple(gold_columns[k][r] if k < 5 else 0 for k in range(8))
         + tuple(agent_columns[k][r] for k in range(8)) for r in range(n)])
    records = [{"gold_sql": "SELECT g0, g1, g2, g3, g4 FROM t", "response": FENCE.format(
        "SELECT " + ", ".join(f"a{k}" for k in range(8)) + " FROM t")}]
    rows, _, _ = grade(tmp_path, db, records, "--timeout", "30")
    assert rows[0]["reason_kind"] == "exec_match"
    assert "rows_mode_mismatch" in rows[0]["flags"]
    rows, _, _ = grade(tmp_path, db, records, "--timeout", "30", "--compare", "rows")
    assert rows[0]["reason_kind"] == "exec_mismatch"
