"""The entry point: typer is the one parser, command modules load lazily, errors map to statuses."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import FIXTURES, SRC, run_cli

GOLD = FIXTURES / "hotpotqa" / "dev_small.json"
HGOLD = FIXTURES / "hybridqa" / "dev_reference_small.json"
HPRED = FIXTURES / "hybridqa" / "predictions_targeted.json"


def modules_after(args: list[str]) -> set[str]:
    """``sys.modules`` after ``hopscore ARGS`` ran in a fresh interpreter."""
    code = (
        "import contextlib, io, json, sys\n"
        "from hopscore.launch import main\n"
        "out = io.StringIO()\n"
        "try:\n"
        "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
        f"        main({args!r})\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, out.getvalue()\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC), "PATH": ""}, check=True)
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_version_loads_no_command_module() -> None:
    loaded = modules_after(["--version"])
    assert not any(name.startswith("hopscore.cli.") for name in loaded)
    assert "numpy" not in loaded and "pydantic" not in loaded


def test_version_is_answered_before_the_command_line_loads() -> None:
    """``hopscore --version`` costs little more than the interpreter: none of the heavy or
    command-line modules load (their import, not the printing, is the start-up's cost)."""
    loaded = modules_after(["--version"])
    heavy = {"numpy", "scipy", "aiohttp", "typer", "click", "rich", "msgspec", "pint",
             "hopscore.cli", "hopscore.benchmarks", "hopscore.files.outputs"}
    assert loaded.isdisjoint(heavy), loaded & heavy


def test_help_of_score_loads_no_numerics() -> None:
    """The help lists the benchmarks (their declarations), not their scorers' numerics."""
    loaded = modules_after(["score", "--help"])
    assert loaded.isdisjoint({"numpy", "scipy", "pint", "aiohttp"}), loaded


def test_a_command_loads_only_its_own_module(tmp_path) -> None:
    loaded = modules_after(["score", "hybridqa", "-g", str(HGOLD), "-p", str(HPRED),
                            "-o", str(tmp_path)])
    commands = {name for name in loaded if name.startswith("hopscore.cli.")}
    # request_options: the option definitions score --judge shares with judge and run
    # (--judge-max-outage); it imports nothing heavier than typer
    assert commands == {"hopscore.cli.score", "hopscore.cli.options",
                        "hopscore.cli.request_options"}
    assert "pydantic" not in loaded  # typer's parse-time coercion through pydantic costs ~0.1 s


def test_help_lists_every_command_in_its_panel() -> None:
    result = run_cli("--help")
    assert result.returncode == 0
    for name in ("score", "judge", "sql-match", "run", "demo", "suite", "validate-predictions",
                 "hdr-tasks", "compare", "report", "analyze"):
        assert f" {name} " in result.stdout, name


def test_unknown_command_is_a_usage_error() -> None:
    result = run_cli("scroe", "hotpotqa")
    assert result.returncode == 2
    assert "No such command" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["score", "nosuchbench", "-g", str(GOLD), "-p", str(GOLD)],
        ["score", "hotpotqa", "-g", "missing.json", "-p", str(GOLD)],
        ["score", "hotpotqa", "-g", str(GOLD), "-p", str(FIXTURES)],
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
