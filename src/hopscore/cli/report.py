"""``hopscore report`` (self-contained HTML) and ``hopscore analyze`` (error categories)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table
from rich.text import Text

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic, write_text_atomic
from hopscore.report import COMPRESS_CHOICES, DEFAULT_MAX_TEXT
from hopscore.scores.display import print_table
from hopscore.text.words import counted

if TYPE_CHECKING:  # analysis and report modules (numpy, jinja2) load when a command runs
    from hopscore.analysis.error_analysis import ErrorAnalysis
    from hopscore.analysis.judging import AgreementTable
    from hopscore.analysis.scored import ScoredSet

GOLD_HELP = "The benchmark's gold file: questions and context for the report and error analysis."
TABLES_HELP = ("The tables folder a benchmark's context is read from, when it has one "
               "(WikiTables-WithLinks: tables_tok/, request_tok/).")
JUDGE_HELP = ("hopscore judge output JSONL of this run's predictions (checked: every row's "
              "response must be the run's prediction): judge vs exact match, Cohen's kappa.")


def agreement_console_table(table: AgreementTable, label: str) -> Table:
    """Judge vs exact match: raw agreement and Cohen's kappa with intervals, per group."""
    from hopscore.scores.display import bounds_text

    out = Table(title=f"{label}: judge vs {table.metric} ({100 * table.overall.level:g}% "
                      "intervals)", title_justify="left",
                caption=f"{table.undecided} judged examples without a decision (judge error or "
                        "unparsed reply) are left out" if table.undecided else None,
                caption_justify="left")
    for column in ("group", "n", "agreement", "kappa", "judge ✓ only", f"{table.metric} ✓ only"):
        out.add_column(column, justify="left" if column == "group" else "right")
    for name, agreement in [("all", table.overall), *table.groups.items()]:
        low, high = agreement.agreement_interval()
        out.add_row(Text(name), str(agreement.n),
                    Text(f"{100 * agreement.observed:.2f} "
                         f"{bounds_text(agreement.observed, low, high)}"),
                    Text(agreement.kappa_text()), str(agreement.judge_only),
                    str(agreement.match_only))
    return out


def pick_baseline(sets: list[ScoredSet], baseline: str | None) -> int:
    if baseline is None:
        return 0
    for i, s in enumerate(sets):
        if baseline in (s.label, str(s.source)) or Path(baseline).resolve() == s.source.resolve():
            return i
    raise HopscoreError(f"--baseline {baseline!r} is none of the inputs "
                        f"({', '.join(s.label for s in sets)})")


@app.command(rich_help_panel="Analyse", short_help=(
    "One self-contained HTML report: intervals, groups, comparison, errors, samples."))
def report(
    inputs: list[Path] = typer.Argument(
        ..., help="Score or run directories, scores.jsonl, judge or sql-match output JSONL.",
        show_default=False,
    ),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", metavar="FILE",
                                help="The HTML file."),
    gold: Path | None = typer.Option(None, "--gold", "-g", metavar="FILE", help=GOLD_HELP),
    tables: Path | None = typer.Option(None, "--tables", metavar="DIR", help=TABLES_HELP),
    judge: list[Path] = typer.Option([], "--judge", metavar="FILE", show_default=False,
                                     help=JUDGE_HELP + " Repeatable: each file goes to the run "
                                     "it judged."),
    baseline: str | None = typer.Option(None, "--baseline", "-b", metavar="INPUT",
                                        help="Input the others are compared to (default: first)."),
    flip_metric: str | None = typer.Option(None, "--flip-metric", metavar="METRIC",
                                           help="Binary metric of the flip tables."),
    ci: str = o.CI,
    ci_level: float = o.CI_LEVEL,
    resamples: int = o.RESAMPLES,
    seed: int = o.SEED,
    cluster: str | None = o.CLUSTER,
    cluster_file: Path | None = o.CLUSTER_FILE,
    max_text: int = typer.Option(DEFAULT_MAX_TEXT, "--max-text", metavar="N", min=100,
                                 help="Longest text kept per field (prompt, output, context)."),
    title: str | None = typer.Option(None, "--title", help="Title of the report."),
    compress: str = typer.Option(
        "auto", "--compress", metavar="auto|always|never",
        help="Embed the sample data gzip-compressed: auto (above 4 MB of "
        "JSON), always, never. Compressed data needs a browser with DecompressionStream "
        "(Chrome 80+, Firefox 113+, Safari 16.4+)."),
    prices: Path | None = typer.Option(
        None, "--prices", metavar="FILE", show_default=False,
        help="JSON price file over the shipped list prices (docs/running-models.md)."),
) -> None:
    """Write one self-contained HTML report (works offline from disk): summary with 95%
    intervals, per-group charts with error bars, paired comparison and flip tables against the
    baseline, error-analysis categories, and a per-sample browser with filters and search.

    Examples:

      hopscore report runs/a runs/b --output report.html

      hopscore report runs/tables --gold dev.traced.json --tables WikiTables-WithLinks/
    """
    started = time.perf_counter()
    if compress not in COMPRESS_CHOICES:
        raise HopscoreError(f"--compress must be one of {', '.join(COMPRESS_CHOICES)}")
    o.claim_file_output(output, sources=inputs, gold=gold, tables=tables, judge=judge,
                        cluster_file=cluster_file)
    from hopscore.engine.prices import use_file

    use_file(prices)  # the report's cost table (analysis/costs.py)
    from hopscore.analysis.compare import adjust_family, compare_pair
    from hopscore.analysis.compare_records import CompareOptions
    from hopscore.analysis.judging import bind_judge_files
    from hopscore.analysis.scored import cluster_codes, load_many, require_same_benchmark
    from hopscore.analysis.summary import ensure_summary
    from hopscore.report.build import build

    sets = load_many(inputs)
    require_same_benchmark(sets)
    index = pick_baseline(sets, baseline)
    spec, clusters = o.interval_options(ci, ci_level, resamples, seed, cluster, cluster_file)
    for scored in sets:
        ensure_summary(scored, spec, cluster_codes(scored, clusters))
    comparing = CompareOptions(ci="auto" if ci == "none" else ci.lower(), level=ci_level,
                               resamples=max(resamples, 100), seed=seed, clusters=clusters,
                               flip_metric=flip_metric)
    pairs = []
    for i, other in enumerate(sets):
        if i == index:
            continue
        try:
            pairs.append(compare_pair(sets[index], other, comparing))
        except HopscoreError as exc:  # e.g. a judge file beside a score directory
            err_console.print(f"warning: no comparison of {other.label} with "
                              f"{sets[index].label}: {exc}", style="yellow", markup=False)
    adjust_family(pairs, comparing)
    judge_rows = bind_judge_files(sets, judge) if judge else None
    html = build(sets, pairs, index, gold=gold, tables=tables, judge=judge_rows,
                 limit=max_text, title=title, compress=compress)
    write_text_atomic(output, html)
    err_console.print(
        f"wrote {output} ({len(html.encode('utf-8')) / 1e6:.1f} MB, "
        f"{sum(s.n for s in sets)} samples, {time.perf_counter() - started:.1f} s)",
        markup=False, highlight=False,
    )


@app.command(rich_help_panel="Analyse")
def analyze(
    source: Path = typer.Argument(..., help="A score or run directory, or a judge/sql-match "
                                  "output JSONL.", show_default=False),
    gold: Path | None = typer.Option(None, "--gold", "-g", metavar="FILE", help=GOLD_HELP),
    tables: Path | None = typer.Option(None, "--tables", metavar="DIR", help=TABLES_HELP),
    judge: Path | None = typer.Option(None, "--judge", metavar="FILE", help=JUDGE_HELP),
    examples: int = typer.Option(3, "--examples", metavar="N",
                                 min=0, help="Example ids listed per category."),
    ids: list[str] = typer.Option([], "--id", metavar="ID", show_default=False,
                                  help="Show this example whole instead (the model's full "
                                  "answer, gold, scores, categories). Repeatable."),
    output: Path | None = typer.Option(None, "--output", "-o", metavar="FILE",
                                       help="Write the categories (with examples) as JSON here."),
) -> None:
    """Error analysis: sort examples into the benchmark's error categories and count them.

    Examples:

      hopscore analyze runs/a --gold hotpot_dev_distractor_v1.json

      hopscore analyze runs/a --id 42

      hopscore analyze verdicts.jsonl --output categories.json
    """
    from hopscore.analysis.error_analysis import analyze_source

    o.claim_file_output(output, sources=[source], gold=gold, tables=tables, judge=judge)
    analysis = analyze_source(source, gold=gold, tables=tables, judge=judge, examples=examples,
                              whole=bool(ids))
    if ids:
        for example_id in ids:
            print_table(console, example_table(analysis.example(example_id)))
    else:
        print_categories(analysis)
    for warning in analysis.scored.warnings:
        err_console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    if output is not None:
        document = analysis.to_json()
        if ids:
            document["examples"] = [analysis.example(example_id) for example_id in ids]
        write_json_atomic(output, document)
        err_console.print(f"wrote {output}", markup=False, highlight=False)


def print_categories(analysis: ErrorAnalysis) -> None:
    if not analysis.dimensions:
        err_console.print("no error category applies to this input", markup=False)
    for result in analysis.dimensions:
        table = Table(title=f"{result.name} ({counted(result.total, 'example')})",
                      title_justify="left", caption=result.description, caption_justify="left")
        for column in ("category", "count", "share", "examples"):
            table.add_column(column, justify="right" if column in ("count", "share") else "left")
        for category in result.categories:
            table.add_row(category.name, str(category.count),
                          f"{100 * category.count / result.total:.1f}%",
                          " ".join(category.examples))
        print_table(console, table)
    if analysis.agreement is not None:
        print_table(console, agreement_console_table(analysis.agreement, analysis.scored.label))


def example_table(example: dict[str, Any]) -> Table:
    """One example whole, a field per row (nothing cut: long answers wrap)."""
    from hopscore.analysis.error_analysis import text_of

    table = Table(title=f"example {example['id']}", title_justify="left", show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value")
    for key, value in example.items():
        if key == "id":
            continue
        if isinstance(value, dict) and key in ("scores", "categories", "groups", "judge"):
            if not value:
                continue
            shown = [f"{name}: " + (f"{100 * item:.2f}" if key == "scores"
                                    and isinstance(item, float) else text_of(item))
                     for name, item in value.items()]
            table.add_row(Text(key), Text("\n".join(shown)))
            continue
        table.add_row(Text(key), Text(text_of(value)))
    return table
