"""``hopscore score`` and ``hopscore demo``."""

from __future__ import annotations

from pathlib import Path

import typer

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.display import print_report
from hopscore.scoring import score_files
from hopscore.stats import DEFAULT_RESAMPLES, DEFAULT_SEED


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
    resamples: int = typer.Option(
        DEFAULT_RESAMPLES, "--resamples", min=0,
        help="Bootstrap resamples for the 95% confidence intervals (0: no intervals).",
    ),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
) -> None:
    """Score predictions against a benchmark's gold file, as its official scorer would.

    Prints a table (in percent) and, with --output-dir, writes metrics.json (unrounded
    fractions, overall and per group, with missing and extra ids) and scores.jsonl (one line
    per gold example). A gold example without a prediction scores 0 and stays in the
    denominator; a predicted id not in the gold is ignored. Both are listed and warned about.
    Every metric gets a seeded percentile bootstrap 95% interval (metrics.json "ci"), shown as
    value ± half-width.
    """
    bench = benchmarks.get(benchmark)
    report = score_files(
        bench, gold, predictions, output_dir, aliases=aliases, resamples=resamples, seed=seed
    )
    print_report(report, console, err_console)
    if output_dir is not None:
        err_console.print(f"wrote {output_dir / 'metrics.json'} and {output_dir / 'scores.jsonl'}",
                          markup=False, highlight=False)
    if strict and (report.missing_ids or report.extra_ids):
        err_console.print(
            f"--strict: {len(report.missing_ids)} missing and {len(report.extra_ids)} extra ids",
            style="red",
        )
        raise typer.Exit(1)
