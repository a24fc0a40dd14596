"""``hopscore export``: per-example scores of runs as Parquet, CSV or JSON Lines."""

from __future__ import annotations

from pathlib import Path

import typer

from hopscore.cli import app, err_console


@app.command(rich_help_panel="Analyse", short_help=(
    "Per-example scores of runs as one table (Parquet, CSV, JSON Lines) for pandas or DuckDB."))
def export(
    inputs: list[Path] = typer.Argument(
        ..., help="Score or run directories, scores.jsonl, judge or sql-match output JSONL.",
        show_default=False),
    output: Path = typer.Option(
        ..., "--output", "-o", metavar="FILE", show_default=False,
        help="The table: .parquet (needs pyarrow: pip install 'hopscore[parquet]'), .csv or "
        ".jsonl."),
    fmt: str | None = typer.Option(
        None, "--format", metavar="parquet|csv|jsonl", show_default=False,
        help="The format, when the extension does not say it."),
    metric: list[str] = typer.Option(
        [], "--metric", metavar="METRIC", show_default=False,
        help="Only this metric (repeatable; default: every metric)."),
) -> None:
    """Write one row per (run, example, metric): run, source, benchmark, model, id, metric,
    value, missing, prediction, gold, cluster and a group_<key> column per group key. Rows of
    different runs join on (id, metric); pandas, polars and DuckDB read every format.

    Examples:

      hopscore export runs/a runs/b -o scores.parquet

      hopscore export runs/a --metric em --metric f1 -o em_f1.csv
    """
    from hopscore.analysis.export import export as write
    from hopscore.analysis.export import format_of
    from hopscore.analysis.scored import load_many
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_file

    kind = format_of(output, fmt)
    claim_for_command(output_file(output, "--output", create_parents=True),
                      inputs=[Input(p, "input") for p in inputs])
    sets = load_many(inputs)
    count = write(sets, output, kind, metric or None)
    for scored in sets:
        for warning in scored.warnings:
            err_console.print(f"warning: {warning}", style="yellow", markup=False,
                              highlight=False)
    err_console.print(f"wrote {output}: {count} rows ({len(sets)} "
                      f"{'input' if len(sets) == 1 else 'inputs'}, {kind})", markup=False,
                      highlight=False)
