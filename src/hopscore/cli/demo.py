"""``hopscore demo``: score every built-in sample and print one summary table."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from hopscore import benchmarks, samples
from hopscore.cli import app, console, err_console
from hopscore.display import percent
from hopscore.errors import HopscoreError
from hopscore.scoring import ScoreReport, score_files

HEADLINE_FALLBACK = 3


def headline(report: ScoreReport, names: tuple[str, ...]) -> str:
    shown = [n for n in names if n in report.metrics] or list(report.metrics)[:HEADLINE_FALLBACK]
    return "  ".join(f"{name} {percent(report.metrics[name])}" for name in shown)


@app.command()
def demo(
    output_dir: Path | None = typer.Option(
        None,
        "--output-dir",
        "-o",
        help="Also write metrics.json and scores.jsonl of each sample to DIR/<benchmark>/.",
    ),
) -> None:
    """Score the sample files that ship with hopscore, one per benchmark, and print a summary.

    The samples are small invented gold and prediction files in each benchmark's official
    format; `hopscore score` on them prints the full per-metric tables.
    """
    found = samples.discover()
    if not found:
        raise HopscoreError("no built-in samples found (is the package installed completely?)")
    table = Table(
        title="hopscore demo: built-in samples (scores in %)",
        title_justify="left",
        show_lines=False,
    )
    table.add_column("benchmark", style="bold")
    table.add_column("n", justify="right")
    table.add_column("headline metrics")
    table.add_column("ids", justify="right")
    failures = 0
    for sample in found:
        try:
            bench = benchmarks.get(sample.benchmark)
            with sample.paths() as (gold, predictions, aliases):
                out = output_dir / sample.benchmark if output_dir is not None else None
                report = score_files(bench, gold, predictions, out, aliases=aliases)
        except HopscoreError as exc:
            failures += 1
            table.add_row(sample.benchmark, "", f"[red]error: {exc}[/red]", "")
            continue
        ids = f"{len(report.missing_ids)} missing, {len(report.extra_ids)} extra"
        table.add_row(sample.benchmark, str(report.n_gold), headline(report, bench.headline), ids)
    console.print(table)
    console.print(
        f"Sample files: {samples.samples_root()}\n"
        "Score your own: hopscore score BENCHMARK --gold GOLD --predictions PRED --output-dir DIR",
        markup=False,
        highlight=False,
    )
    if output_dir is not None:
        err_console.print(f"wrote per-benchmark results under {output_dir}", markup=False)
    if failures:
        raise HopscoreError(f"{failures} of {len(found)} samples could not be scored")
