"""``hopscore sql-match`` as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.sql.dbs import build_shop

FENCE = "```sql\n{}\n```"


def test_sql_match_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "dbs"
    build_shop(root / "shop" / "shop_template.sqlite")
    rows = [
        {"instance_id": "ok", "db": "shop", "gold_sql": "SELECT name FROM people WHERE id = 1",
         "response": FENCE.format("SELECT upper(name) FROM people WHERE id = 1")},
        {"instance_id": "bad", "db": "shop", "gold_sql": "SELECT nope FROM people",
         "response": FENCE.format("SELECT 1")},
        {"instance_id": "miss", "db": "shop", "gold_sql": "SELECT 1", "response": "no idea"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    output = tmp_path / "out.jsonl"
    result = run_cli("sql-match", "--input", source, "--output", output, "--db-root", root,
                     "--timeout", "5")
    assert result.returncode == 0, result.stderr
    assert "accuracy 33.33% (1/3" in result.stdout
    assert "gold or setup failures: 1" in result.stdout
    assert "SQLite 3." in result.stdout
    assert "gold_sql_exec_error" in result.stdout and "agent_sql_extraction_failed" in result.stdout
    verdicts = [json.loads(line) for line in output.read_text().splitlines()]
    assert [v["instance_id"] for v in verdicts] == ["ok", "bad", "miss"]
    assert verdicts[0]["match"] and verdicts[0]["compare"] == "reference"
    again = run_cli("sql-match", "-i", source, "-o", output, "--db-root", root, "--timeout", "5")
    assert again.returncode == 0
    assert "resumed: 3 rows" in again.stderr and "graded again" not in again.stderr
    # Other settings never resume: every row is graded again, with one warning.
    strict = run_cli("sql-match", "-i", source, "-o", output, "--db-root", root, "--strict")
    assert strict.returncode == 0
    assert "holds 3 verdicts of other settings" in strict.stderr and "resumed" not in strict.stderr
    assert {json.loads(line)["compare"] for line in output.read_text().splitlines()} == {"strict"}


def test_sql_match_usage_errors(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    out = tmp_path / "o.jsonl"
    cases = [
        (["--input", tmp_path / "missing.jsonl", "--output", out], "file not found"),
        (["--input", source, "--output", out, "--compare", "rows", "--strict"], "--strict"),
        (["--input", source, "--output", out, "--compare", "fuzzy"], "--compare must be one of"),
        (["--input", source, "--output", out, "--db-template", "{x}"], "--db-template"),
        (["--input", source, "--output", out, "--max-rows", "0"], "--max-rows"),
    ]
    for args, message in cases:
        result = run_cli("sql-match", *args)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith("error:") and message in result.stderr
        assert "Traceback" not in result.stderr


def test_cli_constants_match_the_library() -> None:
    from hopscore.cli import sql_match
    from hopscore.sql import match_job, table_match

    assert sql_match.MODES == table_match.MODES
    assert sql_match.DEFAULT_TEMPLATE == match_job.DEFAULT_TEMPLATE
