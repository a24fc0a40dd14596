"""The sql-match pipeline: reasons, output rows, resume, never aborting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.errors import HopscoreError, Location
from hopscore.sql import evaluate as evaluate_module
from hopscore.sql import match_job
from hopscore.sql.match_job import MatchOptions, evaluate, read_done, run_sql_match
from hopscore.sql.records import parse_record
from hopscore.sql.sandbox import SqlExecutor

FENCE = "```sql\n{}\n```"


def record(**fields: Any):
    data = {"instance_id": "x", "db": "shop", **fields}
    return parse_record(data, Location("in.jsonl", line=1))


@pytest.fixture
def options(shop_root: Path) -> MatchOptions:
    return MatchOptions(db_root=shop_root, db_template="{db}.sqlite", timeout_s=5)


def test_reasons(options: MatchOptions, executor: SqlExecutor) -> None:
    def grade(**fields: Any) -> str:
        return evaluate(record(**fields), options, executor).reason

    assert grade(gold_sql="", response=FENCE.format("SELECT 1")) == "missing_gold_sql"
    assert grade(gold_sql="SELECT 1", response="no sql") == "agent_sql_extraction_failed"
    assert grade(gold_sql="SELECT 1", response=FENCE.format("SELECT 1"), db="nope") \
        .startswith("sqlite_db_not_found: ")
    assert grade(gold_sql="SELECT nope", response=FENCE.format("SELECT 1")) == \
        "gold_sql_exec_error: SQL error: no such column: nope"
    assert grade(gold_sql="SELECT 1", response=FENCE.format("SELECT nope")) == \
        "agent_sql_exec_error: SQL error: no such column: nope"
    assert grade(gold_sql="SELECT 1", response=FENCE.format("SELECT 1")) == "exec_match"
    assert grade(gold_sql="SELECT 1", response=FENCE.format("SELECT 2")) == \
        "exec_mismatch: raw_score=0.000 col_precision=0.000 col_recall=0.000"
    assert grade(gold_sql="SELECT 1", response=FENCE.format("SELECT 1"), db="../shop") \
        .startswith("invalid_db_name")
    no_root = MatchOptions(db_root=None)
    assert evaluate(record(gold_sql="SELECT 1", response=FENCE.format("SELECT 1")), no_root,
                    executor).reason == match_job.NEEDS_DB


def test_verdict_fields(options: MatchOptions, executor: SqlExecutor, shop_db: Path) -> None:
    verdict = evaluate(record(
        gold_sql="SELECT p.id, o.id, p.avatar FROM people p JOIN orders o ON o.person_id = p.id "
                 "WHERE p.id = 1 ORDER BY o.id",
        response=FENCE.format("SELECT p.id, o.id, p.avatar FROM people p JOIN orders o "
                              "ON o.person_id = p.id WHERE p.id = 1 ORDER BY o.id"),
        db_path=str(shop_db)), options, executor).to_json()
    assert verdict["match"] and verdict["order_sensitive"] and verdict["order_sensitive_sqlite"]
    assert verdict["gold_table"]["columns"] == ["id", "id", "avatar"]
    assert verdict["gold_table"]["rows"] == [[1, 1, {"blob": "0001"}], [1, 2, {"blob": "0001"}]]
    assert "duplicate_column_names" in verdict["flags"]
    assert verdict["decided_by"] == "columns" and verdict["alignment"]
    json.dumps(verdict, allow_nan=False)


def test_truncation_is_flagged(options: MatchOptions, executor: SqlExecutor) -> None:
    small = MatchOptions(db_root=options.db_root, db_template="{db}.sqlite", max_rows=100,
                         table_rows=3)
    verdict = evaluate(record(gold_sql="SELECT i FROM big", response=FENCE.format(
        "SELECT i FROM big")), small, executor)
    assert verdict.match and verdict.rows_truncated == {"agent": True, "gold": True}
    assert "rows_truncated" in verdict.flags
    assert verdict.agent_table is not None and verdict.agent_table["rows_shown"] == 3
    full = evaluate(record(gold_sql="SELECT i, s FROM big", response=FENCE.format(
        "SELECT i, CASE WHEN i < 10000 THEN s ELSE 'x' END FROM big")), options, executor)
    assert not full.match and full.rows_truncated == {"agent": False, "gold": False}


def write_input(path: Path, rows: list[Any]) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


ROWS: list[Any] = [
    {"instance_id": "a", "db": "shop", "gold_sql": "SELECT name FROM people",
     "response": FENCE.format("SELECT name FROM people ORDER BY name")},
    {"instance_id": "b", "db": "shop", "gold_sql": "SELECT 1", "response": "none"},
    "{broken json",
    "",
    {"id": 7, "db": "shop", "sql": "SELECT nope", "final_answer": FENCE.format("SELECT 1")},
    {"instance_id": "d", "db": "shop", "gold_sql": "SELECT 1", "messages": "not a list"},
    ["not", "an", "object"],
    {"instance_id": "e", "db": "shop", "gold_sql": "SELECT 2",
     "response": FENCE.format("SELECT 2")},
]


def test_run_writes_one_row_per_input_row(tmp_path: Path, options: MatchOptions,
                                          executor: SqlExecutor) -> None:
    source = write_input(tmp_path / "in.jsonl", ROWS)
    output = tmp_path / "out.jsonl"
    summary = run_sql_match(source, output, options, executor=executor)
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 3, 5, 6, 7, 8]
    assert [r["instance_id"] for r in rows] == ["a", "b", None, 7, "d", None, "e"]
    assert [r["reason_kind"] for r in rows] == [
        "exec_match", "agent_sql_extraction_failed", "invalid_input", "gold_sql_exec_error",
        "invalid_input", "invalid_input", "exec_match"]
    assert "in.jsonl:3: invalid JSON" in rows[2]["reason"]
    assert "field 'messages'" in rows[4]["reason"]
    assert summary.total == 7 and summary.matched == 2 and summary.gold_failures == 1
    assert summary.accuracy == pytest.approx(2 / 7)
    assert summary.accuracy_without_gold_failures == pytest.approx(2 / 6)
    assert summary.reasons["invalid_input"] == 3 and summary.undecided == 3
    assert rows[2]["match"] is None and rows[2]["score"] is None


def test_internal_error_does_not_abort(tmp_path: Path, options: MatchOptions,
                                       executor: SqlExecutor,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"n": 0}
    real = evaluate_module.reference_ordered

    def flaky(*args: Any, **kwargs: Any):
        calls["n"] += 1
        if calls["n"] == 1:
            raise ZeroDivisionError("boom")
        return real(*args, **kwargs)

    monkeypatch.setattr(evaluate_module, "reference_ordered", flaky)
    source = write_input(tmp_path / "in.jsonl", [ROWS[0], ROWS[7]])
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options, executor=executor)
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    kinds = sorted(r["reason_kind"] for r in rows)
    assert kinds == ["exec_match", "internal_error"]
    assert any("ZeroDivisionError: boom" in r["reason"] for r in rows)


def test_resume_after_a_torn_line(tmp_path: Path, options: MatchOptions,
                                  executor: SqlExecutor) -> None:
    source = write_input(tmp_path / "in.jsonl", ROWS)
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options, executor=executor)
    full = output.read_text().splitlines(keepends=True)
    output.write_text("".join(full[:3]) + full[3][:25])  # a crash in the middle of line 4
    assert len(read_done(output)) == 3 and output.read_text() == "".join(full[:3])
    output.write_text("".join(full[:3]) + full[3][:25])
    summary = run_sql_match(source, output, options, executor=executor)
    assert summary.resumed == 3 and summary.total == 7
    again = output.read_text().splitlines(keepends=True)
    assert [json.loads(x)["line"] for x in again] == [json.loads(x)["line"] for x in full]
    # Running once more grades nothing new.
    assert run_sql_match(source, output, options, executor=executor).resumed == 7
    assert output.read_text().splitlines(keepends=True) == again


@pytest.mark.parametrize("template", ["{name}.sqlite", "{db", "plain.sqlite"])
def test_bad_template(template: str, tmp_path: Path, executor: SqlExecutor) -> None:
    source = write_input(tmp_path / "in.jsonl", ROWS[:1])
    with pytest.raises(HopscoreError, match="--db-template"):
        run_sql_match(source, tmp_path / "o.jsonl", MatchOptions(db_template=template),
                      executor=executor)


def test_surrogates_in_input_are_written(tmp_path: Path, options: MatchOptions,
                                         executor: SqlExecutor) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text('{"instance_id": "s", "db": "shop", "gold_sql": "SELECT 1", '
                      '"response": "```sql\\nSELECT \'\\ud800\'\\n```"}\n', encoding="utf-8")
    output = tmp_path / "out.jsonl"
    run_sql_match(source, output, options, executor=executor)
    row = json.loads(output.read_text(encoding="utf-8"))
    assert row["reason_kind"] == "agent_sql_exec_error" and "lone surrogate" in row["reason"]


ANSWER = "SELECT name FROM people WHERE id = 1"
ANTHROPIC_MISSING_RESULT = [
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "run_sql", "input": {"sql": ANSWER}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                  "content": "Rows: 1"}]},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t2", "name": "run_sql", "input": {"sql": "SELECT 42"}}]},
]
#: (case, record fields, the reference reading's reason kind)
READING_CASES = [
    ("Sql label", {"response": f"```Sql\n{ANSWER}\n```"}, "agent_sql_extraction_failed"),
    ("sqlite label", {"response": f"```sqlite\n{ANSWER}\n```"}, "agent_sql_extraction_failed"),
    ("tilde fence", {"response": f"~~~sql\n{ANSWER}\n~~~"}, "agent_sql_extraction_failed"),
    ("prose between sqlite fences",
     {"response": f"```sqlite\nSELECT 0\n```\nso the answer is:\n```sqlite\n{ANSWER}\n```"},
     "agent_sql_exec_error"),
    ("anthropic call without a result",
     {"response": "done", "messages": ANTHROPIC_MISSING_RESULT, "message_format": "anthropic"},
     "exec_mismatch"),
]


@pytest.mark.parametrize(("case", "fields", "reference_kind"), READING_CASES,
                         ids=[c[0] for c in READING_CASES])
def test_reference_reading_and_the_lenient_count(case: str, fields: dict[str, Any],
                                                 reference_kind: str, tmp_path: Path,
                                                 options: MatchOptions,
                                                 executor: SqlExecutor) -> None:
    row = {"instance_id": "r", "db": "shop", "gold_sql": ANSWER, **fields}
    source = write_input(tmp_path / "in.jsonl", [row])
    reference = run_sql_match(source, tmp_path / "ref.jsonl", options, executor=executor)
    verdict = json.loads((tmp_path / "ref.jsonl").read_text())
    assert verdict["reason_kind"] == reference_kind and verdict["match"] is False
    assert verdict["extract"] == "reference"
    assert verdict["other_extraction"]["extract"] == "lenient"
    assert verdict["other_extraction"]["agent_sql"] == ANSWER
    assert verdict["other_extraction"]["match"] is True
    assert (reference.other_sql, reference.other_changes) == (1, 1)
    lenient_options = MatchOptions(db_root=options.db_root, db_template="{db}.sqlite",
                                   timeout_s=5, extract="lenient")
    lenient = run_sql_match(source, tmp_path / "len.jsonl", lenient_options, executor=executor)
    other = json.loads((tmp_path / "len.jsonl").read_text())
    assert other["match"] is True and other["agent_sql"] == ANSWER
    assert other["other_extraction"]["match"] is False
    assert (lenient.matched, lenient.other_changes) == (1, 1)
