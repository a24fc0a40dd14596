"""``hopscore compare``: paired comparison of runs on the same examples."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic

if TYPE_CHECKING:  # the analysis modules (numpy) load when the command runs, not for --help
    from rich.console import Console

    from hopscore.analysis.compare_records import CompareOptions, PairComparison, Row
    from hopscore.analysis.costs import RunCost

TESTS = {"mcnemar-exact": "McNemar", "mcnemar-mid-p": "McNemar mid-p",
         "permutation": "permutation", "cluster-permutation": "cluster perm.",
         "paired-bootstrap": "bootstrap"}
STAR, UNDERPOWERED = "*", "†"


def points(value: float) -> str:
    return f"{100 * value:.2f}"


def p_text(p: float | None) -> str:
    if p is None:
        return ""
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def mark(row: Row) -> str:
    """``*`` when the adjusted p is below alpha, ``†`` when not and |Δ| is below the MDE."""
    return STAR if row.significant else (UNDERPOWERED if row.underpowered else "")


def mde_text(row: Row) -> str:
    if row.mde_unreachable:
        return "∞"  # too few examples for any difference to be significant
    return "" if row.mde is None else points(row.mde)


def interval_text(row: Row) -> str:
    from hopscore.scores.display import bounds_text

    if row.interval is None:
        return ""
    return bounds_text(row.delta, row.interval.low, row.interval.high, bounded=False, signed=True)


def delta_text(row: Row | None) -> str:
    """``+2.10 ± 1.05*`` or ``+2.10 [+0.40, +3.95]*`` (points)."""
    if row is None:
        return "n/a"
    return f"{100 * row.delta:+.2f} {interval_text(row)}{mark(row)}".replace("  ", " ")


#: how each interval method of Δ is named under the tables
METHOD_WORDS = {"exact-conditional": "exact conditional (Clopper-Pearson of the discordant pairs)",
                "newcombe": "Newcombe (method 10)", "bca": "BCa", "bootstrap":
                "percentile bootstrap", "t": "t", "sign-flip": "inverted exact sign-flip test "
                "(few non-zero differences)"}


def interval_caption(rows: list[Row], level: float) -> str:
    """Which method made the intervals of each metric, and what they are not (adjusted)."""
    from collections import Counter

    methods: dict[str, Counter[str]] = {}
    for row in rows:
        if row.interval is not None:
            methods.setdefault(row.metric, Counter())[row.interval.method] += 1
    parts = []
    for metric, counts in methods.items():
        main = counts.most_common(1)[0][0]
        others = [f"{METHOD_WORDS.get(m, m)} in {c} row{'s' if c > 1 else ''}"
                  for m, c in counts.items() if m != main]
        parts.append(f"{metric} {METHOD_WORDS.get(main, main)}"
                     + (f", {', '.join(others)}" if others else ""))
    return (f"CI: the {100 * level:g}% interval of Δ on each row by itself, not adjusted for "
            f"multiplicity (it can exclude 0 on a row without {STAR}): " + "; ".join(parts))


def legend(pairs: list[PairComparison], family: int, rows: list[Row]) -> str:
    """The caption: the star's correction over the whole family of the call, the dagger, the
    intervals' methods."""
    options = pairs[0].options
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg"}.get(options.correction)
    star = (f"{STAR} adjusted p < {options.alpha:g} ({correction} over all {family} tests of "
            "this call: runs × metrics × groups)" if correction else
            f"{STAR} p < {options.alpha:g} (no correction for the {family} tests of this call)")
    power = f"{100 * options.power:g}%"
    text = (f"{star}; {UNDERPOWERED} not significant and |Δ| below the minimum detectable "
            f"effect (MDE, at unadjusted alpha): the test had less than {power} power for a "
            f"difference this small (∞: too few examples for any difference to be significant); "
            + interval_caption(rows, options.level))
    if pairs[0].cluster:
        text += f"; clustered by {pairs[0].cluster} ({pairs[0].clusters} clusters)"
    return text


def metrics_table(pair: PairComparison, family: int) -> Table:
    """The rows of one pair; ``family``: the tests the call's correction adjusted over."""
    level = f"{100 * pair.options.level:g}%"
    table = Table(
        title=f"B = {pair.b.label} vs A = {pair.a.label} on {pair.n} paired examples "
              f"(points; Δ = B − A with its {level} paired interval)",
        title_justify="left", caption=legend([pair], family, pair.rows()),
        caption_justify="left",
    )
    for column in ("metric", "A", "B", "Δ", f"{level} CI", "test", "p", "p adj", "MDE",
                   "A✓ B✗", "A✗ B✓"):
        table.add_column(column, justify="left" if column in ("metric", "test") else "right")
    for row in pair.metrics:
        test = row.test
        cells = [row.metric, points(row.a), points(row.b), f"{100 * row.delta:+.2f}{mark(row)}",
                 interval_text(row), TESTS.get(test.name, test.name) if test else "",
                 p_text(test.p if test else None), p_text(test.p_adjusted if test else None),
                 mde_text(row)]
        flips = row.flips
        cells += [str(flips.right_to_wrong), str(flips.wrong_to_right)] if flips else ["", ""]
        table.add_row(*(Text(cell) for cell in cells))
    return table


def groups_table(pair: PairComparison) -> Table | None:
    if not pair.groups:
        return None
    names = [r.metric for r in pair.metrics]
    table = Table(title="Per-group Δ (points, B − A with its interval)", title_justify="left")
    table.add_column("group")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    for g in pair.groups:
        table.add_row(g.name, str(g.n), *(Text(delta_text(g.rows.get(name))) for name in names))
    return table


def flips_table(pair: PairComparison) -> Table | None:
    if pair.flip_metric is None:
        return None
    table = Table(title=f"Flips of {pair.flip_metric} by group (A = {pair.a.label}, "
                        f"B = {pair.b.label}; p adjusted)", title_justify="left")
    for column in ("group", "n", "both right", "both wrong", "right→wrong", "wrong→right",
                   "p adj"):
        table.add_column(column, justify="left" if column == "group" else "right")
    overall = pair.row(pair.flip_metric)
    rows = [("all", pair.n, overall)] + [(g.name, g.n, g.rows.get(pair.flip_metric))
                                          for g in pair.groups]
    for name, n, row in rows:
        if row is None or row.flips is None:
            continue
        f = row.flips
        p = row.test.p_adjusted if row.test else None
        table.add_row(name, str(n), str(f.both_right), str(f.both_wrong), str(f.right_to_wrong),
                      str(f.wrong_to_right), p_text(p) + mark(row))
    return table


def flipped_examples_table(pair: PairComparison, show: int, width: int = 80) -> Table | None:
    """The first ``show`` flips of each direction, one line each: answers and gold cut to
    the terminal's ``width`` (a looping answer would fill screens), the caption saying where
    the whole text is."""
    from hopscore.scores.display import cut_text, free_text_widths

    flips = pair.flips(show)
    if not flips:
        return None
    table = Table(title=f"Flipped examples (first {show} of each direction; A = {pair.a.label}, "
                        f"B = {pair.b.label})", title_justify="left", caption_justify="left")
    for column in ("id", "flip", "group", "A", "B", "gold"):
        table.add_column(column, min_width=len(column))
    rows = [(f.id, f.direction, ", ".join(f.groups.values()),
             f.prediction_a or "", f.prediction_b or "", " | ".join(f.gold)) for f in flips]
    # the id, flip and group columns in full (each with its padding and border, then the
    # table's last border); what is left of the width goes to the answers and the gold
    fixed = sum(max(len(name), *(len(row[i]) for row in rows)) + 3
                for i, name in enumerate(("id", "flip", "group"))) + 1
    needs = [max(len(name), *(len(" ".join(row[i].split())) for row in rows))
             for i, name in ((3, "A"), (4, "B"), (5, "gold"))]
    widths = free_text_widths(needs, width - fixed - 3 * 3)
    cut_any = False
    for row in rows:
        cells = list(row[:3])
        for text, budget in zip(row[3:], widths, strict=True):
            shown, cut = cut_text(text, budget)
            cells.append(shown)
            cut_any = cut_any or cut
        table.add_row(*(Text(cell) for cell in cells))
    if cut_any:
        table.caption = (f"… cut to fit; the whole text: hopscore analyze {pair.a.source} --id ID "
                         f"(A), hopscore analyze {pair.b.source} --id ID (B), or the HTML report")
    return table


def matrix_table(pairs: list[PairComparison]) -> Table:
    from hopscore.analysis.compare import family_size

    base = pairs[0].a
    names = [r.metric for r in pairs[0].metrics]
    table = Table(title=f"Δ against the baseline {base.label} (points, with the paired interval)",
                  title_justify="left", caption_justify="left",
                  caption=legend(pairs, family_size(pairs),
                                 [row for pair in pairs for row in pair.metrics]))
    table.add_column("run")
    table.add_column("n", justify="right")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("flips r→w / w→r (p adj)", justify="right")
    for pair in pairs:
        flips = ""
        row = pair.row(pair.flip_metric) if pair.flip_metric else None
        if row is not None and row.flips is not None:
            p = row.test.p_adjusted if row.test else None
            flips = f"{row.flips.right_to_wrong} / {row.flips.wrong_to_right} ({p_text(p)})"
        table.add_row(pair.b.label, str(pair.n),
                      *(Text(delta_text(pair.row(n))) for n in names), flips)
    return table


def print_comparison(pairs: list[PairComparison], out: Console, show: int) -> None:
    """Every table, each split to the terminal's width by its key columns (nothing cut)."""
    from hopscore.analysis.compare import family_size
    from hopscore.scores.display import print_table

    if len(pairs) > 1:
        print_table(out, matrix_table(pairs), keys=2)
    family = family_size(pairs)
    for pair in pairs:
        for table, keys in ((metrics_table(pair, family), 1), (groups_table(pair), 2),
                            (flips_table(pair), 2),
                            (flipped_examples_table(pair, show, out.width), 1)):
            if table is not None:
                print_table(out, table, keys=keys)


def cost_table(costs: list[RunCost]) -> Table | None:
    """What each input cost at the dated list prices, per correct answer and per point of the
    metric; None when no input recorded a usage ledger."""
    from hopscore.analysis.costs import dollars

    if all(c.cost is None for c in costs):
        return None
    metric = next((c.metric for c in costs if c.metric), "metric")
    table = Table(title=f"Cost in USD at list prices (hopscore/engine/prices.json; {metric})",
                  title_justify="left")
    table.add_column("run")
    table.add_column("cost", justify="right")
    table.add_column("per correct", justify="right")
    table.add_column(f"per point of {metric}", justify="right")
    for c in costs:
        table.add_row(c.label, dollars(c.cost), dollars(c.per_correct), dollars(c.per_point))
    return table


def compare_options(ci: str, ci_level: float, resamples: int, seed: int, cluster: str | None,
                    cluster_file: Path | None, correction: str, alpha: float, power: float,
                    mid_p: bool, permutations: int, flip_metric: str | None) -> CompareOptions:
    from hopscore.analysis.compare_records import CompareOptions
    from hopscore.inference.clusters import ClusterSpec

    clusters = None
    if cluster is not None or cluster_file is not None:
        clusters = ClusterSpec(field=cluster, file=cluster_file)
    return CompareOptions(ci=ci.lower(), level=ci_level, resamples=resamples, seed=seed,
                          correction=correction.lower(), alpha=alpha, power=power, mid_p=mid_p,
                          permutations=permutations, clusters=clusters, flip_metric=flip_metric)


CORRECTION = typer.Option("holm", "--correction", rich_help_panel="Tests",
                          help="Adjust the p-values of every row of the call: holm (family-wise "
                          "error), bh (false discovery rate) or none.")
ALPHA = typer.Option(0.05, "--alpha", rich_help_panel="Tests",
                     help="Significance level of the stars (on adjusted p-values) and the MDE.")
POWER = typer.Option(0.8, "--power", rich_help_panel="Tests",
                     help="Power of the minimum detectable effect (MDE).")
MID_P = typer.Option(False, "--mid-p", rich_help_panel="Tests",
                     help="McNemar's mid-p instead of its exact p (less conservative).")
PERMUTATIONS = typer.Option(10_000, "--permutations", rich_help_panel="Tests",
                            help="Monte Carlo draws of the permutation tests (exact when at most "
                            "16 examples or clusters differ).")


@app.command(rich_help_panel="Analyse", short_help=(
    "Paired comparison of runs: intervals of differences, one corrected test per row, power."))
def compare(
    inputs: list[Path] = typer.Argument(
        ..., help="Score or run directories, scores.jsonl, judge or sql-match output JSONL.",
        show_default=False,
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", "-b", metavar="INPUT",
        help="The input the others are compared to (default: the first)."
    ),
    flip_metric: str | None = typer.Option(
        None, "--flip-metric", metavar="METRIC",
        help="Binary metric of the flip table (default: correct, match, "
        "judge_accuracy, accuracy, em, ... whichever exists first)."
    ),
    ci: str = o.CI,
    ci_level: float = o.CI_LEVEL,
    resamples: int = o.RESAMPLES,
    seed: int = o.SEED,
    cluster: str | None = o.CLUSTER,
    cluster_file: Path | None = o.CLUSTER_FILE,
    correction: str = CORRECTION,
    alpha: float = ALPHA,
    power: float = POWER,
    mid_p: bool = MID_P,
    permutations: int = PERMUTATIONS,
    show: int = typer.Option(10, "--show", metavar="N",
                             min=0, help="Flipped examples listed per direction."),
    output: Path | None = typer.Option(
        None, "--output", "-o", metavar="FILE",
        help="Write the full comparison (every flip) as JSON here."
    ),
    judge_calibration: Path | None = typer.Option(
        None, "--judge-calibration", metavar="FILE",
        help="A calibration of the runs' judge (hopscore judge-calibrate): also give each "
        "run's judge accuracy and B - A corrected for the judge's errors."),
    json_output: bool = o.JSON,
    prices: Path | None = typer.Option(
        None, "--prices", metavar="FILE", show_default=False,
        help="JSON price file over the shipped list prices (docs/running-models.md)."),
) -> None:
    """Compare runs on the same examples: for every metric, overall and per group, the
    difference B − A with its paired interval (Newcombe for 0/1 metrics, BCa for the others),
    one test (McNemar's exact test for 0/1 metrics, a paired permutation test for the others),
    its p-value adjusted over every row the call reports (Holm), and the minimum detectable
    effect; a star marks adjusted p < alpha, a dagger an underpowered row.

    Examples are aligned by id; ids in only one input are listed and left out, and examples a
    run has no prediction for are counted (they score 0). With more than two inputs every run
    is compared to the baseline and a matrix is printed.

    Examples:

      hopscore compare runs/a runs/b

      hopscore compare runs/base runs/x runs/y --baseline runs/base --output comparison.json

      hopscore compare judged_a.jsonl judged_b.jsonl --flip-metric correct
    """
    from hopscore.analysis.compare import compare_to_baseline
    from hopscore.analysis.scored import load_many

    o.claim_file_output(output, sources=inputs, cluster_file=cluster_file)
    options = compare_options(ci, ci_level, resamples, seed, cluster, cluster_file, correction,
                              alpha, power, mid_p, permutations, flip_metric)
    sets = load_many(inputs)
    index = 0
    if baseline is not None:
        matches = [i for i, s in enumerate(sets) if baseline in (s.label, str(s.source))
                   or Path(baseline).resolve() == s.source.resolve()]
        if not matches:
            raise HopscoreError(f"--baseline {baseline!r} is none of the inputs "
                                f"({', '.join(s.label for s in sets)})")
        index = matches[0]
    pairs = compare_to_baseline(sets, index, options)
    corrected = []
    if judge_calibration is not None:
        from hopscore.judge.calibration import load_calibration
        from hopscore.judge.corrected_compare import corrected_pairs

        corrected = corrected_pairs(sets, index, (load_calibration(judge_calibration),
                                                  judge_calibration), ci_level)
    from hopscore.analysis.costs import run_cost
    from hopscore.engine.prices import load as load_prices

    prices_table = load_prices(prices)
    metric = pairs[0].flip_metric if pairs else None
    metric = metric or (sets[index].names[0] if sets[index].names else None)
    costs = [run_cost(s, metric, prices_table) for s in sets]
    if not json_output:
        print_comparison(pairs, console, show)
        table = cost_table(costs)
        if table is not None:
            from hopscore.scores.display import print_table

            print_table(console, table, keys=1)
        if corrected:
            from hopscore.cli.judge_calibrate import corrected_pairs_table
            from hopscore.scores.display import print_table

            print_table(console, corrected_pairs_table(corrected, ci_level))
    for warning in dict.fromkeys(w for pair in corrected for w in pair.warnings):
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    for warning in dict.fromkeys(w for pair in pairs for w in pair.warnings):
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    if output is not None or json_output:
        from hopscore.analysis.compare import family_size

        document = {
            "baseline": sets[index].label, "options": options.to_json(),
            "family": {"correction": options.correction, "tests": family_size(pairs)},
            "comparisons": [pair.to_json() for pair in pairs],
            "costs": [c.to_json() for c in costs]}
        if corrected:
            document["judge_correction"] = [pair.to_json() for pair in corrected]
        if json_output:
            o.print_json(document)
        if output is not None:
            write_json_atomic(output, document)
            err_console.print(f"wrote {output}", markup=False, highlight=False)
