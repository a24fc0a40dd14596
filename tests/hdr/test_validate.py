"""hopscore validate-predictions: the reference validator's checks, on every line, plus more."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.agent.validate import check_s2sql_answer, validate_predictions
from hopscore.benchmarks.agent_tasks import read_tasks
from hopscore.errors import InputError
from tests.conftest import run_cli
from tests.hdr.world import TASKS, write_jsonl

FENCED = "```sql\nSELECT name FROM products\n```"


def write_lines(path: Path, lines: list[str], raw: bytes = b"") -> Path:
    path.write_bytes(raw + "\n".join(lines).encode("utf-8") + b"\n")
    return path


def messages(path: Path, tasks_file: Path | None = None) -> list[tuple[str, str, str]]:
    tasks = read_tasks(tasks_file) if tasks_file else None
    report = validate_predictions(path, tasks, tasks_source=str(tasks_file))
    return [(f.severity, f.where.rsplit(":", 1)[-1], f.message) for f in report.findings]


def test_valid_file(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"instance_id": "sql2s_001", "final_answer": "Springfield"},
        {"instance_id": "s2sql_001", "final_answer": f"Here it is:\n{FENCED}"}])
    report = validate_predictions(path)
    assert report.ok and not report.findings and len(report.ids) == 2


def test_reference_checks_all_reported_at_once(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", [
        '{"instance_id": "sql2s_1", "final_answer": "a"}',
        "",
        "{not json",                                                      # 3 parse
        "[1]",                                                            # 4 type
        '{"instance_id": "sql2s_2", "final_answer": "a", "zeta": 1, "alpha": 2}',  # 5 extra
        '{"instance_id": "", "final_answer": "a"}',                       # 6 id empty
        '{"instance_id": 7, "final_answer": "a"}',                        # 7 id type
        '{"instance_id": "sql2s_1", "final_answer": "b"}',                # 8 duplicate
        '{"instance_id": "sql2s_3"}',                                     # 9 missing answer
        '{"instance_id": "sql2s_4", "final_answer": 5}',                  # 10 answer type
        '{"instance_id": "sql2s_5", "final_answer": "  "}',               # 11 empty answer
        '{"instance_id": "sql2s_6", "final_answer": null, "x": 1}',       # 12 two problems
    ])
    found = messages(path)
    expected = [
        ("3", "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        ("4", "expected a JSON object, got list"),
        ("5", "unexpected fields: alpha, zeta"),
        ("6", "instance_id must be a non-empty string"),
        ("7", "instance_id must be a non-empty string"),
        ("8", "duplicate instance_id 'sql2s_1' (first at line 1)"),
        ("9", "missing final_answer"),
        ("10", "final_answer must be a string, got number"),
        ("11", "final_answer must not be empty"),
        ("12", "unexpected fields: x"),
        ("12", "final_answer must be a string, got null"),
    ]
    assert [(line, message) for _, line, message in found] == expected
    assert all(severity == "error" for severity, _, _ in found)


def test_empty_file(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", ["", "   "])
    assert messages(path) == [("error", str(path).rsplit(":", 1)[-1],
                               "no prediction records found")]


def test_bom_encoding_duplicate_keys_and_whitespace_ids(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", [
        '{"instance_id": "sql2s_1", "final_answer": "a"}',
        '{"instance_id": "sql2s_2 ", "final_answer": "a"}',
        '{"instance_id": " sql2s_2", "final_answer": "a"}',
        '{"instance_id": "sql2s_3", "final_answer": "a", "final_answer": "b"}',
    ], raw=b"\xef\xbb\xbf")
    path.write_bytes(path.read_bytes() + b'{"instance_id": "sql2s_4", "final_answer": "\xff"}\n')
    found = [(line, message) for _, line, message in messages(path)]
    assert found[0] == ("1", "the file starts with a UTF-8 byte order mark; the reference "
                             "validator cannot parse this line")
    assert ("2", "instance_id 'sql2s_2 ' has leading or trailing whitespace; it would never "
                 "match a task id") in found
    assert ("3", "duplicate instance_id ' sql2s_2': the same id as 'sql2s_2 ' at line 2 once "
                 "whitespace is stripped") in found
    assert ("4", "key 'final_answer' appears twice in the object") in found
    assert ("5", "not valid UTF-8 (byte 45)") in found
    assert len(found) == 6  # line 3 also has whitespace


def test_family_prefix_without_tasks(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"instance_id": "task_1", "final_answer": "a"}])
    assert messages(path) == [("error", "1", "instance_id 'task_1' has none of the HDR family "
                               "prefixes (s2sql_, sql2s_, parallel_)")]


def test_against_the_task_set(tmp_path: Path) -> None:
    tasks = write_jsonl(tmp_path / "tasks.jsonl", TASKS)
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"instance_id": "sql2s_001", "final_answer": "Springfield"},
        {"instance_id": "sql2s_999", "final_answer": "x"},
        {"instance_id": "s2sql_001", "final_answer": "SELECT name FROM products"},
    ])
    found = messages(path, tasks)
    assert ("error", "2", f"instance_id 'sql2s_999' is not a task of {tasks}") in found
    assert ("error", "3", "S2SQL answer has no fenced ```sql block; the grader cannot extract a "
                          "query from it") in found
    missing = [m for s, _, m in found if m.startswith("no prediction")]
    assert missing == ["no prediction for 1 of 2 S2SQL tasks: s2sql_002",
                       "no prediction for 1 of 1 Parallel tasks: parallel_001"]
    report = validate_predictions(path, read_tasks(tasks), allow_missing=True)
    assert {f.severity for f in report.findings if f.code == "missing_task"} == {"warning"}


@pytest.mark.parametrize(("answer", "expected"), [
    (FENCED, None),
    ("```SQL\nSELECT 1\n```", None),
    ("```sql\nSELECT 1; SELECT 2\n```", ("warning", "s2sql_query")),
    ("```sql\nDELETE FROM t\n```", ("warning", "s2sql_query")),
    ("```\nSELECT 1\n```", ("warning", "s2sql_fence")),
    ("```sqlite\nSELECT 1\n```", ("error", "s2sql_fence")),
    ("SELECT 1", ("error", "s2sql_fence")),
    ("```sql\n   \n```", ("error", "s2sql_fence")),
])
def test_s2sql_answers(answer: str, expected: tuple[str, str] | None) -> None:
    finding = check_s2sql_answer(answer)
    assert (finding[:2] if finding else None) == expected


def test_cli(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [{"instance_id": "sql2s_1", "final_answer": "a"}])
    result = run_cli("validate-predictions", good)
    assert result.returncode == 0
    assert result.stdout.strip() == f"OK: 1 unique prediction record in {good}"
    bad = write_lines(tmp_path / "bad.jsonl", ['{"instance_id": "sql2s_1"}', "{", "3"])
    out = tmp_path / "report.json"
    result = run_cli("validate-predictions", bad, "--json", out)
    assert result.returncode == 1
    assert f"error: {bad}:1: missing final_answer" in result.stdout
    assert f"error: {bad}:2: invalid JSON" in result.stdout
    assert f"error: {bad}:3: expected a JSON object, got number" in result.stdout
    assert "FAILED: 3 errors, 0 warnings" in result.stdout
    report = json.loads(out.read_text())
    assert report["errors"] == 3 and not report["ok"]
    missing = run_cli("validate-predictions", tmp_path / "nope.jsonl")
    assert missing.returncode == 2 and "file not found" in missing.stderr
    with pytest.raises(InputError):
        validate_predictions(tmp_path)
