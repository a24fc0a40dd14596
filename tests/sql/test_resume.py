"""sql-match resume is keyed by settings: a rerun never mixes two settings in one output."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hopscore.errors import InputError
from hopscore.sql.match_job import MatchOptions, run_sql_match
from hopscore.sql.sandbox import SqlExecutor
from tests.conftest import kill_cli_when, run_cli
from tests.sql.dbs import build_shop

FENCE = "```sql\n{}\n```"


def rows(n: int) -> list[dict[str, Any]]:
    """``n`` records whose verdict depends on the settings: the agent returns the gold's rows
    in another order plus a LIMIT, so bird and strict and a small --max-rows disagree."""
    out = []
    for i in range(n):
        gold = f"SELECT i, s FROM big WHERE i % {n} = {i} ORDER BY i"
        agent = f"SELECT i, s FROM big WHERE i % {n} = {i} ORDER BY i DESC"
        out.append({"instance_id": f"r{i}", "db": "shop", "gold_sql": gold,
                    "response": FENCE.format(agent)})
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    build_shop(tmp_path / "dbs" / "shop.sqlite")
    return tmp_path / "dbs"


def options(root: Path, **changes: Any) -> MatchOptions:
    settings: dict[str, Any] = {"db_template": "{db}.sqlite", "timeout_s": 5.0, **changes}
    return MatchOptions(db_root=root, **settings)


def test_a_resume_under_other_settings_grades_every_row_again(
        tmp_path: Path, root: Path, executor: SqlExecutor) -> None:
    source = write(tmp_path / "in.jsonl", rows(6))
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options(root, compare="bird"), executor=executor)
    lines = output.read_text().splitlines(keepends=True)
    output.write_text("".join(lines[:3]) + lines[3][:40])  # killed in the middle of row 4
    summary = run_sql_match(source, output, options(root, compare="strict", max_rows=5),
                            executor=executor)
    got = read(output)
    assert len(got) == 6 and summary.total == 6
    assert {r["compare"] for r in got} == {"strict"}
    assert {r["rows_truncated"]["gold"] for r in got} == {True}
    assert summary.regraded == 3 and summary.resumed == 0
    # The same settings again: nothing is graded, the file stays byte for byte.
    before = output.read_bytes()
    again = run_sql_match(source, output, options(root, compare="strict", max_rows=5),
                          executor=executor)
    assert (again.resumed, again.regraded) == (6, 0) and output.read_bytes() == before


def test_an_edited_line_is_graded_again(tmp_path: Path, root: Path,
                                        executor: SqlExecutor) -> None:
    records = rows(3)
    records[1]["gold_sql"] = "SELECT 1"
    source = write(tmp_path / "in.jsonl", records)
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options(root), executor=executor)
    assert [r["match"] for r in read(output)] == [True, False, True]
    records[1]["gold_sql"] = records[1]["response"][7:-4]  # the gold fixed in place
    write(source, records)
    summary = run_sql_match(source, output, options(root), executor=executor)
    assert [r["match"] for r in read(output)] == [True, True, True]
    assert (summary.resumed, summary.regraded) == (2, 1)
    # Lines moved: each moved line is graded again, nothing is duplicated or lost.
    write(source, [records[2], records[0], records[1]])
    summary = run_sql_match(source, output, options(root), executor=executor)
    assert [r["instance_id"] for r in read(output)] == ["r2", "r0", "r1"]
    assert [r["line"] for r in read(output)] == [1, 2, 3]
    assert summary.regraded == 3


def test_a_changed_database_is_graded_again(tmp_path: Path, root: Path,
                                            executor: SqlExecutor) -> None:
    source = write(tmp_path / "in.jsonl", [{
        "instance_id": "c", "db": "shop", "gold_sql": "SELECT count(*) FROM people",
        "response": FENCE.format("SELECT 6")}])
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options(root), executor=executor)
    assert read(output)[0]["match"] is True
    conn = sqlite3.connect(root / "shop.sqlite")
    with conn:
        conn.execute("DELETE FROM people WHERE id = 6")
    conn.close()
    summary = run_sql_match(source, output, options(root), executor=executor)
    assert read(output)[0]["match"] is False and summary.regraded == 1


@pytest.mark.parametrize("change", [
    {"timeout_s": 7.0}, {"compare": "rows"}, {"extract": "lenient"}, {"max_rows": 10},
    {"db_template": "{db}.sqlite?"},
])
def test_every_setting_is_part_of_the_key(change: dict[str, Any], tmp_path: Path, root: Path,
                                          executor: SqlExecutor) -> None:
    source = write(tmp_path / "in.jsonl", rows(2))
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options(root), executor=executor)
    if "db_template" in change:
        os.link(root / "shop.sqlite", root / "shop.sqlite?")
    summary = run_sql_match(source, output, options(root, **change), executor=executor)
    assert summary.regraded == 2 and summary.resumed == 0


def test_rows_without_keys_and_foreign_files(tmp_path: Path, root: Path,
                                             executor: SqlExecutor) -> None:
    source = write(tmp_path / "in.jsonl", rows(2))
    output = tmp_path / "out.jsonl"
    # A file from a hopscore version before keys: its rows are graded again.
    output.write_text(json.dumps({"instance_id": "r0", "line": 1, "judge_kind": "s2sql_exec",
                                  "match": False}) + "\n")
    summary = run_sql_match(source, output, options(root), executor=executor)
    assert summary.regraded == 1 and [r["match"] for r in read(output)] == [True, True]
    # A file that is not a verdict file is refused, and left as it was.
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"question": "q"}\n')
    with pytest.raises(InputError, match="not written by this command"):
        run_sql_match(source, foreign, options(root), executor=executor)
    assert foreign.read_text() == '{"question": "q"}\n'


@pytest.mark.slow
def test_sigkill_then_resume_with_other_settings(tmp_path: Path) -> None:
    build_shop(tmp_path / "dbs" / "shop" / "shop_template.sqlite")
    source = write(tmp_path / "in.jsonl", rows(60))
    output = tmp_path / "out.jsonl"
    base = ["sql-match", "-i", source, "-o", output, "--db-root", tmp_path / "dbs",
            "--workers", "2"]
    status = kill_cli_when(*base, "--compare", "bird", watched=output, lines=10)
    assert status == -9
    partial = read(output)
    assert 10 <= len(partial) < 60
    result = run_cli(*base, "--compare", "strict", "--max-rows", "5")
    assert result.returncode == 0, result.stderr
    assert f"holds {len(partial)} verdicts of other settings" in result.stderr
    got = read(output)
    assert [r["instance_id"] for r in got] == [f"r{i}" for i in range(60)]
    assert {r["compare"] for r in got} == {"strict"}
    reference = tmp_path / "uninterrupted.jsonl"
    assert run_cli("sql-match", "-i", source, "-o", reference, "--db-root", tmp_path / "dbs",
                   "--compare", "strict", "--max-rows", "5").returncode == 0

    def stable(path: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in ("db_path",)} for r in read(path)]

    assert stable(reference) == stable(output)
