"""``hopscore run`` as a hostile environment meets it: a second process on one run directory,
bad output locations (no request sent before failing), a run directory that holds an input,
Ctrl-C, the umask, answers cut at --max-tokens, and reruns with other settings."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hopscore import benchmarks
from tests.conftest import _cli_env, run_cli
from tests.fsfaults import holding, interrupt_cli_when, run_in_mount
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, gold_replies, load, rows, run_args
from tests.run.test_prompts import GOLDS

ANSWERS = gold_replies("bamboogle")
TOTAL = len(ANSWERS)


def _reply(prompt: str, attempt: int) -> Reply:
    return Reply(f"Answer: {ANSWERS[asked(prompt)]}")


def _error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    return lines[0]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())
            if p.is_file() and not p.name.startswith(".")}


def test_two_processes_on_one_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_reply, latency=0.2) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache", "--concurrency",
                        "1", "--fixed-concurrency")
        first = subprocess.Popen([sys.executable, "-m", "hopscore", *map(str, args)],
                                 env=_cli_env(None), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not ((out / "samples.jsonl").exists()
                       and (out / "samples.jsonl").read_bytes().count(b"\n") >= 1):
                assert time.monotonic() < deadline and first.poll() is None
                time.sleep(0.01)
            started = time.monotonic()
            second = run_cli(*args)
            assert time.monotonic() - started < 20
        finally:
            first.communicate(timeout=120)
        assert second.returncode == 2, second
        line = _error_line(second.stderr)
        assert str(out) in line and f"pid {first.pid}" in line
        assert first.returncode == 0
        assert len(rows(out / "samples.jsonl")) == TOTAL
        assert len(server.log) == TOTAL  # the second process sent nothing
    assert load(out / "metrics.json")["metrics"]["em"] == 1.0
    # a held directory is refused before the gold is even read
    with holding(out) as pid:
        before = _files(out)
        result = run_cli(*args)
    assert result.returncode == 2 and f"pid {pid}" in _error_line(result.stderr)
    assert _files(out) == before


def test_bad_locations_send_no_request(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("x")
    with FakeOpenAI(_reply) as server:
        for out, message in [(tmp_path / "a_file", "is a file, expected a directory"),
                             (tmp_path / "a_file" / "run", "is a file, not a folder")]:
            result = run_cli(*run_args("bamboogle", server.base_url, out, tmp_path / "cache"))
            assert result.returncode == 2, result
            line = _error_line(result.stderr)
            assert message in line and str(out) in line
        disk = tmp_path / "disk"
        for kind, options in [("read-only file system", {"read_only": True}),
                              ("no space left", {"size_kb": 1024, "fill_kb": 1000})]:
            result = run_in_mount(disk, run_args("bamboogle", server.base_url, disk / "run",
                                                 tmp_path / "cache"), **options)
            assert result.returncode == 2, result
            assert kind in _error_line(result.stderr)
        assert server.log == []
    assert (tmp_path / "a_file").read_text() == "x"


def test_a_run_directory_that_holds_an_input_is_refused(tmp_path: Path) -> None:
    """``run --gold d/predictions.json -o d`` would write the gold over itself."""
    same = tmp_path / "same"
    same.mkdir()
    gold = same / benchmarks.get("hotpotqa").predictions_file
    shutil.copy(GOLDS["hotpotqa"][0], gold)
    original = gold.read_bytes()
    with FakeOpenAI(_reply) as server:
        args = run_args("hotpotqa", server.base_url, same, tmp_path / "cache")
        args[args.index("--gold") + 1] = gold
        result = run_cli(*args)
        assert result.returncode == 2, result
        line = _error_line(result.stderr)
        assert "which is the input --gold" in line and str(gold) in line
        assert server.log == []
    assert gold.read_bytes() == original
    assert sorted(p.name for p in same.iterdir()) == [gold.name]


def test_ctrl_c_says_what_is_kept_and_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_reply, latency=0.1) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache", "--concurrency",
                        "2", "--fixed-concurrency")
        result = interrupt_cli_when(*args, watched=out / "samples.jsonl", lines=4)
        assert result.returncode == 130, result
        assert "interrupted: " in result.stderr and "Traceback" not in result.stderr
        assert f"of {TOTAL} samples are saved in {out / 'samples.jsonl'}" in result.stderr
        assert "rerun the same command to resume" in result.stderr
        config = load(out / "config.json")
        assert config["status"] == "interrupted"
        written = len(rows(out / "samples.jsonl"))
        assert 4 <= written < TOTAL
        assert config["summary"]["samples"] - config["summary"]["not_run"] == written
        sent = len(server.log)
        rerun = run_cli(*args)
        assert rerun.returncode == 0, rerun.stderr
        assert len(server.log) - sent <= TOTAL - written + 2  # in flight at the signal
    assert load(out / "config.json")["status"] == "complete"
    assert len(rows(out / "samples.jsonl")) == TOTAL


def test_files_follow_the_umask(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_reply) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache")
        done = subprocess.run([sys.executable, "-m", "hopscore", *map(str, args)],
                              env=_cli_env(None), capture_output=True,
                              preexec_fn=lambda: os.umask(0o002))
        assert done.returncode == 0, done.stderr
    modes = {p.name: p.stat().st_mode & 0o777 for p in out.iterdir() if p.is_file()}
    assert modes and set(modes.values()) == {0o664}, modes
    assert out.stat().st_mode & 0o777 == 0o775


def _cut_two(prompt: str, attempt: int) -> Reply:
    question = asked(prompt)
    index = list(ANSWERS).index(question)
    if index in (2, 5):  # cut before the answer line: "The answer is" and nothing more
        return Reply("Let me think step by step. The answer is", finish_reason="length")
    return Reply(f"Answer: {ANSWERS[question]}")


def test_cut_answers_are_counted_and_on_truncation_error(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(_cut_two) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache", "--max-tokens",
                        "8")
        scored = run_cli(*args)
        assert scored.returncode == 0, scored.stderr
        assert "2 answers were cut at --max-tokens 8 (finish_reason length)" in scored.stderr
        samples = {r["id"]: r for r in rows(out / "samples.jsonl")}
        assert [i for i, r in samples.items() if r["truncated"]] == ["2", "5"]
        metrics = load(out / "metrics.json")
        assert metrics["run"]["truncated"] == 2 and metrics["run"]["truncated_ids"] == ["2", "5"]
        assert metrics["run"]["truncated_unscored"] == 0
        assert any("cut at --max-tokens 8" in w for w in metrics["warnings"])
        assert "2" in load(out / "predictions.json")  # scored as it is
        assert load(out / "config.json")["summary"]["truncated"] == 2
        assert "cut at --max-tokens" in scored.stdout
        sent = len(server.log)
        error = run_cli(*args, "--on-truncation", "error")
        assert error.returncode == 1, error.stderr
        assert "not scored (--on-truncation error" in error.stderr
        metrics = load(out / "metrics.json")
        assert metrics["run"]["truncated_unscored"] == 2
        assert "2" not in load(out / "predictions.json")
        assert set(metrics["missing_ids"]) == {"2", "5"}
        assert len(server.log) == sent  # the policy is not a setting of the samples


def test_rerun_with_other_settings(tmp_path: Path) -> None:
    """The issue's case: 30 rows became 3 when a rerun changed one flag. Now the rerun exits 2
    naming the settings, and nothing is changed; --resume-any keeps both; --restart starts
    over."""
    out = tmp_path / "run"
    samples = out / "samples.jsonl"
    side = out / "samples.other-settings.jsonl"
    with FakeOpenAI(_reply) as server:
        base = run_args("bamboogle", server.base_url, out, tmp_path / "cache")
        assert run_cli(*base).returncode == 0
        before = _files(out)
        typo = run_cli(*base, "--max-tokens", "8", "--temperature", "0.7")
        assert typo.returncode == 2
        line = _error_line(typo.stderr)
        assert f"{samples} holds {TOTAL} samples made with other settings" in line, line
        assert "max_tokens: 1024 -> 8" in line and "temperature: 0.0 -> 0.7" in line, line
        assert "--restart" in line and "--resume-any" in line
        assert _files(out) == before and len(server.log) == TOTAL
        fewer = run_cli(*base, "--limit", "3")
        assert fewer.returncode == 2 and "limit: null -> 3" in _error_line(fewer.stderr)
        assert _files(out) == before
        # only how the run is carried out changed: a plain resume, nothing asked
        same = run_cli(*base, "--concurrency", "3", "--timeout", "30", "--resamples", "20")
        assert same.returncode == 0, same.stderr
        assert len(server.log) == TOTAL
        other = run_cli(*base, "--temperature", "0.7", "--resume-any")
        assert other.returncode == 0, other.stderr
        assert f"kept {TOTAL} rows of other settings in {side}" in other.stderr
        assert len(server.log) == 2 * TOTAL
        assert {r["id"] for r in rows(samples)} == {str(i) for i in range(TOTAL)}
        assert len(rows(side)) == TOTAL
        assert load(out / "config.json")["settings"]["temperature"] == 0.7
        back = run_cli(*base, "--resume-any")
        assert back.returncode == 0, back.stderr
        assert len(server.log) == 2 * TOTAL  # the first samples are back, none asked again
        assert samples.read_bytes() == before["samples.jsonl"]
        assert {json.loads(line)["run_key"] for line in side.read_text().splitlines()} \
            .isdisjoint({r["run_key"] for r in rows(samples)})
        fresh = run_cli(*base, "--temperature", "0.7", "--restart", "--no-cache")
        assert fresh.returncode == 0, fresh.stderr
        assert f"--restart: discarded {TOTAL} rows" in fresh.stderr
        assert len(server.log) == 3 * TOTAL
        assert len(rows(samples)) == TOTAL
        both = run_cli(*base, "--restart", "--resume-any")
        assert both.returncode == 2 and "exclude each other" in _error_line(both.stderr)
