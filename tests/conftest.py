"""Shared test fixtures: paths to real data (skipped when absent), a CLI runner, and the check
that no process a test started outlives it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.procs import OWNER, left_running, owned, stat

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: Real benchmark files: next to the checkout (``../shared/data``), or HOPSCORE_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("HOPSCORE_SHARED_DATA", REPO.parent / "shared" / "data"))


def shared_file(relative: str) -> Path:
    """A file under the shared real-data folder; the test is skipped when it is not there."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def _cli_env(env: dict[str, str] | None) -> dict[str, str]:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), full_env.get("PYTHONPATH")]))
    full_env.setdefault("NO_PROXY", "127.0.0.1,localhost")
    full_env["COLUMNS"] = "200"
    if env:
        full_env.update(env)
    return full_env


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> CliResult:
    """Run ``python -m hopscore ARGS`` in a subprocess, as a user would."""
    full_env = _cli_env(env)
    proc = subprocess.run(
        [sys.executable, "-m", "hopscore", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def kill_cli_when(*args: str | Path, watched: Path, lines: int,
                  env: dict[str, str] | None = None, wait_s: float = 60) -> int:
    """Start ``python -m hopscore ARGS``, SIGKILL it as soon as ``watched`` holds ``lines``
    lines (or after ``wait_s``), and return its exit status (``-SIGKILL`` when killed)."""
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *map(str, args)],
                            env=_cli_env(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and proc.poll() is None:
            if watched.exists() and watched.read_bytes().count(b"\n") >= lines:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    return proc.returncode


@pytest.fixture
def cli():
    return run_cli


# --- a cache folder of the run's own ---------------------------------------------------------
#: what hopscore keeps between runs (responses, digests, remembered gold) goes to a folder of
#: this test run, removed at its end, not to the user's ~/.cache/hopscore; a run started with
#: HOPSCORE_CACHE_DIR set uses that folder
_RUN_CACHE: str | None = None
if not os.environ.get("HOPSCORE_CACHE_DIR"):
    _RUN_CACHE = tempfile.mkdtemp(prefix="hopscore-test-cache-")
    os.environ["HOPSCORE_CACHE_DIR"] = _RUN_CACHE


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RUN_CACHE is not None:
        shutil.rmtree(_RUN_CACHE, ignore_errors=True)


# --- no process left behind ------------------------------------------------------------------
#: this test process's mark, inherited by every process it starts (and theirs)
TOKEN = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
os.environ[OWNER] = TOKEN
#: seconds a test's processes get to end after it (a killed one's children follow it)
_GRACE_S = 5.0
_spawned = [0]
_execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]


def _counted(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> Any:
    _spawned[0] += 1
    return _execute_child(self, *args, **kwargs)


subprocess.Popen._execute_child = _counted  # type: ignore[attr-defined]


def _shared_workers() -> set[int]:
    """SQL workers of an executor of this process: a fixture's executor serves many tests."""
    me = str(os.getpid())
    return {pid for pid, line in owned(TOKEN).items()
            if "hopscore.sql.worker" in line and stat(pid)[1:2] == [me]}


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """A test that started processes fails when one of ours (``python -m hopscore``, a SQL
    worker, Ray, a server script: :data:`tests.procs.OURS`) still runs once it ended; the
    process is killed. Looked at only after a test that started a process."""
    before = _spawned[0]
    yield
    if _spawned[0] == before:
        return
    left = left_running(TOKEN, _GRACE_S, keep=_shared_workers())
    if left:
        pytest.fail("processes outlived the test (killed now):\n"
                    + "\n".join(f"  {pid} {line[:160]}" for pid, line in left.items()),
                    pytrace=False)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run fails when any process of ours outlived the tests (fixtures' included)."""
    left = left_running(TOKEN, _GRACE_S)
    if not left:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = ["processes outlived the test run (killed now):",
             *(f"  {pid} {line[:160]}" for pid, line in left.items())]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line, red=True)
        else:
            print(line, file=sys.stderr)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
