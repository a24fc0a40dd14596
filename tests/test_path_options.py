"""Every path option and argument of every command is read one way (hopscore.cli.options.
PathValue): an empty path is refused (``-o ""`` wrote metrics.json into the current folder), a
leading ``~``/``~user`` is expanded once, where the option is read, or refused with a clear
error (``~nosuchuser/x`` crashed with "Could not determine home directory"), exit status 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hopscore.benchmarks import sample_files
from hopscore.cli import COMMANDS, app
from hopscore.cli.options import PathValue
from tests.conftest import run_cli

NOBODY = "~nosuchuser-hopscore"


def _path_params() -> list[tuple[tuple[str, ...], str, bool, tuple[str, ...]]]:
    """(command words, the option's flag or the argument's name, is an argument, values for the
    command's other required parameters) of every path parameter of every command, found from
    the built command line itself."""
    from typing import Any

    from hopscore.cli import LazyGroup

    root = typer_group()
    found: list[tuple[tuple[str, ...], str, bool, tuple[str, ...]]] = []

    def filler(command: Any, skip: Any) -> tuple[str, ...]:
        """Valid values for the required parameters other than ``skip``."""
        out: list[str] = []
        for param in command.params:
            if param is skip or not param.required:
                continue
            choices = getattr(param.type, "choices", None)
            value = str(next(iter(choices))) if choices else "x"
            out += [value] if param.param_type_name == "argument" else [param.opts[0], value]
        return tuple(out)

    def walk(words: tuple[str, ...], command: Any) -> None:
        for param in command.params:
            if isinstance(param.type, PathValue):
                flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
                found.append((words, flag, param.param_type_name == "argument",
                              filler(command, param)))
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk((*words, name), sub)

    assert isinstance(root, LazyGroup)
    for name in COMMANDS:
        command = root.get_command(None, name)
        assert command is not None
        walk((name,), command)
    return found


def typer_group():  # type: ignore[no-untyped-def]
    import typer.main

    return typer.main.get_group(app)


PARAMS = _path_params()


def test_every_command_has_its_path_options_read_by_path_value() -> None:
    commands = {words[0] for words, _, _, _ in PARAMS}
    # every command that reads or writes files has at least one path parameter
    assert {"score", "judge", "sql-match", "run", "merge", "export", "report", "compare",
            "suite", "demo"} <= commands
    named = {(words, flag) for words, flag, _, _ in PARAMS}
    assert {(("export",), "--output"), (("merge",), "--output"), (("merge",), "shards"),
            (("suite", "mcr"), "--output-dir")} <= named


@pytest.mark.parametrize(("words", "flag", "argument", "others"), PARAMS,
                         ids=[" ".join((*w, f)) for w, f, _, _ in PARAMS])
def test_empty_and_unknown_home_paths_are_refused(words: tuple[str, ...], flag: str,
                                                   argument: bool, others: tuple[str, ...]
                                                   ) -> None:
    runner = CliRunner()
    for value, expected in (("", "an empty path"), (f"{NOBODY}/x", "no user"),
                            ("   ", "an empty path")):
        args = [*words, *others, value] if argument else [*words, *others, flag, value]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        said = " ".join(result.output.replace("\u2502", " ").split())
        assert expected in said, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_tilde_is_expanded_once_and_dot_slash_keeps_it_literal(tmp_path: Path) -> None:
    found = {s.benchmark: s for s in sample_files.samples()}
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(home)}
    with found["bamboogle"].paths() as (gold, predictions, _aliases):
        score = ["score", "bamboogle", "--gold", gold, "--predictions", predictions]
        # as a shell leaves it after --output-dir=: expanded, claimed and written in one place
        done = run_cli(*score, "--output-dir=~/scored", cwd=work, env=env)
        assert done.returncode == 0, done.stderr
        assert (home / "scored" / "metrics.json").is_file()
        assert not (work / "~").exists()
        # ./~name is a folder named ~name here, never someone's home (nor a crash)
        (work / NOBODY).mkdir()
        literal = run_cli(*score, "-o", f"./{NOBODY}/scored", cwd=work, env=env)
        assert literal.returncode == 0, literal.stderr
        assert (work / NOBODY / "scored" / "scores.jsonl").is_file()
        exported = run_cli("export", home / "scored", "-o", f"./{NOBODY}/t.csv", cwd=work,
                           env=env)
        assert exported.returncode == 0, exported.stderr
        assert (work / NOBODY / "t.csv").is_file()
        # an unknown user: exit 2, one clear message, nothing written
        refused = run_cli(*score, "-o", f"{NOBODY}/x", cwd=work, env=env)
        assert refused.returncode == 2
        assert "no user" in refused.stderr and f"./{NOBODY}/x" in refused.stderr
        assert "Traceback" not in refused.stderr and "home directory" not in refused.stderr
        empty = run_cli(*score, "-o", "", cwd=work, env=env)
        assert empty.returncode == 2 and "an empty path" in empty.stderr
        assert sorted(os.listdir(work)) == [NOBODY]
