"""Shared test fixtures: paths to real data (skipped when absent) and a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
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


def run_cli(
    *args: str | Path,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> CliResult:
    """Run ``python -m hopscore ARGS`` in a subprocess, as a user would."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), full_env.get("PYTHONPATH")]))
    full_env.setdefault("NO_PROXY", "127.0.0.1,localhost")
    full_env["COLUMNS"] = "200"
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [sys.executable, "-m", "hopscore", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return run_cli
