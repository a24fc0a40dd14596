"""``hopscore judge-calibrate``: how often a judge is right, measured on human labels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.errors import HopscoreError
from hopscore.scores.display import print_table

if TYPE_CHECKING:
    from hopscore.inference.judge_error import Corrected
    from hopscore.judge.calibration import Calibration, CorrectedJudge
    from hopscore.judge.corrected_compare import CorrectedPair


@app.command("judge-calibrate", rich_help_panel="Score and grade")
def judge_calibrate(
    judge_path: Path = typer.Option(
        ..., "--judge", "-j", metavar="FILE",
        help="The judge's rows: hopscore judge --output, or score --judge's judge.jsonl."),
    labels_path: Path = typer.Option(
        ..., "--labels", "-l", metavar="FILE",
        help="Human labels of some of those rows: id, correct (CSV with a header, or JSON "
        "Lines)."),
    output: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE",
        help="Write the calibration (bound to the judge's model, endpoint and prompt) here, "
        "for score --judge --judge-calibration and compare --judge-calibration."),
    level: float = typer.Option(
        0.95, "--ci-level", metavar="LEVEL", help="Confidence level of the intervals."),
    json_output: bool = typer.Option(
        False, "--json", help="Print the calibration as JSON instead of a table."),
) -> None:
    """Measure an LLM judge against human labels: its sensitivity (share of the rows a human
    marked correct that the judge marked correct) and specificity (the same for wrong rows),
    with exact Clopper-Pearson intervals, and Cohen's kappa with its prevalence and bias
    indices and PABAK.

    Labelled ids the judge file lacks, and labelled rows the judge gave no verdict, are listed
    and left out. With --output, writes the calibration file that corrects the judge's
    accuracy for its errors (docs/judge.md, "Calibrating the judge").

    Examples:

      hopscore judge-calibrate --judge judged.jsonl --labels human.csv -o calibration.json
    """
    if not 0 < level < 1:
        raise HopscoreError(f"--ci-level must be between 0 and 1 (got {level})")
    from hopscore.analysis.judging import read_judge_rows
    from hopscore.files.atomic import write_json_atomic
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_file
    from hopscore.judge.calibration import (
        calibrate,
        correct_rows,
        judge_identity,
        read_labels,
        write_sources,
    )

    claim_for_command(*([output_file(output, "--output")] if output is not None else []),
                      inputs=[Input(judge_path, "--judge"), Input(labels_path, "--labels")])
    rows = read_judge_rows(judge_path)
    identity = judge_identity(rows, str(judge_path))
    labels = read_labels(labels_path)
    calibration = calibrate(rows, labels, identity, level)
    write_sources(calibration, judge_path, labels_path)
    if json_output:
        o.print_json(calibration.to_json())
    else:
        print_table(console, calibration_table(calibration))
        # the labels are a slice of this file's rows: its accuracy, corrected (two-phase)
        judged = correct_rows(rows.values(), calibration, level, ids=list(rows))
        if judged is not None:
            print_table(console, corrected_table(judged))
    for line in left_out_lines(calibration, str(judge_path)):
        err_console.print(f"warning: {line}", style="yellow", markup=False, highlight=False)
    undefined = calibration.confusion.undefined
    if undefined:
        err_console.print(f"warning: {undefined}; other runs' accuracy cannot be corrected "
                          "with this calibration",
                          style="yellow", markup=False, highlight=False)
    if output is not None:
        write_json_atomic(output, calibration.to_json())
        err_console.print(f"wrote {output}", markup=False, highlight=False)


def left_out_lines(calibration: Calibration, source: str) -> list[str]:
    from hopscore.judge.calibration import MAX_LISTED

    lines = []
    for ids, what in ((calibration.missing_ids, f"labelled ids not in {source}"),
                      (calibration.undecided_ids, "labelled rows without a judge verdict")):
        if ids:
            shown = ", ".join(ids[:MAX_LISTED]) + (", ..." if len(ids) > MAX_LISTED else "")
            lines.append(f"{len(ids)} {what} (left out): {shown}")
    return lines


def _share(value: float | None, bounds: tuple[float, float] | None) -> str:
    if value is None or bounds is None:
        return "-"
    return f"{value:.3f} [{bounds[0]:.3f}, {bounds[1]:.3f}]"


def calibration_table(calibration: Calibration) -> Table:
    c, level = calibration.confusion, calibration.level
    judge = calibration.judge
    table = Table(title=f"judge {judge.model} (prompt sha256 {judge.prompt_sha256[:12]}): "
                        f"{c.n} labelled rows",
                  caption=f"at {judge.endpoint}; {100 * level:g}% intervals",
                  caption_justify="left", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("labelled correct / wrong", f"{c.positives} / {c.negatives}")
    table.add_row("sensitivity (exact CI)", _share(c.sensitivity, c.sensitivity_interval(level)))
    table.add_row("specificity (exact CI)", _share(c.specificity, c.specificity_interval(level)))
    table.add_row("sensitivity + specificity - 1", "-" if c.youden is None else f"{c.youden:.3f}")
    agreement = c.agreement
    agreement = type(agreement)(agreement.both_right, agreement.judge_only, agreement.match_only,
                                agreement.both_wrong, level)
    table.add_row("raw agreement", _share(agreement.observed, agreement.agreement_interval()))
    table.add_row("Cohen's kappa", agreement.kappa_text())
    for name, value in (("prevalence index", c.prevalence_index),
                        ("bias index (judge more lenient > 0)", c.bias_index),
                        ("PABAK", c.pabak)):
        table.add_row(name, "-" if value is None else f"{value:+.3f}")
    table.add_row("judge said correct, human wrong", str(c.false_pos))
    table.add_row("judge said wrong, human correct", str(c.false_neg))
    return table


METHOD_NAMES = {"two-phase": "two-phase", "rogan-gladen": "Rogan-Gladen"}


def corrected_table(judged: CorrectedJudge) -> Table:
    """Raw and corrected judge accuracy (score --judge --judge-calibration)."""
    c = judged.corrected
    confusion = judged.calibration.confusion
    table = Table(title=f"judge accuracy corrected for its errors ({100 * c.level:g}% "
                        "intervals)", title_justify="left", show_header=False,
                  caption=_caption(judged), caption_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("rows the judge decided", str(c.n))
    table.add_row("raw judge accuracy (Wilson)", _share(c.raw, (c.raw_low, c.raw_high)))
    table.add_row(f"corrected ({METHOD_NAMES.get(c.method, c.method)})", _corrected_text(c))
    if judged.empty:
        table.add_row(f"corrected, with {judged.empty} empty answers", judged.text())
    table.add_row("calibration: sensitivity / specificity",
                  f"{confusion.sensitivity or 0:.3f} / {confusion.specificity or 0:.3f} "
                  f"(n={confusion.n})")
    return table


def _caption(judged: CorrectedJudge) -> str | None:
    lines = []
    if judged.corrected.undefined:
        lines.append(f"not corrected: {judged.corrected.undefined}")
    if judged.corrected.note:
        lines.append(judged.corrected.note)
    if judged.corrected.method == "two-phase":
        lines.append("two-phase: the labelled rows are a slice of this run (unbiased; does not "
                     "carry over to other runs)")
    if judged.undecided:
        lines.append(f"{judged.undecided} rows without a verdict are left out")
    lines.extend(judged.warnings)
    return "\n".join(lines) or None


def corrected_pairs_table(pairs: list[CorrectedPair], level: float) -> Table:
    """compare --judge-calibration: each run's raw and corrected judge accuracy, and B - A."""
    table = Table(title=f"judge accuracy corrected for its errors ({100 * level:g}% intervals; "
                        "one shared calibration)", title_justify="left",
                  caption=_pairs_caption(pairs), caption_justify="left")
    for column in ("run", "n", "raw", "corrected"):
        table.add_column(column, justify="left" if column == "run" else "right")
    seen: set[str] = set()
    for pair in pairs:
        for label, c in ((pair.a, pair.corrected_a), (pair.b, pair.corrected_b)):
            if label not in seen:
                seen.add(label)
                table.add_row(label, str(c.n), f"{c.raw:.3f}", _corrected_text(c))
        d = pair.difference
        corrected = "not corrected" if d.estimate is None or d.low is None or d.high is None \
            else f"{d.estimate:+.3f} [{d.low:+.3f}, {d.high:+.3f}]"
        table.add_row(f"{pair.b} - {pair.a}", str(pair.n), f"{d.raw:+.3f}", corrected)
    return table


def _corrected_text(c: Corrected) -> str:
    if c.estimate is None or c.low is None or c.high is None:
        return "not corrected"
    return f"{c.estimate:.3f} [{c.low:.3f}, {c.high:.3f}]"


def _pairs_caption(pairs: list[CorrectedPair]) -> str | None:
    reasons = {pair.difference.undefined for pair in pairs if pair.difference.undefined}
    return "\n".join(f"not corrected: {reason}" for reason in sorted(reasons)) or None
