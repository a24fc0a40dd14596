"""``hopscore plan``: how many questions an evaluation needs to see a given difference."""

from __future__ import annotations

import typer
from rich.table import Table

from hopscore.cli import app, console
from hopscore.errors import HopscoreError
from hopscore.scores.display import print_table

DEFAULT_DELTAS = (0.01, 0.02, 0.03, 0.05, 0.1)


@app.command(rich_help_panel="Analyse", short_help=(
    "Questions needed to detect a difference, or the smallest difference n questions detect."))
def plan(
    baseline_acc: float = typer.Option(..., "--baseline-acc", metavar="FRACTION",
                                       show_default=False,
                                       help="Expected accuracy of the baseline, e.g. 0.62."),
    n: int | None = typer.Option(None, "--n", metavar="N", min=1, show_default=False,
                                 help="Questions available: print the minimum detectable effect."),
    delta: list[float] = typer.Option([], "--delta", metavar="FRACTION", show_default=False,
                                      help="Difference to detect, as a fraction (repeatable; "
                                      "default 0.01 0.02 0.03 0.05 0.1)."),
    discordance: float | None = typer.Option(
        None, "--discordance", metavar="FRACTION", show_default=False,
        help="Share of questions the two systems disagree on (from a pilot: (r→w + w→r) / n). "
        "Default: independent errors, an upper bound."),
    sd: float | None = typer.Option(None, "--sd", metavar="SD", show_default=False,
                                    help="SD of per-question differences of a continuous metric "
                                    "(F1): adds its n."),
    alpha: float = typer.Option(0.05, "--alpha", metavar="FRACTION",
                                help="Two-sided significance level."),
    power: float = typer.Option(0.8, "--power", metavar="FRACTION", help="Power."),
    comparisons: int = typer.Option(1, "--comparisons", metavar="N", min=1,
                                    help="Tests in the comparison (alpha is divided by it, as "
                                    "Holm's correction needs at worst)."),
) -> None:
    """Plan an evaluation: the number of questions needed to detect each difference with
    McNemar's paired test (both systems on the same questions) and with an unpaired test, and,
    with --n, the smallest difference n questions detect. Formulas: docs/statistics.md.

    Examples:

      hopscore plan --baseline-acc 0.62

      hopscore plan --baseline-acc 0.62 --n 500 --discordance 0.2

      hopscore plan --baseline-acc 0.45 --delta 0.02 --delta 0.05 --comparisons 3
    """
    from hopscore.inference.paired import mde_binary
    from hopscore.inference.power import (
        mde_paired_independent,
        mde_unpaired_binary,
        plan_rows,
    )

    if not 0 < alpha < 1 or not 0 < power < 1:
        raise HopscoreError("--alpha and --power must be between 0 and 1")
    if discordance is not None and not 0 < discordance <= 1:
        raise HopscoreError("--discordance must be in (0, 1]")
    level = alpha / comparisons
    rows = plan_rows(baseline_acc, list(delta or DEFAULT_DELTAS), discordance=discordance,
                     sd=sd, alpha=level, power=power)
    table = Table(title=f"Questions needed at baseline accuracy {100 * baseline_acc:g}% "
                        f"({100 * power:g}% power, two-sided alpha {level:.3g})",
                  title_justify="left")
    for column in ("Δ (points)", "paired (McNemar)", "discordance", "unpaired, per system",
                   *(["continuous (sd)"] if sd is not None else [])):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(f"{100 * row.delta:.1f}", f"{row.paired:,}",
                      f"{100 * (row.discordance or 0):.1f}%", f"{row.unpaired:,}",
                      *([f"{row.continuous:,}"] if row.continuous is not None else []))
    print_table(console, table)
    if n is not None:
        if discordance is not None:
            paired = mde_binary(n, discordance, alpha=level, power=power)
        else:
            paired = mde_paired_independent(n, baseline_acc, alpha=level, power=power)
        unpaired = mde_unpaired_binary(n, baseline_acc, alpha=level, power=power)
        console.print(f"With {n:,} questions the smallest detectable difference is "
                      f"{100 * paired:.2f} points paired (McNemar) and "
                      + (f"{100 * unpaired:.2f}" if unpaired == unpaired else "more than the "
                         "room above the baseline") + " points unpaired.",
                      markup=False, highlight=False)
