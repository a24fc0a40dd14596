"""The agent benchmark's file commands: ``validate-predictions``, ``hdr-tasks``, and the tables
``hopscore agent`` prints (:mod:`hopscore.cli.agent`).

The benchmark is the one the agent machinery runs on
(:func:`hopscore.agent.benchmark.agent_benchmark`): its tasks are read by what it declares
(:meth:`~hopscore.benchmarks.base.Benchmark.load_agent_tasks`), and the help and the tables
name it by its declared title and abbreviation (placeholders filled by
:func:`hopscore.cli.help.with_declared`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.engine.ledger import table_rows
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic
from hopscore.scores.display import print_table
from hopscore.text.words import counted

if TYPE_CHECKING:
    from hopscore.agent.agent_job import HdrRunResult


#: the commands' panel in ``hopscore --help``: the agent benchmark's title
PANEL = "{benchmark titles: agent}"


@app.command("validate-predictions", rich_help_panel=PANEL)
def validate_predictions(
    predictions: Annotated[Path, typer.Argument(
        help="{benchmark short titles: agent} submission: JSON Lines of {instance_id, "
        "final_answer}.", show_default=False)],
    tasks: Annotated[Path | None, typer.Option(
        "--tasks", metavar="PATH",
        help="Task file or category folder: check ids against it and find missing "
        "tasks.")] = None,
    overlay: Annotated[Path | None, typer.Option(
        "--overlay", metavar="PATH", help="v2 patch (file or folder) overlaid on --tasks.")] = None,
    allow_missing: Annotated[bool, typer.Option(
        "--allow-missing", help="Tasks without a prediction are warnings, not errors.")] = False,
    json_output: Annotated[Path | None, typer.Option(
        "--json", metavar="FILE", help="Also write every finding as JSON here.")] = None,
) -> None:
    """Check an {benchmark short titles: agent} predictions file and report every problem, not
    only the first.

    Makes every check of the reference validator (JSON objects with exactly instance_id and
    final_answer, non-empty string ids without duplicates, non-empty string answers) on every
    line, plus: byte order mark, encoding, duplicate keys, ids with surrounding whitespace and
    whitespace-variant duplicates, ids against the task set (with --tasks) or the family
    prefixes, missing tasks, and S2SQL answers without a fenced sql block. Exit status 1 when
    there is an error.

    Examples:

      hopscore validate-predictions predictions.jsonl --tasks tasks.jsonl

      hopscore validate-predictions predictions.jsonl --tasks hdr_v1/ --overlay hdr_v2_patch/ \
          --allow-missing
    """
    from hopscore.agent.benchmark import agent_benchmark
    from hopscore.agent.validate import validate_predictions as validate

    if overlay is not None and tasks is None:
        raise HopscoreError("--overlay needs --tasks")
    task_list = (agent_benchmark().load_agent_tasks(tasks, overlay)[0] if tasks is not None
                 else None)
    source = None if tasks is None else str(tasks) + ("" if overlay is None else f" + {overlay}")
    report = validate(predictions, task_list, tasks_source=source, allow_missing=allow_missing)
    for finding in report.findings:
        style = "red" if finding.severity == "error" else "yellow"
        console.print(f"{finding.severity}: {finding}", style=style, markup=False,
                      highlight=False, soft_wrap=True)
    if json_output is not None:
        write_json_atomic(json_output, report.to_json())
    if report.ok:
        note = f" ({counted(len(report.warnings), 'warning')})" if report.warnings else ""
        console.print(f"OK: {counted(len(report.ids), 'unique prediction record')} in "
                      f"{predictions}{note}",
                      markup=False, highlight=False, soft_wrap=True)
        return
    console.print(f"FAILED: {counted(len(report.errors), 'error')}, "
                  f"{counted(len(report.warnings), 'warning')} in "
                  f"{counted(report.records, 'record')} of {predictions}", markup=False,
                  highlight=False,
                  soft_wrap=True)
    raise typer.Exit(1)


@app.command("hdr-tasks", rich_help_panel=PANEL)
def hdr_tasks(
    tasks: Annotated[Path, typer.Argument(help="Task JSONL file or category folder (v1).",
                                          show_default=False)],
    overlay: Annotated[Path | None, typer.Option(
        "--overlay", metavar="PATH",
        help="v2 sparse patch (file or folder) of whole replacement records.")
    ] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", metavar="FILE",
        help="Write the resulting task set as one JSONL file.")] = None,
) -> None:
    """Check an {benchmark short titles: agent} task set (and apply the v2 overlay): counts per
    family, overrides, sha256.

    Examples:

      hopscore hdr-tasks hdr_v1/

      hopscore hdr-tasks hdr_v1/ --overlay hdr_v2_patch/ --output tasks.jsonl
    """
    from hopscore.agent.benchmark import agent_benchmark, short_title
    from hopscore.benchmarks.agent_tasks import family_counts, tasks_jsonl, tasks_sha256
    from hopscore.cli.options import claim_file_output
    from hopscore.files.atomic import write_text_atomic

    claim_file_output(output, tasks=tasks, overlay=overlay)
    task_list, merged = agent_benchmark().load_agent_tasks(tasks, overlay)
    table = Table(title=f"{short_title()} tasks: {tasks}"
                  + ("" if overlay is None else f" + {overlay}"), title_justify="left")
    table.add_column("family")
    table.add_column("tasks", justify="right")
    if merged is not None:
        table.add_column("replaced by the overlay", justify="right")
    counts = family_counts(task_list)
    for label, count in counts.items():
        table.add_row(label, str(count), *([str(merged.overrides[label])] if merged else []))
    table.add_row("all", str(len(task_list)),
                  *([str(sum(merged.overrides.values()))] if merged else []))
    print_table(console, table)
    without_gold = sum(1 for t in task_list if t.gold is None)
    if without_gold:
        console.print(f"{without_gold} tasks carry no gold (final_answer, or sql for S2SQL): "
                      "they can be run but not graded", markup=False, highlight=False)
    console.print(f"sha256 {tasks_sha256(task_list)}", markup=False, highlight=False)
    if output is not None:
        write_text_atomic(output, tasks_jsonl(task_list))
        err_console.print(f"wrote {output}", markup=False, highlight=False)


def pct(value: object) -> str:
    return "-" if not isinstance(value, float) else f"{100 * value:.2f}"


def result_table(result: HdrRunResult) -> Table:
    from hopscore.agent.benchmark import agent_benchmark

    summary = result.summary
    k = result.prepared.settings.repeats
    table = Table(title=f"{agent_benchmark().title}: {result.prepared.spec}, k={k} (in %; "
                  "overall is the task-weighted mean, as the leaderboard)", title_justify="left")
    table.add_column("family")
    table.add_column("tasks", justify="right")
    table.add_column(f"Avg@{k}" if k > 1 else "accuracy", justify="right")
    if k > 1:
        table.add_column(f"Pass@{k}", justify="right")
    for label, block in (summary.get("by_family") or {}).items():
        table.add_row(label, str(block["n"]), pct(block["avg_at_k"]),
                      *([pct(block["pass_at_k"])] if k > 1 else []))
    overall = summary.get("overall") or {}
    table.add_row("overall", str(summary.get("tasks")), pct(overall.get("avg_at_k")),
                  *([pct(overall.get("pass_at_k"))] if k > 1 else []), style="bold")
    return table


def activity_table(result: HdrRunResult) -> Table:
    s = result.summary
    stats = result.stats
    table = Table(title="agent", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    statuses = ", ".join(f"{k} {v}" for k, v in sorted((s.get("statuses") or {}).items()))
    table.add_row("attempts", f"{s.get('attempts')}  ({statuses})")
    table.add_row("attempts this run / already done",
                  f"{result.outcome.processed} / {result.outcome.already_done}")
    table.add_row("mean turns", str(s.get("mean_turns")))
    protocol = result.prepared.protocol.to_json()
    switch = protocol.get("switch")
    table.add_row("tool protocol", f"{protocol.get('used')} ({protocol.get('requested')}"
                  + (f"; switched after {switch['after_replies']} replies" if switch else "")
                  + ")")
    tools = ", ".join(f"{name} {t['calls']} ({counted(t['errors'], 'error')}, "
                      f"{1000 * t['mean_latency_s']:.0f} ms)"
                      for name, t in (s.get("tools") or {}).items())
    table.add_row("tool calls", f"{s.get('tool_calls')}  {tools}")
    if s.get("truncated"):
        table.add_row("cut at --max-tokens", f"{counted(s['truncated'], 'attempt')} "
                      f"({counted(s.get('truncated_replies', 0), 'reply', 'replies')})"
                      + (", not graded (--on-truncation error)" if s.get("truncated_unscored")
                         else ""))
    table.add_row("model requests sent / retries / cache hits",
                  f"{stats.requests_sent} / {stats.retries} / {stats.cache_hits}")
    table.add_row("tokens (prompt + completion)",
                  f"{s.get('prompt_tokens')} + {s.get('completion_tokens')}")
    for label, value in table_rows(s.get("usage") or {}):  # the attempts' ledger, by role
        table.add_row(label, value)
    grades = (s.get("grades") or {}).get("statuses")
    if grades:
        table.add_row("grades", ", ".join(f"{k} {v}" for k, v in sorted(grades.items())))
    table.add_row("wall time (agent)", f"{result.outcome.wall_s:.1f} s")
    return table
