"""``hopscore judge``: grade free-text answers with an LLM judge, resumably."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.batch_options import BatchOptions
from hopscore.cli.gathered import gathered
from hopscore.cli.request_options import BudgetOptions, JobOptions, ReasoningOptions
from hopscore.defaults import DEFAULT_MAX_OUTAGE, DEFAULT_MAX_TOKENS
from hopscore.engine.budget import BUDGET
from hopscore.engine.ledger import table_rows
from hopscore.errors import BudgetReached, HopscoreError
from hopscore.files.atomic import write_json_atomic
from hopscore.scores.display import print_table
from hopscore.text.words import agree, counted

if TYPE_CHECKING:  # the judge's client stack loads when a command runs, not for --help
    from hopscore.engine import ChatBackend, RetryPolicy
    from hopscore.engine.reasoning import ReasoningSettings
    from hopscore.judge import JudgeConfig, JudgePrompt, JudgeSummary


@app.command(rich_help_panel="Score and grade")
@gathered(job=JobOptions, budgets=BudgetOptions, batching=BatchOptions, reasoning=ReasoningOptions)
def judge(
    input_path: Annotated[Path, typer.Option(
        "--input", "-i", metavar="FILE",
        help="JSON Lines rows with 'question', 'response', 'correct_answer'.",
    )],
    output_path: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE", help="Output JSON Lines; an existing file is resumed.",
    )],
    model: Annotated[str | None, typer.Option(
        "--model", "-m", metavar="NAME",
        envvar="JUDGE_MODEL", show_default=False,
        help="Judge model: a name on the OpenAI-compatible endpoint (openai/NAME: NAME), or "
        "anthropic/NAME for Claude through the Messages API (extra hopscore[anthropic]).",
    )] = None,
    base_url: Annotated[str | None, typer.Option(
        "--base-url", metavar="URL", envvar="JUDGE_BASE_URL", show_default=False,
        help="The judge's endpoint: OpenAI-compatible, e.g. http://localhost:8000/v1 (default: "
        "OpenAI); for anthropic/NAME the Messages API (default: ANTHROPIC_BASE_URL, else "
        "Anthropic's).",
    )] = None,
    api_key_env: Annotated[str, typer.Option(
        "--api-key-env", metavar="VAR",
        help="Environment variable holding the API key (unset: OPENAI_API_KEY, or "
        "ANTHROPIC_API_KEY for anthropic/NAME; a server of your own needs none).",
    )] = "JUDGE_API_KEY",
    concurrency: Annotated[int, typer.Option(
        "--concurrency", "-c", metavar="N", min=1,
        help="Most requests in flight; fewer while the endpoint cannot sustain more.",
    )] = 8,
    adaptive: Annotated[bool, typer.Option(
        "--adaptive-concurrency/--fixed-concurrency",
        help="Fit requests in flight to what the endpoint sustains, or always --concurrency.",
    )] = True,
    timeout: Annotated[float, typer.Option(
        "--timeout", metavar="SECONDS", min=0.001, help="Seconds allowed for one attempt.",
    )] = 120.0,
    max_retries: Annotated[int, typer.Option(
        "--max-retries", metavar="N", min=0, help="Retries per row after the first attempt.",
    )] = 5,
    backoff: Annotated[float, typer.Option(
        "--backoff", metavar="SECONDS",
        min=0.0, help=o.BACKOFF_HELP,
    )] = 1.0,
    max_retry_wait: Annotated[float, typer.Option(
        "--max-retry-wait", metavar="SECONDS", min=0.0,
        help="Longest wait before a retry, whatever the server's Retry-After asks.",
    )] = 60.0,
    deadline: Annotated[float | None, typer.Option(
        "--deadline", metavar="SECONDS", min=0.001, show_default=False,
        help="Seconds one row's request may take over all its attempts and waits "
        "(default: --timeout x (retries + 1)).",
    )] = None,
    prompt_file: Annotated[Path | None, typer.Option(
        "--prompt-file", metavar="FILE",
        help="Template with {question}, {answer}, {expected_answer} (e.g. a benchmark's official "
        "judge prompt); replaces the preset's template.",
    )] = None,
    judge_preset: Annotated[str | None, typer.Option(
        "--judge-preset", metavar="NAME", show_default=False,
        help="A benchmark's judge prompt and verdict reader: BENCHMARK/NAME, BENCHMARK (its "
        "default preset) or builtin (the default); see docs/judge.md.",
    )] = None,
    max_tokens: Annotated[int, typer.Option(
        "--max-tokens", metavar="N", min=0, help="Completion budget per call; 0 sends none.",
    )] = DEFAULT_MAX_TOKENS,
    cache_dir: Annotated[Path | None, typer.Option(
        "--cache-dir", metavar="DIR", envvar="HOPSCORE_CACHE_DIR", show_default=False,
        help="Response cache folder (default ~/.cache/hopscore).",
    )] = None,
    no_cache: Annotated[bool, typer.Option(
        "--no-cache", help="Neither read nor write the response cache.",
    )] = False,
    max_cell_chars: Annotated[int, typer.Option(
        "--max-cell-chars", min=100, help="Longest text field kept in an output row "
        "(longer ones are cut; the row's judge.truncated says so).")] = 20_000,
    max_row_bytes: Annotated[int, typer.Option(
        "--max-row-bytes", min=10_000, help="Longest output row, in bytes (its biggest "
        "fields are replaced by a note of their size).")] = 1_000_000,
    progress: Annotated[bool, typer.Option(
        "--progress/--no-progress", help="Show a progress bar on stderr.",
    )] = True,
    summary_json: Annotated[Path | None, typer.Option(
        "--summary-json", metavar="FILE",
        help="Also write the summary (counts, tokens, wall time) as JSON here.",
    )] = None,
    retry_unparsed: Annotated[bool, typer.Option(
        "--retry-unparsed",
        help="Ask the judge again (past the cache) for rows whose reply gave no verdict.",
    )] = False,
    max_outage: float = ro.max_outage_option(panel=None),
    job: JobOptions = ...,  # type: ignore[assignment]
    budgets: BudgetOptions = ...,  # type: ignore[assignment]
    batching: BatchOptions = ...,  # type: ignore[assignment]
    reasoning: ReasoningOptions = ...,  # type: ignore[assignment]
) -> None:
    """Grade each row's response against its correct_answer with an LLM judge.

    Writes one output row per input row, in input order: the input row, then correct,
    parse_ok, extracted_final_answer, reasoning, confidence, raw_judge_output, error, and a
    'judge' object (status, model, prompt_sha256, attempts, latency, tokens, ...). Rows are
    appended as they finish; re-running the same command resumes, retrying only rows that
    are missing or failed. Exit status 1 when some rows still failed after their retries.
    A rerun whose judge settings (model, endpoint, prompt, max tokens) or input rows differ
    from the rows already in the output exits 2 naming them, unless --restart or --resume-any.

    Examples:

      hopscore judge --input answers.jsonl --output judged.jsonl --model gpt-4.1-mini

      hopscore judge -i answers.jsonl -o judged.jsonl --model qwen3-32b \
          --base-url http://localhost:8000/v1 --prompt-file answer_judge.txt
    """
    shard, shards, on_truncation, restart, resume_any, executor, ray_workers = (
        job.shard, job.shards, job.on_truncation, job.restart, job.resume_any, job.executor,
        job.ray_workers)
    from hopscore.files.output_specs import Input
    from hopscore.files.outputs import claim_for_command, output_file

    inputs = [Input(input_path, "--input")]
    if prompt_file is not None:
        inputs.append(Input(prompt_file, "--prompt-file"))
    from hopscore.judge.presets import judge_prompt

    prompt = judge_prompt(judge_preset, prompt_file)
    claim_for_command(output_file(output_path, "--output"),
                      *([output_file(summary_json, "--summary-json")] if summary_json else []),
                      inputs=inputs)
    rerun = o.rerun_policy(restart, resume_any)
    from hopscore.engine import RetryPolicy
    from hopscore.engine.prices import use_file
    from hopscore.judge import run_judge

    use_file(budgets.prices)
    config = judge_config(
        model, base_url, concurrency, prompt, api_key_env=api_key_env,
        max_tokens=max_tokens, timeout=timeout,
        retry=RetryPolicy(max_retries=max_retries, base_delay=backoff,
                          max_retry_wait=max_retry_wait, deadline=deadline),
        cache_dir=cache_dir, use_cache=not no_cache, adaptive=adaptive,
        on_truncation=o.truncation_policy(on_truncation), retry_unparsed=retry_unparsed,
        max_outage=max_outage, reasoning=reasoning.reasoning(),
    )
    config = dataclasses.replace(config, max_cell_chars=max_cell_chars,
                                 max_row_bytes=max_row_bytes, max_cost=budgets.max_cost,
                                 max_tokens_total=budgets.max_tokens_total,
                                 max_time=budgets.max_time, on_budget=budgets.on_budget)
    summary = run_judge(
        input_path, output_path, config, backend=local_judge(config),
        console=err_console if progress else None, warn=err_console, rerun=rerun,
        shard=o.shard_option(shard, shards),
        executor=o.executor_option(executor, ray_workers), ray_workers=ray_workers,
        batch=batching.mode(budgets.max_cost, budgets.max_tokens_total),
    )
    print_table(console, summary_table(summary))
    if summary.executor.get("executor") == "ray":
        from hopscore.distributed.actors import ray_line

        err_console.print(ray_line(summary.executor), markup=False, highlight=False)
    for line in summary_warnings(summary):
        err_console.print(f"warning: {line}", style="yellow", markup=False, highlight=False)
    if summary_json is not None:
        write_json_atomic(summary_json, summary.to_json())
    if summary.aborted and summary.aborted.startswith(BUDGET + ":"):
        raise BudgetReached(
            f"{summary.aborted[len(BUDGET) + 2:]}. Rows finished so far are in {output_path}; "
            "rerun the same command with a larger budget to continue (finished rows are kept, "
            "none is asked again)")
    if summary.aborted:
        from hopscore.engine.failures import stopped

        raise HopscoreError(
            f"stopped early: {stopped(summary.aborted, config.model, config.endpoint())}. Rows "
            f"finished so far are in {output_path}; fix the model name, endpoint or key and "
            "re-run the same command to continue."
        )
    err_console.print(f"wrote {output_path}", markup=False, highlight=False)
    if summary.errors:
        from hopscore.engine.failures import failure_lines

        err_console.print(
            f"incomplete: {counted(summary.errors, 'row')} failed after "
            f"{agree(summary.errors, 'its', 'their')} retries (correct is null there):",
            style="yellow", markup=False, highlight=False)
        for line in failure_lines(summary.failures, "row"):
            err_console.print(f"  {line}", style="yellow", markup=False, highlight=False,
                              soft_wrap=True)
        raise typer.Exit(1)
    if summary.truncated_unscored:
        raise typer.Exit(1)


def summary_warnings(s: JudgeSummary) -> list[str]:
    """Cut replies and replies without a verdict, each counted apart."""
    lines = []
    if s.truncated:
        what = ("their verdicts are scored as they are (--on-truncation score)"
                if not s.truncated_unscored else
                f"{s.truncated_unscored} of them have no verdict (--on-truncation error)")
        lines.append(f"{counted(s.truncated, 'judge reply', 'judge replies')} "
                     f"{agree(s.truncated, 'was', 'were')} cut at --max-tokens (finish_reason "
                     f"length); {what}")
    if s.parse_failures:
        lines.append(f"{counted(s.parse_failures, 'judge reply', 'judge replies')} gave no "
                     "verdict (parse failures, graded incorrect; the answer the judge extracted "
                     "is kept); --retry-unparsed asks again")
    return lines


def judge_config(
    model: str | None,
    base_url: str | None,
    concurrency: int,
    prompt: JudgePrompt | Path | None,
    *,
    api_key_env: str = "JUDGE_API_KEY",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    timeout: float = 120.0,
    retry: RetryPolicy | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    adaptive: bool = True,
    on_truncation: str = "score",
    retry_unparsed: bool = False,
    max_outage: float = DEFAULT_MAX_OUTAGE,
    reasoning: ReasoningSettings | None = None,
) -> JudgeConfig:
    """Judge settings from command-line values (``hopscore judge`` and ``score --judge``)."""
    from hopscore.engine import RetryPolicy, default_cache_dir
    from hopscore.engine.providers import resolve
    from hopscore.judge import JudgeConfig, JudgePrompt

    if not model:
        raise HopscoreError("set JUDGE_MODEL or pass --model (--judge-model for score --judge)")
    # the one resolver of every command: credentials checked here, before any request
    target = resolve(model, base_url or None, api_key_env, default_key_env="JUDGE_API_KEY",
                     openai_env=None)
    if not isinstance(prompt, JudgePrompt):
        prompt = JudgePrompt.from_file(prompt) if prompt else JudgePrompt.builtin()
    from hopscore.engine.reasoning import check as check_reasoning

    check_reasoning(reasoning, target.spec.provider, max_tokens or None)
    return JudgeConfig(
        model=model,
        base_url=base_url or None,
        api_key=target.api_key,
        key_env=target.key_env,
        prompt=prompt,
        max_tokens=max_tokens or None,
        concurrency=1 if target.spec.is_local else concurrency,
        timeout=timeout,
        retry=retry or RetryPolicy(),
        cache_dir=(cache_dir or default_cache_dir()) if use_cache else None,
        adaptive=adaptive,
        on_truncation=on_truncation,
        retry_unparsed=retry_unparsed,
        max_outage=max_outage,
        reasoning=reasoning,
    )


def local_judge(config: JudgeConfig) -> ChatBackend | None:
    """The local model's backend when it judges (it runs in this process), else None."""
    if not config.model.startswith("local/"):
        return None
    from hopscore.engine.local import check_available
    from hopscore.engine.providers import local_backend

    check_available()
    return local_backend()


def summary_table(s: JudgeSummary) -> Table:
    preset = f"preset {s.preset}, " if s.preset else ""
    table = Table(title=f"judge {s.model} ({preset}prompt sha256 {s.prompt_sha256[:12]})",
                  title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("rows", str(s.rows))
    table.add_row("accuracy (all rows)", f"{100 * s.accuracy:.2f}%  ({s.correct}/{s.rows})")
    judged = s.accuracy_judged
    judged_text = "-" if judged is None else f"{100 * judged:.2f}%"
    table.add_row("accuracy (rows with a verdict)", judged_text)
    table.add_row("parse failures (no verdict)", str(s.parse_failures)
                  + (f"  ({s.retried_unparsed} asked again)" if s.retried_unparsed else ""))
    table.add_row("replies cut at --max-tokens", str(s.truncated)
                  + (f"  ({s.truncated_unscored} not scored)" if s.truncated_unscored else ""))
    table.add_row("empty responses (graded incorrect)", str(s.empty_responses))
    table.add_row("invalid inputs (empty question/gold)", str(s.invalid_inputs))
    errors = ", ".join(f"{k} {v}" for k, v in sorted(s.errors_by_kind.items()))
    table.add_row("errors (no verdict)", f"{s.errors}" + (f"  ({errors})" if errors else ""))
    table.add_row("verdict differs from reference parser", str(s.differs_from_reference))
    table.add_row("rows judged this run / already done", f"{s.processed} / {s.already_done}")
    table.add_row("requests sent / retries / cache hits",
                  f"{s.requests_sent} / {s.retries} / {s.cache_hits}")
    if s.batch_ids:
        table.add_row("of them answered by batch", f"{s.answered_by_batch} "
                      f"({', '.join(s.batch_ids)})")
    table.add_row("tokens this run (prompt + completion)",
                  f"{s.prompt_tokens} + {s.completion_tokens}")
    for label, value in table_rows(s.usage):  # the output file's ledger, by role
        table.add_row(label, value)
    table.add_row("wall time", f"{s.wall_s:.1f} s")
    return table
