"""``hopscore run hybrid-deep-research`` as a hostile environment meets it: a second process
on one run directory, bad output locations (no request sent before failing), a run directory
inside an input folder, Ctrl-C, the umask, replies cut at --max-tokens, and reruns with other
settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, _cli_env, run_cli
from tests.fsfaults import holding, interrupt_cli_when, run_in_mount
from tests.hdr.world import ALL_TASKS, SCRIPTS, Turn, World, build_world, scripted, tool_calls
from tests.openai_server import FakeOpenAI, Reply

COUNT = 6


def _tasks() -> list[dict[str, Any]]:
    return [{"id": f"sql2s_rel{i}", "final_question": f"Reliability case {i}: where is Acme "
             "based?", "hint": "", "db": "shop", "final_answer": "Springfield"}
            for i in range(COUNT)]


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    created = _tasks()
    ALL_TASKS.extend(created)
    try:
        yield build_world(tmp_path, created)
    finally:
        del ALL_TASKS[-len(created):]


def _script(cut: tuple[int, ...] = ()) -> dict[str, list[Turn]]:
    """Every task answers in two turns; the tasks numbered in ``cut`` give their final answer
    in a reply cut at the completion limit (finish_reason length)."""
    out: dict[str, list[Turn]] = {}
    for i in range(COUNT):
        final: Turn = [("final_answer", {"answer": "Springfield"})]
        if i in cut:
            final = Reply(None, tool_calls=tool_calls([("final_answer", {"answer": "Spring"})],
                                                      1), finish_reason="length")
        out[f"sql2s_rel{i}"] = [[("run_sql", {"sql": "SELECT maker FROM products"})], final]
    return out


def _args(world: World, server: FakeOpenAI, out: Path, *extra: str | Path) -> list[str | Path]:
    return ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--corpus", world.corpus, "--model", "openai/agent", "--base-url", server.base_url,
            "--judge-model", "judge", "--judge-base-url", server.base_url, "--output-dir", out,
            "--cache-dir", world.root / "cache", "--no-progress", "--resamples", "0", *extra]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _error_line(result: CliResult) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    return lines[0]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.startswith(".")}


def _agent(server: FakeOpenAI) -> int:
    return sum("tools" in entry.body for entry in server.log)


def test_two_processes_on_one_run_directory(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=scripted(_script()), latency=0.2) as server, \
            FakeOpenAI(body_responder=scripted(_script())) as other:
        first = subprocess.Popen(
            [sys.executable, "-m", "hopscore", *map(str, _args(world, server, out,
                                                                "--concurrency", "1"))],
            env=_cli_env(None), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 90
            while not ((out / "samples.jsonl").exists()
                       and (out / "samples.jsonl").read_bytes().count(b"\n") >= 1):
                assert time.monotonic() < deadline and first.poll() is None
                time.sleep(0.01)
            started = time.monotonic()
            second = run_cli(*_args(world, other, out))
            assert time.monotonic() - started < 20
        finally:
            _, first_err = first.communicate(timeout=180)
        assert second.returncode == 2, second
        line = _error_line(second)
        assert str(out) in line and f"pid {first.pid}" in line
        assert first.returncode == 0, first_err
        assert other.log == []  # the second process sent nothing
    assert len(_rows(out / "samples.jsonl")) == COUNT
    assert [g["correct"] for g in _rows(out / "grades.jsonl")] == [True] * COUNT
    with holding(out) as pid:  # held by another process: refused before the tasks are read
        before = _files(out)
        result = run_cli(*_args(world, other, out))
        assert result.returncode == 2 and f"pid {pid}" in _error_line(result)
        assert other.log == []
    assert _files(out) == before


def test_bad_locations_send_no_request(world: World, tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("x")
    with FakeOpenAI(body_responder=scripted(_script())) as server:
        for out, message in [(tmp_path / "a_file", "is a file, expected a directory"),
                             (tmp_path / "a_file" / "run", "is a file, not a folder")]:
            result = run_cli(*_args(world, server, out))
            assert result.returncode == 2, result
            line = _error_line(result)
            assert message in line and str(out) in line
        disk = tmp_path / "disk"
        for kind, options in [("read-only file system", {"read_only": True}),
                              ("no space left", {"size_kb": 1024, "fill_kb": 1000})]:
            result = run_in_mount(disk, _args(world, server, disk / "run"), **options)
            assert result.returncode == 2, result
            assert kind in _error_line(result)
        assert server.log == []
    assert (tmp_path / "a_file").read_text() == "x"


def test_a_run_directory_inside_an_input_folder_is_refused(world: World) -> None:
    before = world.fingerprint()
    with FakeOpenAI(body_responder=scripted(_script())) as server:
        out = world.db_root / "run"
        result = run_cli(*_args(world, server, out))
        assert result.returncode == 2, result
        line = _error_line(result)
        assert f"inside the input folder --db-root {world.db_root}" in line, line
        assert server.log == []
    assert not out.exists() and world.fingerprint() == before


def test_ctrl_c_says_what_is_kept_and_rerun_resumes(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    samples = out / "samples.jsonl"
    with FakeOpenAI(body_responder=scripted(_script()), latency=0.15) as server:
        args = _args(world, server, out, "--concurrency", "2")
        result = interrupt_cli_when(*args, watched=samples, lines=2)
        assert result.returncode == 130, result
        assert "interrupted: " in result.stderr and "Traceback" not in result.stderr
        assert f"of {COUNT} attempts are saved in {samples}" in result.stderr
        assert "rerun the same command to resume" in result.stderr
        config = _load(out / "config.json")
        assert config["status"] == "interrupted"
        written = len(_rows(samples))
        assert 2 <= written < COUNT
        assert config["summary"]["attempts"] - config["summary"]["not_run"] == written
        sent = _agent(server)
        rerun = run_cli(*args)
        assert rerun.returncode == 0, rerun.stderr
        assert _agent(server) - sent <= 2 * (COUNT - written) + 2  # in flight at the signal
    assert _load(out / "config.json")["status"] == "complete"
    assert len(_rows(samples)) == COUNT


def test_files_follow_the_umask(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=scripted(_script())) as server:
        done = subprocess.run([sys.executable, "-m", "hopscore",
                               *map(str, _args(world, server, out))],
                              env=_cli_env(None), capture_output=True,
                              preexec_fn=lambda: os.umask(0o002))
        assert done.returncode == 0, done.stderr
    modes = {str(p.relative_to(out)): p.stat().st_mode & 0o777 for p in out.rglob("*")
             if not p.name.startswith(".")}
    files = {name: mode for name, mode in modes.items() if (out / name).is_file()}
    assert files and set(files.values()) == {0o664}, files
    assert {mode for name, mode in modes.items() if (out / name).is_dir()} <= {0o775}, modes
    assert out.stat().st_mode & 0o777 == 0o775


def test_cut_replies_are_counted_and_on_truncation_error(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=scripted(_script(cut=(1, 4)))) as server:
        args = _args(world, server, out, "--max-tokens", "64")
        scored = run_cli(*args)
        assert scored.returncode == 0, scored.stderr
        assert "2 attempts had model replies cut at --max-tokens 64" in scored.stderr
        samples = {r["instance_id"]: r for r in _rows(out / "samples.jsonl")}
        assert sorted(i for i, r in samples.items() if r["truncated"]) == \
            ["sql2s_rel1", "sql2s_rel4"]
        assert samples["sql2s_rel1"]["truncated_turns"] == [2]  # turns count from 1
        summary = _load(out / "metrics.json")["hdr"]
        assert summary["truncated"] == 2 and summary["truncated_unscored"] == 0
        assert any("cut at --max-tokens 64" in w for w in _load(out / "metrics.json")["warnings"])
        assert _load(out / "config.json")["summary"]["truncated"] == 2
        assert "cut at --max-tokens" in scored.stdout
        grades = {g["instance_id"]: g for g in _rows(out / "grades.jsonl")}
        assert grades["sql2s_rel1"]["correct"] is False  # "Spring", graded as it is
        total = len(server.log)
        error = run_cli(*args, "--on-truncation", "error")
        assert error.returncode == 1, error.stderr
        assert "not graded (--on-truncation error" in error.stderr
        summary = _load(out / "metrics.json")["hdr"]
        assert summary["truncated_unscored"] == 2
        grades = {g["instance_id"]: g for g in _rows(out / "grades.jsonl")}
        assert grades["sql2s_rel1"]["status"] == "not_graded"
        assert grades["sql2s_rel1"]["correct"] is None
        assert grades["sql2s_rel0"]["correct"] is True
        predictions = _rows(out / "predictions.jsonl")
        assert {p["instance_id"] for p in predictions} == \
            {f"sql2s_rel{i}" for i in (0, 2, 3, 5)}
        assert len(server.log) == total  # the policy is not a setting of the attempts
        back = run_cli(*args)  # and back: the judge's verdicts of the cut attempts are reused
        assert back.returncode == 0, back.stderr
        assert len(server.log) == total
        assert _load(out / "metrics.json")["hdr"]["truncated_unscored"] == 0


def test_rerun_with_other_settings(world: World, tmp_path: Path) -> None:
    """A rerun with one flag changed would have replaced every finished attempt: it exits 2
    naming the settings, and nothing is changed; --resume-any keeps both (trajectories too);
    --restart starts over."""
    out = tmp_path / "run"
    samples = out / "samples.jsonl"
    side = out / "samples.other-settings.jsonl"
    with FakeOpenAI(body_responder=scripted(_script())) as server:
        base = _args(world, server, out)
        assert run_cli(*base).returncode == 0
        before = _files(out)
        first_agent, total = _agent(server), len(server.log)
        typo = run_cli(*base, "--max-tokens", "8", "--temperature", "0.7")
        assert typo.returncode == 2
        line = _error_line(typo)
        assert f"{samples} holds {COUNT} attempts made with other settings" in line, line
        assert "max_tokens: 1024 -> 8" in line and "temperature: 0.0 -> 0.7" in line, line
        assert "--restart" in line and "--resume-any" in line
        assert _files(out) == before and _agent(server) == first_agent
        fewer = run_cli(*base, "--limit", "3")
        assert fewer.returncode == 2 and "limit: null -> 3" in _error_line(fewer)
        assert _files(out) == before
        # only how the run is carried out or reported changed: a plain resume, nothing asked
        same = run_cli(*base, "--concurrency", "3", "--timeout", "30", "--resamples", "20")
        assert same.returncode == 0, same.stderr
        assert len(server.log) == total
        other = run_cli(*base, "--temperature", "0.7", "--resume-any")
        assert other.returncode == 0, other.stderr
        assert f"kept {COUNT} rows of other settings in {side}" in other.stderr
        assert _agent(server) == 2 * first_agent
        assert len(_rows(samples)) == COUNT and len(_rows(side)) == COUNT
        for row in _rows(side):  # each kept attempt keeps its own trajectory
            assert (out / row["trajectory_file"]).is_file(), row["trajectory_file"]
        for row in _rows(samples):
            assert (out / row["trajectory_file"]).is_file()
        assert _load(out / "config.json")["settings"]["temperature"] == 0.7
        back = run_cli(*base, "--resume-any")
        assert back.returncode == 0, back.stderr
        assert _agent(server) == 2 * first_agent  # the first attempts are back, none asked again
        first = [json.loads(line) for line in before["samples.jsonl"].decode().splitlines()]
        restored = _rows(samples)
        assert [{**r, "trajectory_file": None} for r in restored] == \
            [{**r, "trajectory_file": None} for r in first]
        for old, new in zip(first, restored, strict=True):  # the trajectories came back too
            assert (out / new["trajectory_file"]).read_bytes() == before[old["trajectory_file"]]
        for name in ("grades.jsonl", "predictions.jsonl"):
            assert (out / name).read_bytes() == before[name], name
        fresh = run_cli(*base, "--temperature", "0.7", "--restart", "--no-cache")
        assert fresh.returncode == 0, fresh.stderr
        assert f"--restart: discarded {COUNT} rows" in fresh.stderr
        assert _agent(server) == 3 * first_agent
        assert len(_rows(samples)) == COUNT
        both = run_cli(*base, "--restart", "--resume-any")
        assert both.returncode == 2 and "exclude each other" in _error_line(both)


def test_the_built_in_scripts_still_grade(tmp_path: Path) -> None:
    """The default world (three families, S2SQL graded by execution) through the claimed run
    directory: nothing of the world is written, everything lands in the run directory."""
    world = build_world(tmp_path)
    before = world.fingerprint()
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        result = run_cli(*_args(world, server, tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    assert world.fingerprint() == before
    assert not (tmp_path / "run" / ".hopscore.lock").exists()
