"""Every bad input line is one located ``invalid_input`` row; input never makes sql-match exit 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.errors import InputError
from hopscore.sql.inputs import read_lines
from hopscore.sql.match_job import MatchOptions, run_sql_match
from hopscore.sql.sandbox import SqlExecutor
from tests.conftest import run_cli
from tests.sql.dbs import build_shop

FENCE = "```sql\n{}\n```"
GOOD = {"instance_id": "good", "db": "shop", "gold_sql": "SELECT 1",
        "response": FENCE.format("SELECT 1")}

#: (what the line holds, the line's bytes, words of the located reason)
HOSTILE: list[tuple[str, bytes, str]] = [
    ("deep nesting", b'{"instance_id": "d", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "nested too deeply"),
    ("5,000-digit integer", b'{"instance_id": ' + b"7" * 5000 + b', "db": "shop"}',
     "more than 4,300 digits"),
    ("raw NUL byte", b'{"instance_id": "n", "gold_sql": "SELECT\x001"}', "invalid JSON"),
    ("NUL in db", b'{"instance_id": "n", "db": "sh\\u0000op", "gold_sql": "SELECT 1", '
     b'"response": "```sql\\nSELECT 1\\n```"}', "field 'db': contains a NUL character"),
    ("lone surrogate in db_path", b'{"instance_id": "s", "db_path": "/tmp/\\ud800.sqlite", '
     b'"gold_sql": "SELECT 1", "response": "```sql\\nSELECT 1\\n```"}',
     "field 'db_path': contains a lone surrogate"),
    ("invalid UTF-8", b'{"instance_id": "\xff\xfe"}', "not valid UTF-8"),
    ("not an object", b"[1, 2, 3]", "expected a JSON object"),
    ("number id", b'{"instance_id": 1.5}', "field 'instance_id'"),
    ("truncated JSON", b'{"instance_id": "t", ', "invalid JSON"),
]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.fixture
def options(shop_root: Path) -> MatchOptions:
    return MatchOptions(db_root=shop_root, db_template="{db}.sqlite", timeout_s=5)


def test_each_hostile_line_is_one_located_row(tmp_path: Path, options: MatchOptions,
                                              executor: SqlExecutor) -> None:
    good = json.dumps(GOOD).encode()
    source = _write(tmp_path / "in.jsonl", [good, *(raw for _, raw, _ in HOSTILE), good])
    output = tmp_path / "out.jsonl"
    summary = run_sql_match(source, output, options, executor=executor)
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(HOSTILE) + 2 and summary.total == len(rows)
    assert rows[0]["match"] is True and rows[-1]["match"] is True
    for (what, _, words), row, line in zip(HOSTILE, rows[1:-1], range(2, 100), strict=False):
        assert row["reason_kind"] == "invalid_input", what
        assert row["match"] is None and row["line"] == line, what
        assert f"{source}:{line}: " in row["reason"] and words in row["reason"], (what, row)
    assert summary.reasons["invalid_input"] == len(HOSTILE)


def test_a_line_over_the_limit_is_skipped_without_reading_it(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    with source.open("wb") as handle:
        handle.write(json.dumps(GOOD).encode() + b"\n")
        handle.write(b'{"instance_id": "big", "response": "' + b"x" * 3_000_000 + b'"}\n')
        handle.write(json.dumps(GOOD).encode() + b"\n")
    lines = list(read_lines(source, max_line_bytes=1_000_000))
    assert [item.line for item in lines] == [1, 2, 3]
    assert isinstance(lines[1].value, InputError)
    assert str(lines[1].value) == (f"{source}:2: line is longer than 1,000,000 bytes "
                                   "(3,000,039 bytes); it is not read")
    assert lines[0].value == GOOD == lines[2].value
    assert lines[0].digest == lines[2].digest != lines[1].digest


@pytest.mark.slow
def test_cli_survives_a_100_mb_line_and_every_hostile_line(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = tmp_path / "in.jsonl"
    with source.open("wb") as handle:
        handle.write(json.dumps(GOOD).encode() + b"\n")
        handle.write(b'{"instance_id": "huge", "response": "' + b"y" * 100_000_000 + b'"}\n')
        for _, raw, _ in HOSTILE:
            handle.write(raw + b"\n")
    output = tmp_path / "out.jsonl"
    result = run_cli("sql-match", "-i", source, "-o", output, "--db-root", root,
                     "--timeout", "5")
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 + len(HOSTILE)
    assert rows[1]["reason_kind"] == "invalid_input" and ":2: line is longer than" in \
        rows[1]["reason"]
    assert all(row["reason_kind"] == "invalid_input" for row in rows[1:])


def test_an_input_with_no_valid_row_exits_1(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    source = _write(tmp_path / "in.jsonl", [raw for _, raw, _ in HOSTILE])
    result = run_cli("sql-match", "-i", source, "-o", tmp_path / "out.jsonl", "--db-root", root)
    assert result.returncode == 1, result.stderr
    assert f"has no valid row ({len(HOSTILE)} invalid)" in result.stderr
    assert "Traceback" not in result.stderr and "internal error:" not in result.stderr
    empty = _write(tmp_path / "empty.jsonl", [b"", b"  "])
    result = run_cli("sql-match", "-i", empty, "-o", tmp_path / "o2.jsonl", "--db-root", root)
    assert result.returncode == 1 and "has no rows" in result.stderr
    # One valid row is enough for a normal exit.
    mixed = _write(tmp_path / "mixed.jsonl", [HOSTILE[0][1], json.dumps(GOOD).encode()])
    result = run_cli("sql-match", "-i", mixed, "-o", tmp_path / "o3.jsonl", "--db-root", root)
    assert result.returncode == 0, result.stderr
