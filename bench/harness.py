"""Shared helpers of the speed benchmarks: running a child process and measuring it, medians,
the printed table and the results file.

A child is measured with ``os.wait4``, which returns that one child's resource usage: wall time
(measured here), CPU time (user + system) and peak resident set size. CPU time is the steadier
figure on a machine that other jobs share; both are reported.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass
class Run:
    """One child process: its wall and CPU seconds, peak RSS in MiB, exit status and output."""

    wall_s: float
    cpu_s: float
    max_rss_mib: float
    returncode: int
    stdout: str
    stderr: str


def run_child(
    cmd: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Run:
    """Run ``cmd`` to completion and measure it (stdout and stderr are captured to files)."""
    with (
        open(os.devnull, "rb") as stdin,
        _TempOutput() as out,
        _TempOutput() as err,
    ):
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd), cwd=cwd, env=env, stdin=stdin, stdout=out.handle, stderr=err.handle
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        return Run(
            wall_s=wall,
            cpu_s=usage.ru_utime + usage.ru_stime,
            max_rss_mib=usage.ru_maxrss / 1024,  # kilobytes on Linux
            returncode=proc.returncode,
            stdout=out.read(),
            stderr=err.read(),
        )


class _TempOutput:
    def __init__(self) -> None:
        self.handle = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)

    def __enter__(self) -> _TempOutput:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def read(self) -> str:
        self.handle.seek(0)
        return self.handle.read().decode("utf-8", errors="replace")


def checked(run: Run, what: str) -> Run:
    if run.returncode != 0:
        sys.exit(f"{what} failed with status {run.returncode}:\n{run.stderr[-3000:]}")
    return run


@dataclass
class Series:
    """Repeated measurements of one command, summarised by medians (and the best run)."""

    name: str
    command: list[str]
    runs: list[Run] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        walls = [r.wall_s for r in self.runs]
        cpus = [r.cpu_s for r in self.runs]
        rss = [r.max_rss_mib for r in self.runs]
        return {
            "command": " ".join(self.command),
            "repeats": len(self.runs),
            "wall_s_median": statistics.median(walls),
            "wall_s_min": min(walls),
            "cpu_s_median": statistics.median(cpus),
            "max_rss_mib_max": max(rss),
            "wall_s_all": walls,
            "cpu_s_all": cpus,
        }


def measure(
    name: str,
    cmd: Sequence[str],
    repeats: int,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    warm_up: bool = True,
) -> Series:
    """Run ``cmd`` once to warm up (file cache, bytecode cache), then ``repeats`` times."""
    series = Series(name, list(cmd))
    if warm_up:
        checked(run_child(cmd, cwd=cwd, env=env), name)
    for _ in range(repeats):
        series.runs.append(checked(run_child(cmd, cwd=cwd, env=env), name))
    return series


def measure_interleaved(
    commands: Sequence[tuple[str, Sequence[str], Path | None, dict[str, str] | None]],
    repeats: int,
    *,
    warm_up: bool = True,
) -> dict[str, Series]:
    """Like :func:`measure` for several ``(name, cmd, cwd, env)``, taking turns: each round runs
    every command once, so a change of machine load falls on all of them alike."""
    series = {name: Series(name, list(cmd)) for name, cmd, _, _ in commands}
    for round_number in range(repeats + (1 if warm_up else 0)):
        for name, cmd, cwd, env in commands:
            run = checked(run_child(cmd, cwd=cwd, env=env), name)
            if round_number > 0 or not warm_up:
                series[name].runs.append(run)
    return series


def hopscore_env() -> dict[str, str]:
    """The environment for ``python -m hopscore`` from this checkout.

    Bytecode caching is allowed (``PYTHONDONTWRITEBYTECODE`` removed): an installed package has
    its ``.pyc`` files, written by pip, and should not be timed compiling its own source.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "120"
    return env


def machine() -> dict[str, Any]:
    """What the figures depend on: CPUs, load, Python, and the packages that matter."""
    versions = {}
    for module in ("orjson", "typer", "rich", "numpy"):
        try:
            versions[module] = __import__(module).__version__
        except (ImportError, AttributeError):
            versions[module] = None
    return {
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": versions,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


def speedup(official: float, ours: float) -> float:
    return official / ours if ours > 0 else float("inf")


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned table on stdout."""
    lines = [list(headers), *([_cell(v) for v in row] for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]
    for line in lines:
        first, *rest = line
        cells = (c.rjust(w) for c, w in zip(rest, widths[1:], strict=True))
        print("  ".join([first.ljust(widths[0]), *cells]))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.0f}"
    return str(value)


def write_results(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, default=_jsonable) + "\n", encoding="utf-8")
    return path


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Run):
        return asdict(value)
    raise TypeError(type(value).__name__)
