"""Terminal tables for score reports (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from hopscore.scoring import ScoreReport

MAX_GROUP_COLUMNS = 8


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


def report_table(report: ScoreReport) -> Table:
    """Metrics as rows; the overall score and each group as columns, in percent."""
    groups = list(report.groups.items())[:MAX_GROUP_COLUMNS]
    table = Table(
        title=f"{report.benchmark}: {report.n_gold} gold examples (scores in %)",
        title_justify="left",
    )
    table.add_column("metric", style="bold")
    table.add_column(f"all\nn={report.n_gold}", justify="right")
    for name, group in groups:
        table.add_column(f"{name}\nn={group.n}", justify="right")
    for metric, value in report.metrics.items():
        cells = [percent(value)]
        for _, group in groups:
            group_value = group.metrics.get(metric)
            cells.append("" if group_value is None else percent(group_value))
        table.add_row(metric, *cells)
    return table


def print_report(report: ScoreReport, console: Console, err_console: Console) -> None:
    console.print(report_table(report))
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
