"""Terminal tables (rich): score reports, the one rule for printing an interval, and fitting
any table to the terminal.

A table wider than the terminal is never cut: :func:`fit_table` splits its columns into
several tables that each fit, repeating the key columns (the metric, the group), so every
cell keeps its whole text; a column of free text (answers, notes) wraps instead. Tables of many
model answers cut each answer to one line (:func:`cut_text`) and say where the whole text is.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.table import Column, Table
from rich.text import Text

if TYPE_CHECKING:
    from hopscore.inference.ci import Interval
    from hopscore.scores.results import ScoreReport

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


def signed_percent(value: float) -> str:
    """``+0.40`` in percent, with as many more digits as it takes (up to 6) for a non-zero
    value to print as non-zero, so a bound keeps its side of 0; exactly 0 prints ``0.00``."""
    if value == 0:
        return "0.00"
    for digits in range(2, 7):
        text = f"{100 * value:+.{digits}f}"
        if float(text) != 0:
            return text
    return text


def _side(x: float) -> int:
    return int(x > 0) - int(x < 0)


def bounds_text(value: float, low: float, high: float, *, bounded: bool = True,
                signed: bool = False) -> str:
    """``± half`` (the longer side, so the printed interval holds the real one) when the
    interval is symmetric (:func:`is_symmetric`), else ``[low, high]``, in percent.

    ``signed`` (a difference): the printed bounds keep the real ones' side of 0: ``± half`` only
    when value ± half, as printed, lies on the same sides of 0 as low and high, and a bound that
    would round to 0 gets more digits."""
    if is_symmetric(value, low, high, bounded=bounded):
        half = f"{100 * max(value - low, high - value):.2f}"
        shown, width = round(100 * value, 2), float(half)
        if not signed or (_side(round(shown - width, 6)) == _side(low)
                          and _side(round(shown + width, 6)) == _side(high)):
            return f"± {half}"
    if signed:
        return f"[{signed_percent(low)}, {signed_percent(high)}]"
    return f"[{100 * low:.2f}, {100 * high:.2f}]"


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
    groups = list(report.groups.items())
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


#: a column whose longest cell is longer than this and holds spaces is free text: it wraps
FREE_TEXT = 30
#: the narrowest a cut cell of free text gets, whatever the terminal's width
MIN_CUT = 12


def cut_text(text: str, width: int) -> tuple[str, bool]:
    """``text`` on one line (line breaks and runs of spaces made one space), cut to ``width``
    terminal cells with "…" at the end; and whether it was cut. For cells of free text (a
    model's answer, which may run to pages) in tables that show many rows: the whole text is
    one command away (``hopscore analyze DIR --id ID``, the HTML report)."""
    flat = " ".join(text.split())
    if cell_len(flat) <= width:
        return flat, False
    kept = ""
    for char in flat:
        if cell_len(kept + char) > width - 1:
            break
        kept += char
    return kept.rstrip() + "…", True


def free_text_widths(needs: list[int], width: int) -> list[int]:
    """Widths for free-text columns that need ``needs`` cells each, sharing ``width`` cells:
    a column that needs less than an equal share keeps what it needs, the others share the
    rest equally (each at least :data:`MIN_CUT`)."""
    widths = [0] * len(needs)
    left, open_ = width, sorted(range(len(needs)), key=lambda i: needs[i])
    while open_:
        share = left // len(open_)
        index = open_[0]
        if needs[index] <= share:
            widths[index] = needs[index]
            left -= needs[index]
            open_.pop(0)
            continue
        for index in open_:
            widths[index] = max(MIN_CUT, share)
        break
    return widths


def _plain(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _is_free_text(column: Column) -> bool:
    cells = [_plain(cell) for cell in column._cells]
    return any(len(cell) > FREE_TEXT and " " in cell.strip() for cell in cells)


def _lines_width(cell: object, *, words: bool) -> int:
    lines = _plain(cell).splitlines() or [""]
    if words:
        return max((cell_len(word) for line in lines for word in line.split()), default=0)
    return max(cell_len(line) for line in lines)


def _min_width(table: Table, console: Console) -> int:
    """The narrowest the table can be without cutting a cell: a column that does not wrap at
    its longest line, a wrapping one at its longest word, plus padding and borders."""
    total = 0
    for column in table.columns:
        words = not column.no_wrap
        width = max([_lines_width(column.header, words=words),
                     *(_lines_width(cell, words=words) for cell in column._cells)])
        total += max(width, column.min_width or 0)
    left, right = table.padding[3], table.padding[1]
    total += (left + right) * len(table.columns)
    if table.box is not None:
        total += len(table.columns) - 1 + (2 if table.show_edge else 0)
    elif not table.pad_edge:
        total -= left + right
    return total


def _subtable(table: Table, columns: list[int], *, title: bool, caption: bool) -> Table:
    part = copy.copy(table)
    part.columns = []
    for index in columns:
        column = copy.copy(table.columns[index])
        column._cells = list(table.columns[index]._cells)
        part.columns.append(column)
    part.rows = list(table.rows)
    if not title:
        part.title = None
    if not caption:
        part.caption = None
    return part


def fit_table(table: Table, console: Console, *, keys: int = 1) -> list[Table]:
    """``table`` as one or more tables that fit ``console``'s width without cutting a cell.

    Key columns (the first ``keys``: the metric, the group) and columns of short values never
    wrap; a column of free text (a cell longer than :data:`FREE_TEXT` with spaces) wraps.
    When even that is too wide, the columns after the keys are split into consecutive parts,
    each shown beside the key columns (title on the first part, caption on the last).
    """
    last_only = len(table.columns) <= keys + 1  # a key/value table: the value may wrap
    for index, column in enumerate(table.columns):
        free = index >= keys and (last_only or _is_free_text(column))
        column.no_wrap = not free
        column.overflow = "fold"
    width = console.width
    if _min_width(table, console) <= width or len(table.columns) <= keys + 1:
        return [table]
    keep = list(range(keys))
    parts: list[list[int]] = []
    current: list[int] = []
    for index in range(keys, len(table.columns)):
        trial = [*current, index]
        wide = _min_width(_subtable(table, keep + trial, title=False, caption=False),
                          console) > width
        if current and wide:
            parts.append(current)
            current = [index]
        else:
            current = trial
    parts.append(current)
    return [_subtable(table, keep + part, title=i == 0, caption=i == len(parts) - 1)
            for i, part in enumerate(parts)]


def print_table(console: Console, table: Table, *, keys: int = 1) -> None:
    """Print ``table`` whole at the console's width (:func:`fit_table`). Its title and caption
    are printed above and below it at the console's width, not squeezed to the table's."""
    parts = fit_table(table, console, keys=keys)
    title, caption = table.title, table.caption
    # a table renders its title and caption as rich markup: so do they here
    if title is not None:
        console.print(title, style=table.title_style or "", highlight=False)
    for part in parts:
        part.title = part.caption = None
        console.print(part)
    if caption is not None:
        console.print(caption, style=table.caption_style or "", highlight=False)


def print_report(report: ScoreReport, console: Console, err_console: Console) -> None:
    """The score table, its footnotes (stdout) and the warnings (stderr)."""
    print_table(console, report_table(report))
    for note in report.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    print_warnings(report, err_console)


def print_warnings(report: ScoreReport, err_console: Console) -> None:
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
