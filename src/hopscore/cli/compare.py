"""``hopscore compare``: paired comparison of runs on the same examples."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.defaults import DEFAULT_RESAMPLES, DEFAULT_SEED
from hopscore.errors import HopscoreError
from hopscore.io import write_json_atomic

if TYPE_CHECKING:  # the analysis modules (numpy) load when the command runs, not for --help
    from hopscore.analysis.compare import PairComparison
    from hopscore.stats import Difference

MAX_GROUP_METRICS = 6


def points(value: float) -> str:
    return f"{100 * value:.2f}"


def delta_text(diff: Difference | None) -> str:
    if diff is None:
        return "n/a"
    mark = "*" if diff.low > 0 or diff.high < 0 else ""
    return f"{100 * diff.delta:+.2f} ± {100 * diff.half_width:.2f}{mark}"


def p_text(p: float) -> str:
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def metrics_table(pair: PairComparison) -> Table:
    table = Table(
        title=f"{pair.b.label} vs {pair.a.label} on {pair.n} paired examples "
              "(points; Δ = B − A with its 95% paired bootstrap interval; * = excludes 0)",
        title_justify="left",
    )
    for column in ("metric", pair.a.label, pair.b.label, "Δ", "95% CI", "McNemar p",
                   "A✓ B✗", "A✗ B✓"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for m in pair.metrics:
        d = m.difference
        cells = [m.metric]
        if d is None:
            cells += ["", "", "n/a", "", "", "", ""]
        else:
            mark = "*" if d.low > 0 or d.high < 0 else ""
            cells += [points(d.a), points(d.b), f"{100 * d.delta:+.2f}{mark}",
                      f"[{100 * d.low:+.2f}, {100 * d.high:+.2f}]"]
            if m.mcnemar is not None:
                cells += [p_text(m.mcnemar.p_value), str(m.mcnemar.right_to_wrong),
                          str(m.mcnemar.wrong_to_right)]
            else:
                cells += ["", "", ""]
        table.add_row(*cells)
    return table


def groups_table(pair: PairComparison) -> Table | None:
    if not pair.groups:
        return None
    names = [m.metric for m in pair.metrics][:MAX_GROUP_METRICS]
    table = Table(title="Per-group Δ (points, B − A ± half-width)", title_justify="left")
    table.add_column("group")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for g in pair.groups:
        table.add_row(g.name, str(g.n), *(delta_text(g.metrics.get(name)) for name in names))
    return table


def flips_table(pair: PairComparison) -> Table | None:
    if pair.flip_metric is None:
        return None
    table = Table(title=f"Flips of {pair.flip_metric} by group (A = {pair.a.label}, "
                        f"B = {pair.b.label})", title_justify="left")
    for column in ("group", "n", "both right", "both wrong", "right→wrong", "wrong→right",
                   "McNemar p"):
        table.add_column(column, justify="left" if column == "group" else "right")
    overall = next(m.mcnemar for m in pair.metrics if m.metric == pair.flip_metric)
    rows = [("all", pair.n, overall)] + [(g.name, g.n, g.flips) for g in pair.groups]
    for name, n, mc in rows:
        if mc is None:
            continue
        table.add_row(name, str(n), str(mc.both_right), str(mc.both_wrong),
                      str(mc.right_to_wrong), str(mc.wrong_to_right), p_text(mc.p_value))
    return table


def flipped_examples_table(pair: PairComparison, show: int) -> Table | None:
    flips = pair.flips(show)
    if not flips:
        return None
    table = Table(title=f"Flipped examples (first {show} of each direction)", title_justify="left")
    for column in ("id", "flip", "group", f"{pair.a.label}", f"{pair.b.label}", "gold"):
        table.add_column(column, overflow="fold", max_width=40)
    for f in flips:
        table.add_row(f.id, f.direction, ", ".join(f.groups.values()), f.prediction_a or "",
                      f.prediction_b or "", " | ".join(f.gold))
    return table


def matrix_table(pairs: list[PairComparison]) -> Table:
    base = pairs[0].a
    names = [m.metric for m in pairs[0].metrics]
    table = Table(title=f"Δ against the baseline {base.label} (points ± half-width; "
                        "* = interval excludes 0)", title_justify="left")
    table.add_column("run")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("flips r→w / w→r (p)", justify="right")
    for pair in pairs:
        by_name = {m.metric: m.difference for m in pair.metrics}
        flips = ""
        if pair.flip_metric is not None:
            mc = next(m.mcnemar for m in pair.metrics if m.metric == pair.flip_metric)
            if mc is not None:
                flips = f"{mc.right_to_wrong} / {mc.wrong_to_right} ({p_text(mc.p_value)})"
        table.add_row(pair.b.label, str(pair.n), *(delta_text(by_name.get(n)) for n in names),
                      flips)
    return table


def print_comparison(pairs: list[PairComparison], out: Console, show: int) -> None:
    if len(pairs) > 1:
        out.print(matrix_table(pairs))
    for pair in pairs:
        for table in (metrics_table(pair), groups_table(pair), flips_table(pair),
                      flipped_examples_table(pair, show)):
            if table is not None:
                out.print(table)


@app.command(rich_help_panel="Analyse", short_help=(
    "Paired comparison of runs: bootstrap intervals of differences, McNemar, flips."))
def compare(
    inputs: list[Path] = typer.Argument(
        ..., help="Score or run directories, scores.jsonl, judge or sql-match output JSONL.",
        show_default=False,
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", "-b", help="The input the others are compared to (default: the first)."
    ),
    flip_metric: str | None = typer.Option(
        None, "--flip-metric", help="Binary metric of the flip table (default: correct, match, "
        "judge_accuracy, accuracy, em, ... whichever exists first)."
    ),
    resamples: int = typer.Option(DEFAULT_RESAMPLES, "--resamples", min=1,
                                  help="Bootstrap resamples."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
    show: int = typer.Option(10, "--show", min=0, help="Flipped examples listed per direction."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the full comparison (every flip) as JSON here."
    ),
) -> None:
    """Compare runs on the same examples: paired bootstrap intervals of every metric's
    difference, McNemar's exact test for binary metrics, per-group deltas and flip tables.

    Examples are aligned by id; ids in only one input are listed and left out. With more than
    two inputs every run is compared to the baseline and a matrix is printed.

    Examples:

      hopscore compare runs/a runs/b

      hopscore compare runs/base runs/x runs/y --baseline runs/base --output comparison.json

      hopscore compare judged_a.jsonl judged_b.jsonl --flip-metric correct
    """
    from hopscore.analysis.compare import compare_to_baseline
    from hopscore.analysis.scored import load_many

    sets = load_many(inputs)
    index = 0
    if baseline is not None:
        matches = [i for i, s in enumerate(sets) if baseline in (s.label, str(s.source))
                   or Path(baseline).resolve() == s.source.resolve()]
        if not matches:
            raise HopscoreError(f"--baseline {baseline!r} is none of the inputs "
                                f"({', '.join(s.label for s in sets)})")
        index = matches[0]
    pairs = compare_to_baseline(sets, index, resamples=resamples, seed=seed,
                                flip_metric=flip_metric)
    print_comparison(pairs, console, show)
    for warning in dict.fromkeys(w for pair in pairs for w in pair.warnings):
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    if output is not None:
        write_json_atomic(output, {"baseline": sets[index].label,
                                   "comparisons": [pair.to_json() for pair in pairs]})
        err_console.print(f"wrote {output}", markup=False, highlight=False)
