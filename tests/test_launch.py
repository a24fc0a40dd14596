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


def test_score_ends_quickly_with_everything_written_and_atexit_run(tmp_path) -> None:
    """``hopscore score`` skips the interpreter's teardown (:func:`hopscore.launch.quick_exit`):
    its table reaches a file, its outputs are whole, and ``atexit`` handlers still run."""
    marker = tmp_path / "atexit-ran"
    code = ("import atexit, pathlib, sys\n"
            f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'yes')\n"
            "sys.argv[0] = 'hopscore'\n"
            "from hopscore.launch import main\n"
            "main()\n")
    out = tmp_path / "out"
    gold = json.loads(GOLD.read_text())
    with open(tmp_path / "stdout.txt", "w") as stdout:
        proc = subprocess.run([sys.executable, "-c", code, "score", "hotpotqa", "-g", str(GOLD),
                               "-p", str(_predictions(tmp_path, gold)), "-o", str(out)],
                              stdout=stdout, stderr=subprocess.PIPE,
                              text=True, env={"PYTHONPATH": str(SRC), "PATH": ""}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == "yes"
    table = (tmp_path / "stdout.txt").read_text()
    assert "joint_f1" in table
    lines = (out / "scores.jsonl").read_text().splitlines()
    assert len(lines) == len(gold) and all(json.loads(line)["id"] for line in lines)
    assert json.loads((out / "metrics.json").read_text())["metrics"]["em"] == 1.0


def _predictions(folder, gold: list[dict]):
    path = folder / "predictions.json"
    path.write_text(json.dumps({"answer": {g["_id"]: g["answer"] for g in gold},
                                "sp": {g["_id"]: g["supporting_facts"] for g in gold}}))
    return path


def test_score_into_a_closed_pipe_still_exits_as_usual(tmp_path) -> None:
    """Flushing into a reader that has gone fails: the usual exit (no quick one) follows, with
    status 1 as before."""
    predictions = _predictions(tmp_path, json.loads(GOLD.read_text()))
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", "score", "hotpotqa", "-g",
                             str(GOLD), "-p", str(predictions)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={"PYTHONPATH": str(SRC), "PATH": ""})
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before anything is written
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err  # not 0: the table was not delivered
    assert b"Traceback" not in err
