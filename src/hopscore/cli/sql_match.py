"""``hopscore sql-match``: execution match of Search-to-SQL answers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.errors import HopscoreError, InputError, Interrupted
from hopscore.scores.display import print_table
from hopscore.text.words import agree, counted

if TYPE_CHECKING:
    from hopscore.sql.match_job import Summary

# Kept literal so that ``hopscore --help`` does not import numpy, scipy and sqlglot.
MODES = ("reference", "strict", "rows", "spider", "bird")  # hopscore.sql.modes.MODES
DEFAULT_TEMPLATE = "{db}/{db}_template.sqlite"


def _verdicts_in(output: Path) -> int:
    """The complete verdict lines of ``output`` (after Ctrl-C)."""
    try:
        with output.open("rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n") and line.strip())
    except OSError:
        return 0


def _version_warnings() -> list[str]:
    from hopscore.sql.sandbox import sqlite_version

    parts = tuple(int(p) for p in sqlite_version().split(".")[:2])
    notes = []
    if parts < (3, 38):
        notes.append("JSON operators -> and ->> need SQLite 3.38 or later")
    if parts < (3, 39):
        notes.append("RIGHT and FULL JOIN need SQLite 3.39 or later")
    return notes


def _print_summary(summary: Summary, output: Path) -> None:
    table = Table(title=f"sql-match: {summary.total} rows (SQLite {summary.sqlite_version})",
                  title_justify="left")
    table.add_column("reason", style="bold")
    table.add_column("rows", justify="right")
    for reason, count in summary.reasons.most_common():
        table.add_row(reason, str(count))
    print_table(console, table)
    console.print(
        f"accuracy {100 * summary.accuracy:.2f}% ({summary.matched}/{summary.total}, every row "
        f"counts, as the leaderboard does)", markup=False, highlight=False)
    if summary.gold_failures:
        console.print(
            f"gold or setup failures: {summary.gold_failures} (missing gold, missing database, "
            f"gold query error); accuracy without them "
            f"{100 * summary.accuracy_without_gold_failures:.2f}%", markup=False, highlight=False)
    if summary.undecided:
        err_console.print(
            f"warning: {counted(summary.undecided, 'row')} "
            f"{agree(summary.undecided, 'has', 'have')} no verdict (invalid input or internal "
            "error, see the reason); they count as misses in the accuracy", style="yellow",
            markup=False, highlight=False)
    if summary.decided_by:
        decided = ", ".join(f"{name} {n}" for name, n in summary.decided_by.most_common())
        console.print(f"decided by: {decided}", markup=False, highlight=False)
    if summary.flags:
        flags = ", ".join(f"{name} {n}" for name, n in summary.flags.most_common())
        console.print(f"flags: {flags}", markup=False, highlight=False)
    other = "lenient" if summary.extract == "reference" else "reference"
    unknown = f", {summary.other_undecided} of them hit a limit" \
        if summary.other_undecided else ""
    console.print(
        f"{other} extraction (--extract {other}) would change "
        f"{counted(summary.other_changes, 'verdict')} ({counted(summary.other_sql, 'row')} "
        f"{agree(summary.other_sql, 'reads', 'read')} another SQL that way{unknown})",
        markup=False, highlight=False)
    if summary.limits:
        err_console.print(
            f"warning: {counted(summary.limits, 'row')} hit "
            "--timeout or --memory-mb while results were held or compared (compare_timeout, "
            f"result_too_large); {agree(summary.limits, 'it counts', 'they count')} as misses, "
            f"and a rerun with higher limits grades {agree(summary.limits, 'it', 'them')}",
            style="yellow", markup=False,
            highlight=False)
    if summary.cut:
        err_console.print(
            f"note: {counted(summary.cut, 'verdict row')} {agree(summary.cut, 'was', 'were')} "
            "cut to --max-cell-chars / --max-row-bytes (marked truncated)", markup=False,
            highlight=False)
    if summary.resumed:
        err_console.print(f"resumed: {counted(summary.resumed, 'row')} "
                          f"{agree(summary.resumed, 'was', 'were')} already in {output} with these "
                          "settings", markup=False, highlight=False)
    err_console.print(f"wrote {output}", markup=False, highlight=False)


@app.command("sql-match", rich_help_panel="Score and grade")
def sql_match(
    input: Annotated[Path, typer.Option(
        "--input", "-i", metavar="FILE",
        help="Records (JSON Lines): instance_id/id, response/final_answer, "
        "gold_sql/sql, db or db_path, optional messages + message_format.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Verdicts (JSON Lines), one per input row; an existing file is "
        "resumed (rows of other settings or edited lines are graded again).")],
    db_root: Annotated[Path | None, typer.Option(
        "--db-root", metavar="DIR",
        help="Folder of the databases, for records that give db, not db_path.")
    ] = None,
    db_template: Annotated[str, typer.Option(
        "--db-template", metavar="TEMPLATE",
        help="Database path below --db-root; {db} is the record's db.")
    ] = DEFAULT_TEMPLATE,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", help="Seconds per record: executing the gold and agent "
        "queries and comparing their results; 0 disables the limit.")] = 120.0,
    max_rows: Annotated[int, typer.Option(
        "--max-rows", metavar="N",
        help="Rows fetched per query; a bigger result is compared on this many "
        "rows and flagged truncated.")] = 100_000,
    compare: Annotated[str, typer.Option(
        "--compare", metavar="reference|strict|rows|spider|bird",
        help=f"Comparison: {', '.join(MODES)}.")] = "reference",
    strict: Annotated[bool, typer.Option("--strict", help="Same as --compare strict.")] = False,
    extract: Annotated[str, typer.Option(
        "--extract", metavar="reference|lenient",
        help="How the agent's SQL is read: reference (exactly as the reference "
        "evaluator) or lenient (any-case and sqlite labels, ~~~ fences, fences paired, a call "
        "without a result is a failure).")] = "reference",
    workers: Annotated[int | None, typer.Option(
        "--workers", metavar="N",
        help="Query worker processes (default: one per core, at least 2).")
    ] = None,
    memory_mb: Annotated[int, typer.Option(
        "--memory-mb", metavar="MIB", help="Memory limit of the whole run (this process and "
        "its query workers), in MiB; a record that needs more is graded result_too_large.")
    ] = 2048,
    table_rows: Annotated[int, typer.Option(
        "--table-rows", metavar="N", help="Rows of each result table kept in a verdict.")] = 20,
    max_cell_chars: Annotated[int, typer.Option(
        "--max-cell-chars", metavar="N", min=16, help="Longest result-table cell kept in a "
        "verdict, in characters (longer cells are cut and the row is marked truncated).")
    ] = 1000,
    max_row_bytes: Annotated[int, typer.Option(
        "--max-row-bytes", metavar="BYTES", min=4096, help="Longest verdict line, in bytes (a "
        "longer one drops its table rows, then cuts its long texts, and is marked truncated).")
    ] = 1_000_000,
    restart: Annotated[bool, typer.Option(
        "--restart", help="Discard an existing output file instead of resuming it.")] = False,
    shard: Annotated[str | None, o.SHARD_A] = None,
    shards: Annotated[int | None, o.SHARDS_A] = None,
    executor_name: Annotated[str, o.EXECUTOR_A] = "local",
    ray_workers: Annotated[int | None, o.RAY_WORKERS_A] = None,
) -> None:
    """Grade Search-to-SQL answers by running agent and gold SQL read-only and comparing results.

    The agent's SQL is taken from its answer (last fenced sql block, else last plain fenced
    block) or, failing that, from the last successful run_sql call of its trajectory, read
    exactly as the reference evaluator reads it (--extract lenient for the robust reading; the
    summary says how many verdicts the other reading would change). Both
    queries run on a read-only connection in sandboxed worker processes; the result tables are
    compared with the {benchmark titles: agent} rule (--compare reference, the default) or a
    stricter one (strict, rows, spider, bird). Prints accuracy and counts per reason.

    Examples:

      hopscore sql-match --input records.jsonl --output verdicts.jsonl --db-root livesqlbench/

      hopscore sql-match -i records.jsonl -o strict.jsonl --db-root livesqlbench/ \
          --compare strict
    """
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_file
    from hopscore.files.shard import clear_sidecar
    from hopscore.sql.match_job import MatchOptions, run_sql_match
    from hopscore.sql.sandbox import SqlExecutor, sqlite_version

    # before anything is read or removed: -i f -o f --restart would empty the input
    claim_for_command(output_file(output, "--output"), inputs=[
        Input(input, "--input"), *([Input(db_root, "--db-root")] if db_root is not None else [])])
    if strict:
        if compare not in ("reference", "strict"):
            raise HopscoreError("--strict cannot be combined with --compare " + compare)
        compare = "strict"
    if max_rows < 1:
        raise HopscoreError("--max-rows must be at least 1")
    if not input.is_file():
        raise InputError(input, "file not found")
    if db_root is not None and not db_root.is_dir():
        raise HopscoreError(f"--db-root {db_root}: not a folder")
    options = MatchOptions(
        db_root=db_root.resolve() if db_root is not None else None,
        db_template=db_template, timeout_s=timeout if timeout > 0 else None, max_rows=max_rows,
        compare=compare, table_rows=table_rows, extract=extract,
        max_cell_chars=max_cell_chars, max_row_bytes=max_row_bytes,
    )
    for note in _version_warnings():
        err_console.print(f"warning: SQLite {sqlite_version()}: {note}", style="yellow",
                          markup=False, highlight=False)
    chosen = o.shard_option(shard, shards)
    use_ray = o.executor_option(executor_name, ray_workers) == "ray"
    if chosen is None:
        clear_sidecar(output)
    try:
        with SqlExecutor(workers, memory_mb=memory_mb) as executor:
            summary = run_sql_match(input, output, options, executor=executor, restart=restart,
                                    warn=err_console, shard=chosen, ray=use_ray,
                                    ray_workers=ray_workers)
    except KeyboardInterrupt:
        saved = _verdicts_in(output)
        raise Interrupted(f"{counted(saved, 'verdict')} {agree(saved, 'is', 'are')} saved in "
                          f"{output}; rerun the same command (without --restart) to grade the "
                          "rest") from None
    _print_summary(summary, output)
    invalid = summary.reasons["invalid_input"]
    if chosen is not None and not summary.total:
        err_console.print(f"note: shard {chosen} of {input} holds no line", markup=False,
                          highlight=False)
        return
    if invalid == summary.total:
        what = "has no rows" if not summary.total else f"has no valid row ({invalid} invalid)"
        err_console.print(f"warning: {input} {what}; nothing was graded", style="yellow",
                          markup=False, highlight=False)
        raise typer.Exit(1)
