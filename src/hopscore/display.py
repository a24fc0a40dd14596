"""Terminal tables for score reports (rich), and the one rule for printing an interval."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from hopscore.scoring import ScoreReport

if TYPE_CHECKING:
    from hopscore.inference.ci import Interval

MAX_GROUP_COLUMNS = 8
METHOD_NAMES = {"wilson": "Wilson", "clopper-pearson": "Clopper-Pearson", "bca": "BCa",
                "bootstrap": "percentile bootstrap", "t": "t"}


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


#: the two sides of a "symmetric" interval differ by at most this share of the longer side
SYMMETRY = 0.05


def is_symmetric(value: float, low: float, high: float, *, bounded: bool = True) -> bool:
    """Whether ``value ± half`` describes the interval: its sides agree within 5% (or within the
    printed precision) and, for a metric bounded by 0 and 1, it touches neither bound."""
    if bounded and (low <= 0 or high >= 1):
        return False
    below, above = value - low, high - value
    if below < 0 or above < 0:
        return False
    return abs(below - above) <= max(SYMMETRY * max(below, above), 0.00005)


def bounds_text(value: float, low: float, high: float, *, bounded: bool = True,
                signed: bool = False) -> str:
    """``± half`` (the longer side, so the printed interval holds the real one) when the
    interval is symmetric (:func:`is_symmetric`), else ``[low, high]``, in percent."""
    form = "+.2f" if signed else ".2f"
    if is_symmetric(value, low, high, bounded=bounded):
        return f"± {100 * max(value - low, high - value):.2f}"
    return f"[{100 * low:{form}}, {100 * high:{form}}]"


def with_interval(value: float, interval: Interval | None) -> str:
    """``45.20 ± 1.31`` (percent) when the interval is symmetric, ``100.00 [83.89, 100.00]``
    when it is lopsided or touches 0 or 1, the bare value when there is none."""
    if interval is None:
        return percent(value)
    return f"{percent(value)} {bounds_text(value, interval.low, interval.high)}"


def methods_caption(report: ScoreReport) -> str | None:
    """Which method made which metric's interval, the level and the clustering."""
    if not report.ci:
        return None
    by_method: dict[str, list[str]] = {}
    level = None
    details: dict[str, object] = {}
    resampled = None
    for metric, interval in report.ci.items():
        if interval is None:
            continue
        level = interval.level
        by_method.setdefault(METHOD_NAMES.get(interval.method, interval.method), []).append(metric)
        details = details or interval.details
        if interval.resamples:
            resampled = (interval.resamples, interval.seed)
    if level is None:
        return None
    parts = [f"{name} ({', '.join(metrics)})" for name, metrics in by_method.items()]
    text = f"{100 * level:g}% intervals: " + "; ".join(parts)
    if "cluster" in details:
        text += f"; clustered by {details['cluster']} ({details.get('clusters')} clusters)"
    if resampled:
        text += f"; {resampled[0]} bootstrap resamples, seed {resampled[1]}"
    return text + ". ± when symmetric, else \\[low, high]."


def report_table(report: ScoreReport) -> Table:
    """Metrics as rows; the overall score and each group as columns, in percent."""
    groups = list(report.groups.items())[:MAX_GROUP_COLUMNS]
    title = f"{report.benchmark}: {report.n_gold} gold examples (scores in %)"
    table = Table(title=title, title_justify="left", caption=methods_caption(report),
                  caption_justify="left")
    table.add_column("metric", style="bold")
    table.add_column(f"all\nn={report.n_gold}", justify="right")
    for name, group in groups:
        table.add_column(f"{name}\nn={group.n}", justify="right")
    for metric, value in report.metrics.items():
        cells = [Text(with_interval(value, (report.ci or {}).get(metric)))]
        for _, group in groups:
            group_value = group.metrics.get(metric)
            interval = (group.ci or {}).get(metric)
            cells.append(Text("" if group_value is None else with_interval(group_value, interval)))
        table.add_row(Text(metric), *cells)
    return table


def print_report(report: ScoreReport, console: Console, err_console: Console) -> None:
    console.print(report_table(report))
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
