"""Every writing command claims its output before any work: sql-match, report, analyze,
compare, hdr-tasks and demo refuse an output that is one of their inputs (the input intact), a
bad location (exit 2 naming it; missing parent folders are created) and an output another
process holds (exit 2 naming its pid); Ctrl-C in sql-match says how many verdicts are kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hopscore.benchmarks import sample_files
from hopscore.benchmarks.hybrid_deep_research.tasks import CATEGORY_FILES
from tests.conftest import CliResult, run_cli
from tests.fsfaults import holding, interrupt_cli_when
from tests.sql.dbs import build_shop

FENCE = "```sql\n{}\n```"
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def _error_line(result: CliResult) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    return lines[0]


def _records(path: Path, sqls: list[str]) -> Path:
    path.write_text("".join(json.dumps({"instance_id": f"r{i}", "db": "shop",
                                        "gold_sql": "SELECT 1", "response": FENCE.format(sql)})
                            + "\n" for i, sql in enumerate(sqls)))
    return path


def _score_dir(tmp_path: Path, name: str = "scored") -> Path:
    found = {s.benchmark: s for s in sample_files.samples()}
    out = tmp_path / name
    with found["bamboogle"].paths() as (gold, predictions, _aliases):
        result = run_cli("score", "bamboogle", "--gold", gold, "--predictions", predictions,
                         "--output-dir", out)
    assert result.returncode == 0, result.stderr
    return out


def test_sql_match_never_writes_over_its_input(tmp_path: Path) -> None:
    db_root = tmp_path / "dbs"
    build_shop(db_root / "shop" / "shop_template.sqlite")
    records = _records(tmp_path / "records.jsonl", ["SELECT 1", "SELECT 2"])
    original = records.read_bytes()
    link = tmp_path / "link.jsonl"
    link.hardlink_to(records)
    for out in (records, link):
        result = run_cli("sql-match", "-i", records, "-o", out, "--db-root", db_root,
                         "--restart")
        assert result.returncode == 2, result
        assert "is the input --input" in _error_line(result)
        assert records.read_bytes() == original
    inside = run_cli("sql-match", "-i", records, "-o", db_root / "verdicts.jsonl",
                     "--db-root", db_root)
    assert inside.returncode == 2 and "--db-root" in _error_line(inside)
    out = tmp_path / "verdicts.jsonl"
    with holding(out, "file") as pid:
        busy = run_cli("sql-match", "-i", records, "-o", out, "--db-root", db_root)
        assert busy.returncode == 2 and f"pid {pid}" in _error_line(busy)
    assert not out.exists()
    done = run_cli("sql-match", "-i", records, "-o", out, "--db-root", db_root)
    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) == 2


def test_sql_match_ctrl_c_says_what_is_kept(tmp_path: Path) -> None:
    db_root = tmp_path / "dbs"
    build_shop(db_root / "shop" / "shop_template.sqlite")
    records = _records(tmp_path / "records.jsonl", ["SELECT 1", "SELECT 1", ENDLESS, "SELECT 1"])
    out = tmp_path / "verdicts.jsonl"
    args = ["sql-match", "-i", records, "-o", out, "--db-root", db_root, "--timeout", "0",
            "--workers", "1"]
    result = interrupt_cli_when(*args, watched=out, lines=2)
    assert result.returncode == 130, result
    assert "Traceback" not in result.stderr
    kept = len(out.read_text().splitlines())
    assert f"interrupted: {kept} verdicts are saved in {out}" in result.stderr, result.stderr
    assert "rerun the same command" in result.stderr


def test_report_analyze_and_compare_never_write_over_an_input(tmp_path: Path) -> None:
    scored = _score_dir(tmp_path)
    before = {p.name: p.read_bytes() for p in scored.iterdir() if p.is_file()}
    for args, option in [
        (("report", scored, "-o", scored / "scores.jsonl"), "--output"),
        (("analyze", scored, "-o", scored / "metrics.json"), "--output"),
        (("compare", scored, scored, "-o", scored / "scores.jsonl"), "--output"),
    ]:
        result = run_cli(*args)
        assert result.returncode == 2, result
        line = _error_line(result)
        assert f"{option} {args[-1]} is the input input {scored}" in line, line
    assert {p.name: p.read_bytes() for p in scored.iterdir() if p.is_file()} == before
    # -o in a folder that does not exist yet: created, as run's default runs/<name> is
    nested = tmp_path / "missing" / "deeper" / "report.html"
    made = run_cli("report", scored, "-o", nested)
    assert made.returncode == 0, made.stderr
    assert nested.read_text().startswith("<!")
    page = scored / "report.html"  # beside the files it reads: allowed
    with holding(page, "file") as pid:
        busy = run_cli("report", scored, "-o", page)
        assert busy.returncode == 2 and f"pid {pid}" in _error_line(busy)
    assert not page.exists()
    assert run_cli("report", scored, "-o", page).returncode == 0
    assert page.read_text().startswith("<!")


def test_hdr_tasks_and_demo_claim_their_outputs(tmp_path: Path) -> None:
    folder = tmp_path / "tasks"
    for prefix, name in zip(("s2sql", "sql2s", "parallel"), CATEGORY_FILES, strict=True):
        (folder / name).parent.mkdir(parents=True)
        (folder / name).write_text(json.dumps(
            {"id": f"{prefix}_1", "final_question": "Where?", "db": "shop", "final_answer": "Here",
             "sql": "SELECT 1"}) + "\n")
    before = sorted(p for p in folder.rglob("*"))
    inside = run_cli("hdr-tasks", folder, "-o", folder / "merged.jsonl")
    assert inside.returncode == 2 and "inside the input folder" in _error_line(inside)
    assert sorted(p for p in folder.rglob("*")) == before
    out = tmp_path / "merged.jsonl"
    with holding(out, "file") as pid:
        busy = run_cli("hdr-tasks", folder, "-o", out)
        assert busy.returncode == 2 and f"pid {pid}" in _error_line(busy)
    assert run_cli("hdr-tasks", folder, "-o", out).returncode == 0 and out.exists()
    demo = tmp_path / "demo"
    with holding(demo) as pid:
        busy = run_cli("demo", "--scores-only", "--output-dir", demo)
        assert busy.returncode == 2 and f"pid {pid}" in _error_line(busy)
    assert not any(p for p in demo.iterdir() if not p.name.startswith("."))
    shutil.rmtree(demo)
    made = run_cli("demo", "--scores-only", "--output-dir", tmp_path / "no" / "demo")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "no" / "demo").is_dir()


def test_two_judges_on_one_file_under_two_names(tmp_path: Path) -> None:
    """Two real ``hopscore judge`` processes whose outputs are one file through a hard link or a
    symbolic link: the second exits 2 naming both paths before any request, the first finishes,
    and its file resumes (issue 22: both wrote, lines interleaved, every rerun was blocked)."""
    import subprocess
    import sys
    import threading

    from tests.conftest import _cli_env
    from tests.judge.test_judge_cli import honest, judge_args, make_rows, write_rows
    from tests.openai_server import FakeOpenAI, Reply

    asked, release = threading.Event(), threading.Event()
    calls: list[str] = []

    def held(prompt: str, attempt: int) -> Reply:
        calls.append(prompt)
        asked.set()
        release.wait(60)
        return honest(prompt, attempt)

    source = write_rows(tmp_path / "in.jsonl", make_rows(6))
    out = tmp_path / "judged.jsonl"
    out.write_text("")
    hard, soft = tmp_path / "hard.jsonl", tmp_path / "soft.jsonl"
    hard.hardlink_to(out)
    soft.symlink_to(out)
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "JUDGE_API_KEY": "sk-test"}
    with FakeOpenAI(held) as server:
        first = subprocess.Popen([sys.executable, "-m", "hopscore",
                                  *judge_args(server, source, out, "--concurrency", "1")],
                                 env=_cli_env(env), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert asked.wait(120), "the first judge sent no request"
            requests = len(calls)
            for other in (hard, soft):
                second = run_cli(*judge_args(server, source, other), env=env)
                assert second.returncode == 2, second
                line = _error_line(second)
                assert str(other) in line and f"pid {first.pid}" in line, line
                assert str(out) in line, line
            assert len(calls) == requests  # the second ones sent nothing
        finally:
            release.set()
            _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 6
        again = run_cli(*judge_args(server, source, hard), env=env)
        assert again.returncode == 0, again.stderr
        assert "resumed" in again.stderr or len(out.read_text().splitlines()) == 6


def test_export_never_writes_over_its_input_through_a_hard_link(tmp_path: Path) -> None:
    scored = _score_dir(tmp_path)
    original = (scored / "scores.jsonl").read_bytes()
    link = tmp_path / "table.jsonl"
    link.hardlink_to(scored / "scores.jsonl")
    result = run_cli("export", scored, "-o", link)
    assert result.returncode == 2, result
    assert "inside the input folder" in _error_line(result)
    assert (scored / "scores.jsonl").read_bytes() == original and link.read_bytes() == original
