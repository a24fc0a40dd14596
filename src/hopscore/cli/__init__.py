"""The ``hopscore`` command line: a thin typer layer over the library.

Each command lives in its own module and registers itself on :data:`app`. The modules are
imported only when their command is used (:class:`LazyGroup`): ``hopscore score ...`` builds
and parses the score command alone, and ``hopscore --version`` imports no command module at
all, so start-up costs what the one command needs. :func:`main` turns user errors into one
readable line and exit status 2, never a traceback.

The package sits below :mod:`hopscore.launch`, the console script's entry point, which wraps
:func:`main` in its error handling (:func:`hopscore.launch.guarded`).
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import typer
import typer.main
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption
from typer.models import DefaultPlaceholder

from hopscore.version import __version__

#: Every command, in the order of --help (its panels follow their first command: score and
#: grade, run models and agents, the agent's files, analyse), and the module defining it.
COMMANDS: dict[str, str] = {
    "score": "score", "judge": "judge", "judge-calibrate": "judge_calibrate", "jury": "jury",
    "sql-match": "sql_match",
    "run": "run", "agent": "agent", "demo": "demo", "suite": "suite", "merge": "merge",
    "validate-predictions": "agent_files", "hdr-tasks": "agent_files",
    "compare": "compare", "plan": "plan", "report": "report", "analyze": "report",
    "export": "export",
}  # fmt: skip


class DeclaredHelp:
    """A command whose help text and epilog may hold placeholders for what the benchmarks
    declare (their examples, their titles), put in when the help is first read
    (:func:`hopscore.cli.help.with_declared`): the command line's help names no benchmark, and
    running a command never reads its help, so never imports every benchmark."""

    _help: str | None = None
    _epilog: str | None = None

    @property
    def help(self) -> str | None:
        if self._help is not None and "{benchmark " in self._help:
            from hopscore.cli.help import with_declared

            self._help = with_declared(self._help)
        return self._help

    @help.setter
    def help(self, value: str | None) -> None:
        self._help = value

    @property
    def epilog(self) -> str | None:
        if self._epilog is not None and "{benchmark " in self._epilog:
            from hopscore.cli.help import with_declared

            self._epilog = with_declared(self._epilog)
        return self._epilog

    @epilog.setter
    def epilog(self, value: str | None) -> None:
        self._epilog = value


class DeclaredOption(TyperOption):
    """An option whose help may hold a placeholder for what the benchmarks declare (``{benchmark
    titles reading: --tables-dir}``), put in when the help is first read, as
    :class:`DeclaredHelp` does for a command (:class:`HelpCommand` makes its options so)."""

    @property
    def help(self) -> str | None:
        text: str | None = self.__dict__.get("help")
        if text is not None and "{benchmark " in text:
            from hopscore.cli.help import with_declared

            text = self.__dict__["help"] = with_declared(text)
        return text

    @help.setter
    def help(self, value: str | None) -> None:
        self.__dict__["help"] = value


class DeclaredArgument(TyperArgument):
    """An argument whose help may hold a placeholder, as :class:`DeclaredOption`'s."""

    help = DeclaredOption.help


class HelpCommand(DeclaredHelp, TyperCommand):
    """A command whose ``--help`` is rendered by :mod:`hopscore.cli.help` (whole at any width).
    The command line's words are kept in ``ctx.meta`` for the help: ``hopscore run NAME --help``
    shows the options of benchmark NAME only, ``hopscore run --help`` folds them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:  # an option's help with a placeholder is filled when read
            if type(param) is TyperOption and "{benchmark " in (param.help or ""):
                param.__class__ = DeclaredOption
            elif type(param) is TyperArgument and "{benchmark " in (param.help or ""):
                param.__class__ = DeclaredArgument

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta["hopscore.words"] = tuple(args)
        parsed: list[str] = super().parse_args(ctx, args)
        return parsed

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from hopscore.cli.help import render

        render(self, ctx)


class HelpGroup(DeclaredHelp, TyperGroup):
    """A group of commands (``hopscore suite``) with the same ``--help``."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from hopscore.cli.help import render

        render(self, ctx)


def _use_help_classes(typer_app: typer.Typer) -> None:
    """Make every command and group of ``typer_app`` (and of its sub-apps) render its help
    with :mod:`hopscore.cli.help`, unless it chose a class of its own."""
    for info in typer_app.registered_commands:
        if info.cls in (None, TyperCommand):  # typer's default class: not chosen by the command
            info.cls = HelpCommand
    for group in typer_app.registered_groups:
        if isinstance(group.cls, DefaultPlaceholder) or group.cls in (None, TyperGroup):
            group.cls = HelpGroup
        if group.typer_instance is not None:
            _use_help_classes(group.typer_instance)


class LazyGroup(HelpGroup):
    """The root group: a command's module is imported, and its click command built, on first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # a command whose module was imported before this group was made (an earlier command
        # in the same process) was built by typer with its own class: built again, on first
        # use, as this command line's (HelpCommand: the benchmarks' titles in its help)
        for name in [name for name, command in self.commands.items()
                     if type(command) is TyperCommand]:
            del self.commands[name]

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            from hopscore.files.io import bulk_load

            with bulk_load():  # its modules: built once, kept, never walked again
                importlib.import_module(f"hopscore.cli.{COMMANDS[cmd_name]}")
                self._add_registered()
        command = self.commands.get(cmd_name)
        if command is not None:  # every path option read one way (empty, ~user: refused)
            from hopscore.cli.options import use_path_values

            use_path_values(command)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """``hopscore run NAME`` of a benchmark an agent runs on is ``hopscore agent NAME``
        (:func:`hopscore.cli.alias.as_agent`)."""
        name, command, rest = super().resolve_command(ctx, args)
        if name == "run" and command is not None:
            from hopscore.cli.alias import as_agent

            moved = as_agent(self, ctx, command, rest)
            if moved is not None:
                return moved
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        """Every command runs inside :func:`hopscore.files.outputs.command_scope`: the outputs it
        claims are held until it ends, also when it is invoked in-process (typer's CliRunner)."""
        from hopscore.files.outputs import command_scope

        with command_scope():
            return super().invoke(ctx)

    def _add_registered(self) -> None:
        """Build the click commands of every typer command registered so far and not yet built."""
        options: dict[str, Any] = {"pretty_exceptions_short": app.pretty_exceptions_short,
                                   "rich_markup_mode": app.rich_markup_mode}
        _use_help_classes(app)
        for info in app.registered_commands:
            name = info.name or typer.main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]
            if name not in self.commands:
                self.commands[name] = typer.main.get_command_from_info(info, **options)
        for group in app.registered_groups:
            if group.name not in self.commands:
                self.commands[str(group.name)] = typer.main.get_group_from_info(
                    group, suggest_commands=app.suggest_commands, **options)


app = typer.Typer(
    name="hopscore",
    cls=LazyGroup,
    help=(
        "Evaluate multi-hop question answering over text, tables and SQL.\n\n"
        "hopscore scores predictions with the exact semantics of each benchmark's official "
        "scorer ({benchmark titles: qa}) and writes metrics.json and per-example scores.jsonl; "
        "grades free-text answers with an LLM judge and Search-to-SQL answers by read-only "
        "execution match; runs models and tool-using agents ({benchmark titles: agent}) "
        "concurrently and resumably; and "
        "compares runs with paired intervals, error analysis and an HTML report."
    ),
    epilog=(
        "Examples:\n\n"
        "  hopscore demo\n\n"
        "  {benchmark examples: hopscore}\n\n"
        "  hopscore compare runs/a runs/b\n\n"
        "Each command has its own --help.\n\n"
        "Exit status: 0 on success; 1 when the command finished but its result is incomplete "
        "(--strict found missing or extra ids, no prediction matched a gold id, requests "
        "failed or answers went unscored, validate-predictions found errors); 2 on bad input, "
        "usage or environment (a missing file, a full disk); 3 on an internal error (a bug); "
        "130 when interrupted (Ctrl-C), keeping what was done."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

if TYPE_CHECKING:
    from rich.console import Console

    console: Console
    err_console: Console


def __getattr__(name: str) -> Any:
    """``console`` and ``err_console``, the rich consoles of stdout and stderr, made on first
    use: ``hopscore --version`` never imports rich."""
    if name in ("console", "err_console"):
        from rich.console import Console

        made = Console(stderr=name == "err_console")
        globals()[name] = made
        return made
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"hopscore {__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate multi-hop question answering over text, tables and SQL."""


def main(argv: list[str] | None = None) -> None:
    """Run the typer application on ``argv``; exits (``SystemExit``) with the command's status.

    Errors are not turned into exit statuses here: the ``hopscore`` script and ``python -m
    hopscore`` enter through :func:`hopscore.launch.main`, which does that.
    """
    app(args=argv)
