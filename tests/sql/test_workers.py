"""The SQL worker processes: no bytecode written, gone with their parent, Ctrl-C honoured."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hopscore.sql.sandbox import SqlExecutor
from tests.conftest import SRC
from tests.procs import default_sigint, ignored_sigint, open_files
from tests.sql.dbs import build_shop


def test_workers_write_no_bytecode_into_the_package(tmp_path: Path) -> None:
    installed = tmp_path / "site"
    shutil.copytree(SRC / "hopscore", installed / "hopscore",
                    ignore=shutil.ignore_patterns("__pycache__"))
    db = build_shop(tmp_path / "shop.sqlite")
    script = ("from hopscore.sql.sandbox import SqlExecutor\n"
              "with SqlExecutor(1) as ex:\n"
              f"    assert ex.execute({str(db)!r}, 'SELECT count(*) FROM people').rows == [(6,)]\n")
    env = {**os.environ, "PYTHONPATH": str(installed), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
    assert not list(installed.rglob("*.pyc")), list(installed.rglob("*.pyc"))


ENDLESS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT count(*) FROM c")


def _workers_of(parent: int) -> list[int]:
    """The SQL worker processes whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"hopscore.sql.worker" in cmdline:
            found.append(int(entry.name))
    return found


def _open_databases(pid: int) -> int:
    """How many SQLite files process ``pid`` has open (a worker opens one for each query)."""
    return sum(target.endswith(".sqlite") for target in open_files(pid))


def wait_until_querying(workers: list[int], wait_s: float = 60) -> None:
    """Wait until every one of ``workers`` has its database open: it is inside its query (an
    event, where a fixed sleep would be too short on a busy machine)."""
    deadline = time.monotonic() + wait_s
    while not all(_open_databases(pid) for pid in workers):
        assert time.monotonic() < deadline, "the workers did not start their queries"
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _start_busy_run(tmp_path: Path, *timeout: str, background: bool = False
                    ) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A sql-match run whose two workers are busy with endless queries (``background``: with
    Ctrl-C ignored, as a job started with ``nohup ... &``)."""
    db = build_shop(tmp_path / "shop.sqlite")
    source = tmp_path / "in.jsonl"
    source.write_text("".join(
        json.dumps({"instance_id": str(i), "db_path": str(db), "gold_sql": ENDLESS,
                    "response": "```sql\nSELECT 1\n```"}) + "\n" for i in range(4)))
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    # Ctrl-C at its default in the child, however the tests were started (see default_sigint)
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", "sql-match", "-i", str(source),
                             "-o", str(tmp_path / "out.jsonl"), "--workers", "2", *timeout],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=ignored_sigint if background else default_sigint)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.05)
            workers = _workers_of(proc.pid)
        assert len(workers) == 2, "the workers did not start"
        wait_until_querying(workers)
    except BaseException:
        _end(proc)
        raise
    return proc, workers


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` if it still runs (a failed test leaves nothing: its workers follow it)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_their_parent(how: signal.Signals, tmp_path: Path) -> None:
    proc, workers = _start_busy_run(tmp_path, "--timeout", "0")
    try:
        proc.send_signal(how)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and any(map(_alive, workers)):
            time.sleep(0.05)
        assert not any(map(_alive, workers)), f"workers still running 2 s after {how.name}"
    finally:
        _end(proc)


@pytest.mark.parametrize("timeout", ["0", "120"])
def test_ctrl_c_exits_within_two_seconds(timeout: str, tmp_path: Path) -> None:
    proc, workers = _start_busy_run(tmp_path, "--timeout", timeout)
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        assert time.monotonic() - started < 2.0
        assert proc.returncode == 130
        assert proc.stderr is not None and b"Traceback" not in proc.stderr.read()
        time.sleep(0.2)
        assert not any(map(_alive, workers))
    finally:
        _end(proc)


def test_sigterm_stops_a_background_run_as_ctrl_c_does(tmp_path: Path) -> None:
    """A run started with Ctrl-C ignored (``nohup ... &``): Ctrl-C does nothing, SIGTERM stops
    it as Ctrl-C would (within 2 s, what it kept said, status 143), and its workers end."""
    proc, workers = _start_busy_run(tmp_path, "--timeout", "0", background=True)
    try:
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None, "Ctrl-C stopped a run started with Ctrl-C ignored"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        assert time.monotonic() - started < 2.0
        assert proc.returncode == 143
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode()
        assert "interrupted: 0 verdicts are saved" in stderr and "Traceback" not in stderr
        time.sleep(0.2)
        assert not any(map(_alive, workers))
    finally:
        _end(proc)


def _terminate_while_waiting(db: Path) -> None:
    """Three threads on a sandbox of two workers busy with endless queries (the third waits
    for a worker); terminate() ends all three waits at once."""
    executor = SqlExecutor(2)
    results: list[object] = []

    def wait() -> None:
        results.append(executor.execute(db, ENDLESS, timeout_s=0))

    threads = [threading.Thread(target=wait) for _ in range(3)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(executor.worker_pids()) < 2:
        assert time.monotonic() < deadline, "the workers did not start"
        time.sleep(0.02)
    wait_until_querying(executor.worker_pids())
    started = time.monotonic()
    executor.terminate()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(t.is_alive() for t in threads), "a thread still waits on its worker"
    assert time.monotonic() - started < 3
    assert len(results) == 3


def test_terminate_wakes_every_thread_waiting_on_an_endless_query(tmp_path: Path) -> None:
    """What Ctrl-C does to a run without a timeout, in process and five times over: a wait
    once missed the end of a pipe closed under it and hung the run for good."""
    db = build_shop(tmp_path / "shop.sqlite")
    for _ in range(5):
        _terminate_while_waiting(db)
