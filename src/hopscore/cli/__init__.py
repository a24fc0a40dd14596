"""The ``hopscore`` command line: a thin typer layer over the library.

Each command lives in its own module and registers itself on :data:`app`; :func:`main` turns
user errors into one readable line and exit status 2, never a traceback.
"""

from __future__ import annotations

import typer
from rich.console import Console

from hopscore import __version__
from hopscore.launch import guarded

app = typer.Typer(
    name="hopscore",
    help=(
        "Evaluate multi-hop question answering over text, tables and SQL.\n\n"
        "hopscore scores predictions with the exact semantics of each benchmark's official "
        "scorer (HotpotQA, HybridQA, 2WikiMultihopQA, StrategyQA, Fermi, FEVEROUS, QuaRTz, "
        "Bamboogle) and writes metrics.json and per-example scores.jsonl; grades free-text "
        "answers with an LLM judge and Search-to-SQL answers by read-only execution match; runs "
        "models and tool-using agents (HybridDeepResearch) concurrently and resumably; and "
        "compares runs with paired intervals, error analysis and an HTML report."
    ),
    epilog=(
        "Examples:\n\n"
        "  hopscore demo\n\n"
        "  hopscore score hotpotqa --gold hotpot_dev_distractor_v1.json "
        "--predictions pred.json --output-dir out/\n\n"
        "  hopscore run hotpotqa --gold hotpot_dev_distractor_v1.json --model openai/gpt-4o-mini "
        "--limit 200\n\n"
        "  hopscore compare runs/a runs/b\n\n"
        "Each command has its own --help.\n\n"
        "Exit status: 0 on success, 1 when --strict finds missing or extra ids, "
        "2 on bad input or usage, 3 on an internal error."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

console = Console()
err_console = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        console.print(f"hopscore {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate multi-hop question answering over text, tables and SQL."""


# Command modules register themselves on import.
from hopscore.cli import compare as _compare  # noqa: E402,F401
from hopscore.cli import demo as _demo  # noqa: E402,F401
from hopscore.cli import hdr as _hdr  # noqa: E402,F401
from hopscore.cli import judge as _judge  # noqa: E402,F401
from hopscore.cli import report as _report  # noqa: E402,F401
from hopscore.cli import run as _run  # noqa: E402,F401
from hopscore.cli import score as _score  # noqa: E402,F401
from hopscore.cli import sql_match as _sql_match  # noqa: E402,F401

#: The order of --help (its panels follow their first command): score and grade, run models and
#: agents, HybridDeepResearch, analyse. ``suite`` (a group) comes last in its panel.
ORDER = ("score", "judge", "sql-match", "run", "demo", "validate-predictions", "hdr-tasks",
         "compare", "report", "analyze")
app.registered_commands.sort(
    key=lambda command: ORDER.index(command.name or getattr(command.callback, "__name__", "")))


def main(argv: list[str] | None = None) -> None:
    """Run the typer application (the ``hopscore`` script enters through :mod:`hopscore.launch`)."""
    guarded(lambda: app(args=argv), err_console)
