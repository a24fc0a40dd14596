"""HDR task files: the release JSONL, category folders, the v2 overlay, and hdr-tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks.agent_tasks import (
    CATEGORY_FILES,
    family_counts,
    load_tasks,
    read_tasks,
    tasks_jsonl,
)
from hopscore.errors import HopscoreError
from tests.conftest import run_cli
from tests.hdr.world import write_jsonl


def task(task_id: str, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"id": task_id, "final_question": f"question of {task_id}",
                              "hint": "", "db": "shop", "final_answer": f"answer {task_id}"}
    record.update(fields)
    return record


def category_root(root: Path, s2sql: list[dict[str, Any]], sql2s: list[dict[str, Any]],
                  parallel: list[dict[str, Any]]) -> Path:
    for name, rows in zip(CATEGORY_FILES, (s2sql, sql2s, parallel), strict=True):
        if rows is not None:
            write_jsonl(root / name, rows)
    return root


def test_release_file_families_from_type_or_prefix(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "release.jsonl", [
        task("s2sql_1", hybrid_type="search_to_sql", sql="SELECT 1"),
        task("sql2s_1"), task("parallel_1", hint="look twice")])
    tasks = read_tasks(path)
    assert [t.family.label for t in tasks] == ["S2SQL", "SQL2S", "Parallel"]
    assert tasks[0].gold == "SELECT 1" and tasks[1].gold == "answer sql2s_1"
    assert tasks[2].hint == "look twice"
    assert list(tasks[1].record)[:2] == ["id", "hybrid_type"]
    assert family_counts(tasks) == {"S2SQL": 1, "SQL2S": 1, "Parallel": 1}


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    lines = [
        json.dumps(task("sql2s_1")),
        json.dumps(task("sql2s_1")),                                # duplicate
        json.dumps(task(" sql2s_2")),                               # whitespace
        json.dumps(task("parallel_9", hybrid_type="search_to_sql")),  # prefix vs type
        json.dumps(task("other_1")),                                # no family
        json.dumps(task("sql2s_3", db="../etc")),                   # not a db name
        json.dumps(task("sql2s_4", final_question="")),
        json.dumps(task("sql2s_5", hint=3)),
        "[1, 2]",
    ]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(HopscoreError) as info:
        read_tasks(path)
    text = str(info.value)
    assert "8 problems" in text
    for line, words in [(2, "duplicate id 'sql2s_1'"), (3, "leading or trailing whitespace"),
                        (4, "lacks the S2SQL prefix"), (5, "none of the prefixes"),
                        (6, "'db'"), (7, "'final_question'"), (8, "field 'hint'"),
                        (9, "expected a JSON object")]:
        assert f"bad.jsonl:{line}" in text and words in text


def test_invalid_json_line_is_located(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(task("sql2s_1")) + "\n{oops\n")
    with pytest.raises(HopscoreError, match=r"t.jsonl:2: invalid JSON"):
        read_tasks(path)


def test_category_folder_in_builder_order(tmp_path: Path) -> None:
    root = category_root(tmp_path / "v1", [task("s2sql_1", sql="SELECT 1")],
                         [task("sql2s_1"), task("sql2s_2")], [task("parallel_1")])
    tasks = read_tasks(root)
    assert [t.id for t in tasks] == ["s2sql_1", "sql2s_1", "sql2s_2", "parallel_1"]
    assert tasks[1].hybrid_type == "sql_to_search"


def test_category_file_type_must_agree(tmp_path: Path) -> None:
    root = category_root(tmp_path / "v1", [task("s2sql_1", hybrid_type="parallel")],
                         [task("sql2s_1")], [task("parallel_1")])
    with pytest.raises(HopscoreError, match="but this is the search_to_sql file"):
        read_tasks(root)


def test_missing_category_file(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "v1" / CATEGORY_FILES[0], [task("s2sql_1")])
    with pytest.raises(HopscoreError, match="missing the category file"):
        read_tasks(tmp_path / "v1")


def test_overlay_replaces_whole_records_in_base_order(tmp_path: Path) -> None:
    v1 = category_root(tmp_path / "v1", [task("s2sql_1", sql="SELECT 1")],
                       [task("sql2s_1"), task("sql2s_2")], [task("parallel_1")])
    v2 = tmp_path / "v2"
    # a sparse patch: only the SQL2S file, one rewritten question (whole record)
    write_jsonl(v2 / CATEGORY_FILES[1], [{"id": "sql2s_2", "final_question": "clearer question",
                                           "hint": "", "db": "shop"}])
    tasks, merged = load_tasks(v1, v2)
    assert [t.id for t in tasks] == ["s2sql_1", "sql2s_1", "sql2s_2", "parallel_1"]
    assert tasks[2].final_question == "clearer question"
    assert tasks[2].final_answer is None  # whole replacement, not a field diff
    assert merged is not None and merged.overrides == {"S2SQL": 0, "SQL2S": 1, "Parallel": 0}


def test_overlay_errors(tmp_path: Path) -> None:
    v1 = write_jsonl(tmp_path / "v1.jsonl", [task("sql2s_1"), task("parallel_1")])
    patch = write_jsonl(tmp_path / "v2.jsonl", [
        task("sql2s_9", final_question="new"),                     # unknown id
        task("sql2s_1"),                                            # unchanged
    ])
    with pytest.raises(HopscoreError) as info:
        load_tasks(v1, patch)
    text = str(info.value)
    assert "2 problems in the overlay" in text
    assert "v2.jsonl:1" in text and "'sql2s_9' is not a task of the base set" in text
    assert "v2.jsonl:2" in text and "unchanged record" in text
    duplicate = write_jsonl(tmp_path / "v2b.jsonl", [task("sql2s_1", final_question="a"),
                                                     task("sql2s_1", final_question="b")])
    with pytest.raises(HopscoreError, match=r"v2b\.jsonl:2: field 'id': duplicate id"):
        load_tasks(v1, duplicate)


def test_overlay_counts_unchanged_even_when_type_is_added(tmp_path: Path) -> None:
    """A v1 release record carries hybrid_type; the same record without it is unchanged."""
    v1 = write_jsonl(tmp_path / "v1.jsonl", [task("sql2s_1", hybrid_type="sql_to_search")])
    patch = write_jsonl(tmp_path / "v2.jsonl", [task("sql2s_1")])
    with pytest.raises(HopscoreError, match="unchanged record"):
        load_tasks(v1, patch)


def test_written_tasks_read_back_identically(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [task("sql2s_1", extra="é"), task("parallel_1")])
    tasks = read_tasks(path)
    text = tasks_jsonl(tasks)
    assert "é" in text  # no ASCII escaping
    again = write_jsonl(tmp_path / "again.jsonl", [json.loads(line) for line in
                                                  text.splitlines()])
    assert [t.record for t in read_tasks(again)] == [t.record for t in tasks]


def test_hdr_tasks_command(tmp_path: Path) -> None:
    v1 = write_jsonl(tmp_path / "v1.jsonl", [task("sql2s_1"), task("parallel_1"),
                                             task("s2sql_1", sql="SELECT 1")])
    patch = write_jsonl(tmp_path / "v2.jsonl", [task("parallel_1", final_question="better")])
    out = tmp_path / "release.jsonl"
    result = run_cli("hdr-tasks", v1, "--overlay", patch, "--output", out)
    assert result.returncode == 0, result.stderr
    assert "Parallel" in result.stdout and "sha256" in result.stdout
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [
        "sql2s_1", "parallel_1", "s2sql_1"]
    bad = run_cli("hdr-tasks", tmp_path / "missing.jsonl")
    assert bad.returncode == 2 and "not found" in bad.stderr
