"""Ctrl-C and SIGKILL of a HybridDeepResearch run whose agent's run_sql is busy: the run exits
within 2 s and no SQL worker outlives it, whatever --sql-timeout is."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import _cli_env
from tests.hdr.world import ALL_TASKS, build_world, scripted
from tests.openai_server import FakeOpenAI
from tests.procs import default_sigint
from tests.sql.test_workers import _alive, _workers_of, wait_until_querying

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
TASK = {"id": "sql2s_busy", "final_question": "Busy case: which city hosts the best seller's "
        "maker?", "hint": "", "db": "shop", "final_answer": "Springfield"}


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_a_busy_run_sql_ends_with_the_run(how: signal.Signals, tmp_path: Path) -> None:
    world = build_world(tmp_path, [TASK])
    ALL_TASKS.append(TASK)
    respond = scripted({"sql2s_busy": [[("run_sql", {"sql": ENDLESS})]]})
    proc: subprocess.Popen[bytes] | None = None
    try:
        with FakeOpenAI(body_responder=respond) as server:
            proc = subprocess.Popen(
                [sys.executable, "-m", "hopscore", "run", "hybrid-deep-research", "--tasks",
                 str(world.tasks), "--db-root", str(world.db_root), "--corpus",
                 str(world.corpus), "--model", "openai/busy", "--base-url", server.base_url,
                 "--no-grade", "-o", str(tmp_path / "run"), "--no-cache", "--no-progress",
                 "--sql-timeout", "600", "--task-timeout", "600"],
                env=_cli_env(None), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                preexec_fn=default_sigint)
            deadline = time.monotonic() + 90
            workers: list[int] = []
            while time.monotonic() < deadline and not workers and proc.poll() is None:
                time.sleep(0.05)
                workers = _workers_of(proc.pid)
            assert workers, "no SQL worker started"
            wait_until_querying(workers)  # the worker is inside the endless query now
            started = time.monotonic()
            proc.send_signal(how)
            proc.wait(timeout=30)
            took = time.monotonic() - started
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline and any(map(_alive, workers)):
                time.sleep(0.05)
            assert not any(map(_alive, workers)), f"a worker outlived {how.name}"
            if how == signal.SIGINT:
                assert took < 2.0, f"Ctrl-C took {took:.1f} s"
                assert proc.stderr is not None
                stderr = proc.stderr.read().decode(errors="replace")
                assert "Traceback" not in stderr, stderr
    finally:
        ALL_TASKS.remove(TASK)
        if proc is not None and proc.poll() is None:
            proc.kill()  # its workers follow it
            proc.wait()
