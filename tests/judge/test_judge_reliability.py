"""``hopscore judge`` as a hostile environment meets it: two processes on one output, bad and
full output locations (no request is sent before failing), the output being the input, Ctrl-C,
the umask, cut replies, unparsed replies asked again, and reruns with other settings."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hopscore.defaults import DEFAULT_MAX_TOKENS
from tests.conftest import _cli_env, run_cli
from tests.fsfaults import interrupt_cli_when, run_in_mount
from tests.judge.test_judge_cli import honest, judge_args, make_rows, read_rows, tag, write_rows
from tests.openai_server import FakeOpenAI, Reply, judge_reply


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "JUDGE_API_KEY": "sk-test"}


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    return lines[0]


def test_two_processes_on_one_output(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(12))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest, latency=0.25) as server:
        first = subprocess.Popen(
            [sys.executable, "-m", "hopscore",
             *judge_args(server, inp, out, "--concurrency", "1", "--fixed-concurrency")],
            env=_cli_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not (out.exists() and out.read_bytes().count(b"\n") >= 1):
                assert time.monotonic() < deadline and first.poll() is None
                time.sleep(0.01)
            started = time.monotonic()
            second = run_cli(*judge_args(server, inp, out), env=env)
            assert time.monotonic() - started < 20
        finally:
            first.communicate(timeout=120)
        assert second.returncode == 2, second
        line = _error_line(second.stderr)
        assert str(out) in line and f"pid {first.pid}" in line
        assert first.returncode == 0
        rows = read_rows(out)
        assert len(rows) == 12 and all(r["correct"] is not None for r in rows)
        assert len(server.log) == 12  # the second process sent nothing


def test_bad_locations_send_no_request(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(3))
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    with FakeOpenAI(honest) as server:
        for out, message in [(tmp_path / "a_dir", "is a directory, expected a file"),
                             (tmp_path / "a_file" / "out.jsonl", "is a file, not a folder")]:
            result = run_cli(*judge_args(server, inp, out), env=env)
            assert result.returncode == 2, result
            line = _error_line(result.stderr)
            assert message in line and str(out) in line
        disk = tmp_path / "disk"
        for kind, options in [("read-only file system", {"read_only": True}),
                              ("no space left", {"size_kb": 1024, "fill_kb": 1000})]:
            result = run_in_mount(disk, judge_args(server, inp, disk / "out.jsonl"), **options)
            assert result.returncode == 2, result
            assert kind in _error_line(result.stderr)
        assert server.log == []


def test_output_that_is_the_input(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(3))
    os.link(inp, tmp_path / "link.jsonl")
    original = inp.read_bytes()
    with FakeOpenAI(honest) as server:
        result = run_cli(*judge_args(server, inp, tmp_path / "link.jsonl"), env=env)
        assert result.returncode == 2 and "is the input --input" in _error_line(result.stderr)
        assert server.log == []
    assert inp.read_bytes() == original


def test_disk_full_while_writing_then_rerun(tmp_path: Path, env: dict[str, str]) -> None:
    """Rows are written until the disk is full: exit 2 naming the output, the rows written are
    kept; freed space, the rerun asks only for the rest."""
    big = [{**row, "response": row["response"] + " " + "x" * 60_000} for row in make_rows(40)]
    inp = write_rows(tmp_path / "in.jsonl", big)
    disk = tmp_path / "disk"
    out = disk / "out.jsonl"
    with FakeOpenAI(honest) as server:
        args = judge_args(server, inp, out, "--concurrency", "2", "--max-cell-chars", "100000")
        after = (f"cp {out} {tmp_path}/after_full.jsonl; rm {disk}/.filler; "
                 f"{sys.executable} -m hopscore {' '.join(map(str, args))} "
                 f"> {tmp_path}/rerun.txt 2>&1; echo $? > {tmp_path}/rerun_status; "
                 f"cp {out} {tmp_path}/final.jsonl")
        result = run_in_mount(disk, args, size_kb=6144, fill_kb=4000, after=after)
        assert result.returncode == 2, result
        line = _error_line(result.stderr)
        assert "no space left on device" in line and str(out) in line
        kept = (tmp_path / "after_full.jsonl").read_bytes()
        assert 0 < kept.count(b"\n") < 40
        assert (tmp_path / "rerun_status").read_text().strip() == "0", \
            (tmp_path / "rerun.txt").read_text()
        final = read_rows(tmp_path / "final.jsonl")
        assert [r["instance_id"] for r in final] == [r["instance_id"] for r in big]
        assert len(server.log) <= 40 + 2  # at most the rows in flight when the disk filled


def test_ctrl_c_says_what_is_kept_and_rerun_resumes(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(30))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest, latency=0.05) as server:
        args = judge_args(server, inp, out, "--concurrency", "2", "--fixed-concurrency")
        result = interrupt_cli_when(*args, watched=out, lines=5, env=env)
        assert result.returncode == 130, result
        assert "interrupted: " in result.stderr and f"rows are judged in {out}" in result.stderr
        assert "rerun the same command" in result.stderr and "Traceback" not in result.stderr
        written = len(read_rows(out))
        assert 5 <= written < 30
        sent = len(server.log)
        rerun = run_cli(*args, env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert len(read_rows(out)) == 30
        assert len(server.log) - sent <= 30 - written + 2  # rows in flight at the signal


def test_sigterm_stops_a_background_run_as_ctrl_c_does(tmp_path: Path,
                                                       env: dict[str, str]) -> None:
    """A run started with Ctrl-C ignored (``nohup ... &``) stops on SIGTERM as on Ctrl-C:
    what it kept is said, exit status 143, and the rerun resumes."""
    inp = write_rows(tmp_path / "in.jsonl", make_rows(30))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest, latency=0.05) as server:
        args = judge_args(server, inp, out, "--concurrency", "2", "--fixed-concurrency")
        result = interrupt_cli_when(*args, watched=out, lines=5, env=env, sig=signal.SIGTERM,
                                    background=True)
        assert result.returncode == 143, result
        assert "interrupted: " in result.stderr and f"rows are judged in {out}" in result.stderr
        assert "Traceback" not in result.stderr
        assert 5 <= len(read_rows(out)) < 30
        rerun = run_cli(*args, env=env)
        assert rerun.returncode == 0, rerun.stderr
        assert len(read_rows(out)) == 30


def test_files_follow_the_umask(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(2))
    out = tmp_path / "out.jsonl"
    summary = tmp_path / "summary.json"
    with FakeOpenAI(honest) as server:
        args = judge_args(server, inp, out, "--summary-json", summary)
        done = subprocess.run([sys.executable, "-m", "hopscore", *args], env=_cli_env(env),
                              capture_output=True, preexec_fn=lambda: os.umask(0o002))
        assert done.returncode == 0, done.stderr
    assert out.stat().st_mode & 0o777 == 0o664
    assert summary.stat().st_mode & 0o777 == 0o664


def _cut_odd(prompt: str, attempt: int) -> Reply:
    number = int(tag(prompt)[1:])
    if number % 2:
        return Reply("extracted_final_answer: City 1\nreasoning: the", finish_reason="length")
    return judge_reply(True, answer=f"City {number}")


def test_cut_replies_are_counted_and_on_truncation_error(tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(4))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(_cut_odd) as server:
        scored = run_cli(*judge_args(server, inp, out), env=env)
        assert scored.returncode == 0, scored.stderr
        assert "warning: 2 judge replies were cut at --max-tokens" in scored.stderr
        rows = read_rows(out)
        assert [r["judge"]["truncated"] for r in rows] == [False, True, False, True]
        assert rows[1]["extracted_final_answer"] == "City 1"  # kept, though no verdict
        assert rows[1]["parse_ok"] is False and rows[1]["correct"] is False
        error = run_cli(*judge_args(server, inp, out, "--on-truncation", "error",
                                    "--summary-json", tmp_path / "s.json"), env=env)
        assert error.returncode == 1, error.stderr
        assert "2 of them have no verdict (--on-truncation error)" in error.stderr
        rows = read_rows(out)
        assert [r["judge"]["status"] for r in rows] == ["judged", "truncated", "judged",
                                                       "truncated"]
        assert rows[1]["correct"] is None and rows[1]["extracted_final_answer"] == "City 1"
        summary = (tmp_path / "s.json").read_text()
        assert '"truncated": 2' in summary and '"truncated_unscored": 2' in summary
        assert len(server.log) == 4  # switching the policy re-reads cached replies
        back = run_cli(*judge_args(server, inp, out), env=env)
        assert back.returncode == 0 and len(server.log) == 4


def test_retry_unparsed_asks_again_past_the_cache(tmp_path: Path, env: dict[str, str]) -> None:
    def flaky(prompt: str, attempt: int) -> Reply:
        if tag(prompt) == "Q001" and attempt == 0:
            return Reply("extracted_final_answer: City 1\nreasoning: looks right\ncorrect: maybe")
        return honest(prompt, attempt)

    inp = write_rows(tmp_path / "in.jsonl", make_rows(3))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(flaky) as server:
        first = run_cli(*judge_args(server, inp, out), env=env)
        assert first.returncode == 0
        assert "1 judge reply gave no verdict" in first.stderr
        row = read_rows(out)[1]
        assert row["parse_ok"] is False and row["extracted_final_answer"] == "City 1"
        assert run_cli(*judge_args(server, inp, out), env=env).returncode == 0
        assert len(server.log) == 3  # without the flag a parse failure is a finished row
        again = run_cli(*judge_args(server, inp, out, "--retry-unparsed"), env=env)
        assert again.returncode == 0, again.stderr
        assert len(server.log) == 4 and server.count("Q001") == 2
        row = read_rows(out)[1]
        assert row["parse_ok"] is True and row["judge"]["unparsed_retries"] == 1
        assert "1 asked again" in again.stdout
        # the retried reply is cached under its own retry number: a rerun is free
        assert run_cli(*judge_args(server, inp, out, "--retry-unparsed"), env=env).returncode == 0
        assert len(server.log) == 4


def test_rerun_with_other_settings(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(3))
    out = tmp_path / "out.jsonl"
    side = tmp_path / "out.other-settings.jsonl"
    with FakeOpenAI(honest) as server:
        assert run_cli(*judge_args(server, inp, out), env=env).returncode == 0
        before = out.read_bytes()
        typo = run_cli(*judge_args(server, inp, out, "--model", "judge-n", "--max-tokens", "99"),
                       env=env)
        assert typo.returncode == 2
        line = _error_line(typo.stderr)
        assert "model: judge-m -> judge-n" in line, line
        assert f"max_tokens: {DEFAULT_MAX_TOKENS} -> 99" in line, line
        assert out.read_bytes() == before and not side.exists() and len(server.log) == 3
        other = run_cli(*judge_args(server, inp, out, "--model", "judge-n", "--resume-any"),
                        env=env)
        assert other.returncode == 0, other.stderr
        assert {r["judge"]["model"] for r in read_rows(out)} == {"judge-n"}
        assert {r["judge"]["model"] for r in read_rows(side)} == {"judge-m"}
        assert len(server.log) == 6
        back = run_cli(*judge_args(server, inp, out, "--resume-any"), env=env)
        assert back.returncode == 0, back.stderr
        assert out.read_bytes() == before  # the first rows, back in place, nothing asked
        assert {r["judge"]["model"] for r in read_rows(side)} == {"judge-n"}
        assert len(server.log) == 6
        edited = write_rows(tmp_path / "in.jsonl", make_rows(2))
        shrunk = run_cli(*judge_args(server, edited, out), env=env)
        assert shrunk.returncode == 2
        assert "holds 1 judge rows made for other examples or inputs" in shrunk.stderr
