"""``hopscore merge``: join shard outputs into the output of an unsharded run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hopscore.cli import app, console, err_console
from hopscore.scores.display import print_table

if TYPE_CHECKING:
    from hopscore.merge import ShardOutput


@app.command(rich_help_panel="Run models and agents")
def merge(
    shards: Annotated[list[Path], typer.Argument(
        help="The shard outputs: run or suite directories, or judge / sql-match files, each "
        "made with --shard I/N.", show_default=False)],
    output: Annotated[Path, typer.Option(
        "--output", "-o", help="Where the merged output goes (a directory for runs and "
        "suites, a file for judge and sql-match); rewritten by a repeated merge.",
        show_default=False)],
    input_path: Annotated[Path | None, typer.Option(
        "--input", "-i", help="judge / sql-match: the input file, when it is not at the "
        "path the shards recorded (its sha256 must match).")] = None,
    gold: Annotated[Path | None, typer.Option(
        "--gold", help="run: the gold file, when it is not at the path the shards recorded "
        "(its sha256 must match).")] = None,
) -> None:
    """Join the shards of one run into exactly the files an unsharded run writes.

    Rows come in gold or input order, metrics are computed again from the merged rows, and
    config.json (or OUT.merge.json beside a merged file) records the shards. The shards must
    be of one run: the same settings fingerprint, one split, each shard once, each row in the
    shard its hash gives. When rows are missing nothing is written, and the error lists them
    per shard so that one shard can be run again alone. Merging again gives the same files.

    Examples:

      hopscore merge runs/hotpot.0 runs/hotpot.1 runs/hotpot.2 runs/hotpot.3 -o runs/hotpot

      hopscore merge judged.0.jsonl judged.1.jsonl -o judged.jsonl
    """
    from hopscore.merge import merge as run_merge

    def warn(text: str) -> None:
        err_console.print(text, style="yellow" if text.startswith("warning") else None,
                          markup=False, highlight=False)

    from hopscore.merge.common import check_not_running

    kind, result = run_merge(shards, output, warn, input_path=input_path, gold=gold,
                             claim=check_not_running, ready=lambda found: _claim(found, output))
    failed = _show(kind, result, output)
    err_console.print(f"merged {len(shards)} shards into {output}", markup=False,
                      highlight=False)
    if failed:
        raise typer.Exit(1)


#: What a merge writes into a directory output (the run's own files besides).
WRITES = ("config.json", "samples.jsonl", "metrics.json", "scores.jsonl")


def _claim(found: list[ShardOutput], output: Path) -> None:
    """One writer for the merged output, taken once the shards passed every check (so a
    refused merge leaves nothing behind), held until the command ends."""
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_dir, output_file

    directory = found[0].kind in ("run", "agent", "suite")
    target = output_dir(output, "--output", writes=WRITES) if directory \
        else output_file(output, "--output")
    claim_for_command(target, inputs=[Input(o.path, "shard") for o in found])


def _show(kind: str, result: Any, output: Path) -> bool:
    """Print what the command itself prints for its output; True when rows failed."""
    if kind == "run":
        from hopscore.scores.display import print_report

        print_report(result.report, console, err_console)
        return bool(result.summary.get("errors"))
    if kind == "suite":
        from hopscore.cli.methods_tables import suite_methods_table, suite_table
        from hopscore.files.io import load_json
        from hopscore.run.suite import SuiteRow

        rows = [SuiteRow(name, entry["status"], entry.get("mcr"), entry.get("run"),
                         entry.get("detail") or "", methods=entry.get("methods"))
                for name, _, entry in result]
        suite = load_json(output / "suite.json")
        model = str(suite.get("model"))
        if any(row.methods for row in rows):
            print_table(console, suite_methods_table(rows, model,
                                                     str(suite.get("strategy"))))
        else:
            print_table(console, suite_table(rows, model))
        return any(row.status != "ok" for row in rows)
    if kind == "agent":
        from hopscore.cli.agent_files import result_table

        if result.report is not None:
            print_table(console, result_table(result))
        return bool(result.summary.get("problems") or result.summary.get("model_errors"))
    if kind == "judge":
        from hopscore.cli.judge import summary_table

        print_table(console, summary_table(result.summary))
        return bool(result.summary.errors)
    from hopscore.cli.sql_match import _print_summary

    _print_summary(result.summary, output)
    return False
