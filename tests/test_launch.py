"""The short way into ``hopscore score`` reads arguments and behaves exactly like the typer one."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import typer

from hopscore.cli import app
from hopscore.launch import REQUIRED, SCORE_OPTIONS, quick_score_request
from hopscore.stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from tests.conftest import FIXTURES, run_cli

GOLD = FIXTURES / "hotpotqa" / "dev_small.json"


def score_command() -> Any:
    """The click command (typer vendors click, so it is not typed against the click package)."""
    group: Any = typer.main.get_command(app)
    return group.commands["score"]


def typer_params(args: list[str]) -> dict[str, Any]:
    """What the typer command would be called with for ``hopscore ARGS``."""
    assert args[0] == "score"
    context = score_command().make_context("score", list(args[1:]))
    return dict(context.params)


ACCEPTED = [
    ["score", "hotpotqa", "--gold", "g.json", "--predictions", "p.json"],
    ["score", "-g", "g.json", "hotpotqa", "-p", "p.json", "-o", "out"],
    ["score", "--gold=g.json", "--predictions=p.jsonl", "--output-dir=o/x", "fermi"],
    ["score", "2wikimultihopqa", "-g", "g", "-p", "p", "--aliases", "a.jsonl", "--strict"],
    ["score", "--strict", "bamboogle", "-p", "p p.json", "-g", "dir/ünï.json", "-o", "./out"],
    ["score", "hybridqa", "-g", "g", "-p", "p", "--resamples", "0", "--seed=17"],
    ["score", "hybridqa", "-g", "g", "-p", "p", "--resamples=500"],
]


@pytest.mark.parametrize("args", ACCEPTED, ids=lambda a: " ".join(a[1:3]))
def test_usual_arguments_are_read_as_typer_reads_them(args: list[str]) -> None:
    request = quick_score_request(args)
    assert request is not None
    read = asdict(request)
    read["resamples"] = DEFAULT_RESAMPLES if request.resamples is None else request.resamples
    read["seed"] = DEFAULT_SEED if request.seed is None else request.seed
    params = typer_params(args)
    assert read == {name: params[name] for name in read}
    assert params["judge"] is False  # the options not read here only matter with --judge


REFUSED = [
    [],
    ["demo"],
    ["--help"],
    ["score"],
    ["score", "--help"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "-h"],
    ["score", "hotpotqa", "-g", "g"],  # --predictions missing
    ["score", "-g", "g", "-p", "p"],  # no benchmark
    ["score", "a", "b", "-g", "g", "-p", "p"],  # two benchmarks
    ["score", "hotpotqa", "-g", "g", "-p", "p", "-g", "h"],  # repeated
    ["score", "hotpotqa", "-gg", "-p", "p"],
    ["score", "hotpotqa", "-g=g", "-p", "p"],
    ["score", "hotpotqa", "-g", "g", "-p"],
    ["score", "hotpotqa", "-g", "-p", "p"],  # a value starting with "-"
    ["score", "hotpotqa", "-g", "", "-p", "p"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--strict=yes"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--", "x"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--judge"],  # not read here
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--resamples", "-1"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--resamples", "1_000"],
    ["score", "hotpotqa", "-g", "g", "-p", "p", "--seed", "²"],
]


@pytest.mark.parametrize("args", REFUSED, ids=lambda a: " ".join(a) or "(none)")
def test_anything_else_goes_to_typer(args: list[str]) -> None:
    assert quick_score_request(args) is None


def test_the_options_read_here_are_the_typer_commands_options() -> None:
    """Each flag read here exists on the typer command with the same meaning, and every required
    option of the command is read here (an option known only to typer just takes the long way)."""
    options = {p.name: p for p in score_command().params if p.param_type_name == "option"}
    for name, (flags, takes_value) in SCORE_OPTIONS.items():
        assert name in options
        assert set(flags) == set(options[name].opts) | set(options[name].secondary_opts)
        assert takes_value == (not options[name].is_flag)
        assert options[name].multiple is False
    assert {name for name, option in options.items() if option.required} == set(REQUIRED)


@pytest.mark.parametrize(
    "extra, status",
    [([], 0), (["--strict"], 1), (["--aliases", "missing.jsonl"], 0), (["--resamples", "0"], 0)],
)
def test_both_ways_print_and_write_the_same(tmp_path: Path, extra: list[str], status: int) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"id": "hp-01", "answer": "yes"}\n{"id": "zz", "answer": "x"}\n')
    outputs = []
    for way, env in (("quick", {}), ("typer", {"HOPSCORE_FULL_CLI": "1"})):
        out = tmp_path / way
        result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", predictions, "-o", out, *extra,
                         env=env)  # fmt: skip
        assert result.returncode == status, result.stderr
        outputs.append(
            (
                result.stdout,
                result.stderr.replace(str(out), "OUT"),
                (out / "metrics.json").read_text(),
                (out / "scores.jsonl").read_text(),
            )
        )
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize(
    "args",
    [
        ["score", "nosuchbench", "-g", str(GOLD), "-p", str(GOLD)],
        ["score", "hotpotqa", "-g", "missing.json", "-p", str(GOLD)],
        ["score", "hotpotqa", "-g", str(GOLD), "-p", str(FIXTURES)],
    ],
)
def test_both_ways_report_errors_the_same(args: list[str]) -> None:
    quick = run_cli(*args)
    full = run_cli(*args, env={"HOPSCORE_FULL_CLI": "1"})
    assert quick.returncode == full.returncode == 2
    assert quick.stderr == full.stderr and quick.stderr.startswith("error: ")
    assert "Traceback" not in quick.stderr
