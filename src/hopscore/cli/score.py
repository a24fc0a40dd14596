"""``hopscore score`` (the usual form of it also runs without typer: :mod:`hopscore.launch`)."""

from __future__ import annotations

from pathlib import Path

import typer

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.launch import ScoreRequest, run_score


@app.command()
def score(
    benchmark: str = typer.Argument(
        ..., help=f"Benchmark name: {', '.join(benchmarks.names())}.", show_default=False
    ),
    gold: Path = typer.Option(..., "--gold", "-g", help="The benchmark's official gold file."),
    predictions: Path = typer.Option(
        ..., "--predictions", "-p", help="Predictions: the official format or universal JSONL."
    ),
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", help="Write metrics.json and scores.jsonl here."
    ),
    aliases: Path | None = typer.Option(
        None, "--aliases", help="2WikiMultihopQA id_aliases.json (JSON Lines)."
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Exit with status 1 when ids are missing or extra."
    ),
) -> None:
    """Score predictions against a benchmark's gold file, as its official scorer would.

    Prints a table (in percent) and, with --output-dir, writes metrics.json (unrounded
    fractions, overall and per group, with missing and extra ids) and scores.jsonl (one line
    per gold example). A gold example without a prediction scores 0 and stays in the
    denominator; a predicted id not in the gold is ignored. Both are listed and warned about.
    """
    request = ScoreRequest(benchmark, gold, predictions, output_dir, aliases, strict)
    status = run_score(request, console, err_console)
    if status:
        raise typer.Exit(status)
