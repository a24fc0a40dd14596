"""Shared test fixtures: paths to real data (skipped when absent) and a CLI runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

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
