"""Every command's ``--help`` reads whole at 80 and 120 columns.

The other CLI tests run at COLUMNS=200 (``tests/conftest.py``); these render at the widths of
real terminals and fail on what a user would see go wrong: a line wider than the terminal, an
ellipsis where text was cut, a word folded in two, a help text that is not there in full, an
orphan word left by a hand line break, a flag with a value placeholder, a required option not
marked, a command without examples, or an example that is not a valid command.
"""

from __future__ import annotations

import re
from functools import cache
from itertools import pairwise
from typing import Any

import pytest

from tests import docs_runner
from tests.conftest import run_cli

WIDTHS = (80, 120)
BOX = "│╭╮╰╯─"


@cache
def command_paths() -> list[tuple[str, ...]]:
    """Every command and group of the CLI, as argument tuples (``()`` is the root)."""
    import typer.main

    from hopscore.cli import app

    root: Any = typer.main.get_command(app)
    context = type(root).context_class
    paths: list[tuple[str, ...]] = [()]

    def walk(group: Any, prefix: tuple[str, ...], parent: Any) -> None:
        ctx = context(group, parent=parent)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            paths.append((*prefix, name))
            if hasattr(command, "list_commands"):
                walk(command, (*prefix, name), ctx)

    walk(root, (), None)
    return paths


@cache
def command_of(path: tuple[str, ...]) -> Any:
    import typer.main

    from hopscore.cli import app

    command: Any = typer.main.get_command(app)
    ctx = type(command).context_class(command)
    for name in path:
        command = command.get_command(ctx, name)
        ctx = type(command).context_class(command, parent=ctx)
    return command


@cache
def rendered(path: tuple[str, ...], width: int) -> str:
    result = run_cli(*path, "--help", env={"COLUMNS": str(width), "TERM": "dumb"})
    assert result.returncode == 0, result.stderr
    return result.stdout


def words(text: str) -> list[str]:
    return "".join(" " if c in BOX else c for c in text).split()


def contains_run(haystack: list[str], needle: list[str]) -> bool:
    if not needle:
        return True
    first = needle[0]
    return any(haystack[i:i + len(needle)] == needle
               for i, word in enumerate(haystack) if word == first)


def help_words(text: str | None) -> list[str]:
    from hopscore.cli.help import paragraphs

    return " ".join(paragraphs(text or "")).split()


def for_one(param: Any) -> tuple[str, ...]:
    """The words after the command that show ``param``: the benchmark of a panel of options
    for one benchmark only (``hopscore run --help`` folds them; ``hopscore run
    hybrid-deep-research --help`` lists them), else none."""
    from hopscore.cli.help import _FOR_ONE

    found = _FOR_ONE.search(getattr(param, "rich_help_panel", None) or "")
    return (found.group(1),) if found else ()


PATHS = command_paths()
IDS = [" ".join(p) or "hopscore" for p in PATHS]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_help_fits_and_nothing_is_cut(path: tuple[str, ...], width: int) -> None:
    text = rendered(path, width)
    for number, line in enumerate(text.splitlines(), 1):
        assert len(line) <= width, f"line {number} is {len(line)} columns: {line!r}"
        assert "…" not in line, f"line {number} is cut: {line!r}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_every_help_text_is_shown_whole(path: tuple[str, ...], width: int) -> None:
    """The words of the description and of every option's help appear in order, unbroken:
    nothing is cut, nothing is folded inside a word, no markup is eaten."""
    from hopscore.cli.help import paragraphs, split_examples

    shown = words(rendered(path, width))
    command = command_of(path)
    folded = {extra: words(rendered((*path, *extra), width))
              for extra in {for_one(param) for param in command.params} if extra}
    before, examples, after = split_examples(paragraphs(command.help or ""))
    pieces = {"description": help_words("\n\n".join(before)),
              "after the examples": help_words("\n\n".join(after))}
    for n, example in enumerate(examples):  # shell-wrapped: compare without the backslashes
        pieces[f"example {n}"] = example.split()
    shown_commands = [w for w in shown if w != "\\"]
    elsewhere: dict[str, list[str]] = {}
    for param in command.params:
        if not getattr(param, "hidden", False):
            name = param.opts[0] if param.opts else param.name
            pieces[name] = help_words(getattr(param, "help", None))
            if for_one(param):
                elsewhere[name] = folded[for_one(param)]
    missing = [name for name, needle in pieces.items()
               if not contains_run(shown_commands if name.startswith("example")
                                   else elsewhere.get(name, shown), needle)]
    assert not missing, f"help not shown whole at {width} columns for: {missing}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_no_orphan_words_in_the_description(path: tuple[str, ...]) -> None:
    """Prose is wrapped by the renderer, never by hand: a line is never broken before a word
    that would have fitted on it."""
    width = 80
    lines = rendered(path, width).splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("╭")), len(lines))
    prose = lines[:end]
    for before, after in pairwise(prose):
        if not before.strip() or not after.strip() or not after.startswith(" ") \
                or after.startswith("   ") or before.rstrip().endswith("\\"):
            continue
        first = after.split()[0]
        room = width - 1 - len(before.rstrip())
        assert len(first) + 1 > room, f"orphan break before {first!r}: {before.rstrip()!r}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_flags_take_no_value_and_required_options_are_marked(path: tuple[str, ...]) -> None:
    text = rendered(path, 120)
    command = command_of(path)
    for param in command.params:
        if param.param_type_name != "option" or getattr(param, "hidden", False):
            continue
        name = param.opts[0]
        lines = rendered((*path, *for_one(param)), 120).splitlines()
        line = next((ln for ln in lines if re.search(rf"(?<![\w-]){re.escape(name)}"
                                                     r"(?![\w-])", ln)), "")
        assert line, f"{name} is not listed"
        if getattr(param, "is_flag", False):
            assert not re.search(rf"{re.escape(name)}(/[\w-]+)?(, -\w)? [A-Z<]", line), line
        if param.required:
            assert line.lstrip("│ ").startswith("*"), f"{name} is required but not marked"
    for param in command.params:
        if param.required:
            assert "[required]" in text


@pytest.mark.parametrize("path", [p for p in PATHS if p], ids=[i for i in IDS if i != "hopscore"])
def test_every_command_has_examples_that_parse(path: tuple[str, ...]) -> None:
    from hopscore.cli.help import EXAMPLES, paragraphs, split_examples

    command = command_of(path)
    parts = paragraphs(command.help or "") + paragraphs(command.epilog or "")
    assert EXAMPLES in parts, f"hopscore {' '.join(path)} --help has no {EXAMPLES} block"
    examples = [line.strip() for part in split_examples(parts)[1]
                for line in part.splitlines() if line.strip().startswith("hopscore ")]
    assert examples, "the Examples block holds no hopscore command"
    if hasattr(command, "list_commands"):
        return
    for example in examples:
        words_ = docs_runner.shlex.split(example)[1:]
        assert words_[:len(path)] == list(path), f"example of another command: {example}"
        problem = docs_runner.check_command(words_)
        assert problem is None, f"{example}: {problem}"


def test_the_renderer_wraps_examples_as_shell_commands() -> None:
    from hopscore.cli.help import shell_lines

    lines = shell_lines("hopscore score hotpotqa --gold hotpot_dev_distractor_v1.json "
                        "--predictions predictions.json --output-dir runs/x", 50)
    assert lines == ["hopscore score hotpotqa \\",
                     "    --gold hotpot_dev_distractor_v1.json \\",
                     "    --predictions predictions.json \\",
                     "    --output-dir runs/x"]
    assert all(len(line) <= 50 for line in lines)


def test_markup_is_text() -> None:
    """Square brackets in help are shown, never read as markup."""
    text = rendered(("demo",), 120)
    assert "hopscore[local]" in text.replace("'", "")


def test_run_help_has_no_agent_option() -> None:
    """``hopscore run --help`` lists none of the agent's options; ``hopscore agent --help``
    lists them all, and ``hopscore run NAME --help`` of a benchmark an agent runs on is the
    agent's help (issue 24: the agent is its own command)."""
    from hopscore.cli.agent_options import GradingOptions, LoopOptions, WorldOptions
    from hopscore.cli.gathered import options_of

    qa = rendered(("run",), 80)
    agent = rendered(("agent",), 80)
    listed = re.findall(r"^│ [ *] ?(--[\w-]+)|^│ (--[\w-]+)", qa, flags=re.M)
    qa_options = {a or b for a, b in listed}
    for record in (WorldOptions, LoopOptions, GradingOptions):
        for _, _, info in options_of(record):
            option = info.param_decls[0]
            assert option not in qa_options, option
            assert re.search(rf"(?<![\w-]){option}(?![\w-])", agent), option
    assert rendered(("run", "hybrid-deep-research"), 80) == agent


def test_run_help_says_what_max_tokens_a_local_model_gets() -> None:
    """``hopscore run`` sends 128 to a local/ model unless --max-tokens is given (issue 23):
    its help says so beside the 1024 default, whole at 80 columns."""
    from hopscore.engine.local import RUN_MAX_TOKENS

    text = " ".join(words(rendered(("run",), 80)))
    assert f"(run: {RUN_MAX_TOKENS} for local/ models unless given)" in text
    assert "[default: 1024]" in text
