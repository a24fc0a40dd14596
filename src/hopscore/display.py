"""Terminal tables for score reports (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from hopscore.scoring import ScoreReport
from hopscore.stats import Interval

MAX_GROUP_COLUMNS = 8


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


def with_interval(value: float, interval: Interval | None) -> str:
    """``45.20 ± 1.31`` (percent; the half-width of the bootstrap interval), or the bare value."""
    if interval is None:
        return percent(value)
    return f"{percent(value)} ± {100 * interval.half_width:.2f}"


def report_table(report: ScoreReport) -> Table:
    """Metrics as rows; the overall score and each group as columns, in percent."""
    groups = list(report.groups.items())[:MAX_GROUP_COLUMNS]
    title = f"{report.benchmark}: {report.n_gold} gold examples (scores in %)"
    if report.ci:
        first = next((iv for iv in report.ci.values() if iv is not None), None)
        if first is not None:
            title += (
                f"; ± is half the {100 * first.level:g}% bootstrap interval "
                f"({first.resamples} resamples, seed {first.seed})"
            )
    table = Table(title=title, title_justify="left")
    table.add_column("metric", style="bold")
    table.add_column(f"all\nn={report.n_gold}", justify="right")
    for name, group in groups:
        table.add_column(f"{name}\nn={group.n}", justify="right")
    for metric, value in report.metrics.items():
        cells = [with_interval(value, (report.ci or {}).get(metric))]
        for _, group in groups:
            group_value = group.metrics.get(metric)
            interval = (group.ci or {}).get(metric)
            cells.append("" if group_value is None else with_interval(group_value, interval))
        table.add_row(metric, *cells)
    return table


def print_report(report: ScoreReport, console: Console, err_console: Console) -> None:
    console.print(report_table(report))
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
