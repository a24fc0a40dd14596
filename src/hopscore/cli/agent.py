"""``hopscore agent``: run a tool-using agent on every task of a benchmark whose
:attr:`~hopscore.benchmarks.base.Benchmark.runner` is ``"agent"``, grade its answers, score them.

``hopscore run NAME ...`` for such a benchmark is taken as ``hopscore agent NAME ...`` (the
form it had before this command), with one line on stderr saying so
(:func:`hopscore.cli.alias.as_agent`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.agent_options import (
    DEFAULT_MAX_TURNS,
    PANEL_TASKS,
    GradingOptions,
    LoopOptions,
    WorldOptions,
)
from hopscore.cli.agent_search import SearchAgentOptions, run_search_agent, wants_search
from hopscore.cli.alias import agent_benchmark
from hopscore.cli.gathered import gathered
from hopscore.cli.request_options import JobOptions, RequestOptions, SearchOptions
from hopscore.engine.budget import BUDGET
from hopscore.errors import BudgetReached, HopscoreError
from hopscore.scores.display import print_table

if TYPE_CHECKING:
    from hopscore.agent.settings import HdrSettings
    from hopscore.benchmarks.base import Benchmark

#: Turns per attempt of the local model on the built-in world (its answers are weak; 300 turns
#: of a 135M-parameter model on the CPU would take hours).
LOCAL_WORLD_TURNS = 4
LOCAL_WORLD_TOKENS = 128


def _chosen(word: str | None) -> Benchmark[Any, Any]:
    if word is not None:
        found = agent_benchmark(word)
        if found is None:
            benchmarks.get(word)  # an unknown name: its error, with "did you mean"
            raise HopscoreError(f"{word} is not run by an agent; use hopscore run {word}")
        return found
    agents = [bench for bench in map(benchmarks.get, benchmarks.names()) if bench.runner == "agent"]
    if len(agents) != 1:
        raise HopscoreError("name the benchmark: one of "
                            + ", ".join(bench.name for bench in agents))
    return agents[0]


@app.command(name="agent", rich_help_panel="Run models and agents")
@gathered(world=WorldOptions, search=SearchOptions, loop=LoopOptions, grading=GradingOptions,
          requests=RequestOptions, job=JobOptions, search_agent=SearchAgentOptions)
def agent_command(
    ctx: typer.Context,
    benchmark: str | None = typer.Argument(
        None, show_default=False,
        help="A benchmark an agent runs on (default: the only one), or a QA benchmark for "
        "the search agent."),
    world: WorldOptions = ...,  # type: ignore[assignment]
    model: str = ro.MODEL,
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", rich_help_panel=ro.PANEL_OUTPUT, metavar="DIR",
        help="Run directory (default runs/<benchmark>__<model>); an existing run is resumed."),
    temperature: float = typer.Option(
        0.0, "--temperature", rich_help_panel=ro.PANEL_MODEL, min=0.0,
        help="Sampling temperature."),
    max_tokens: int = ro.MAX_TOKENS,
    seed: int | None = ro.SEED,
    limit: int | None = typer.Option(
        None, "--limit", rich_help_panel=PANEL_TASKS, metavar="K", min=1,
        help="Only the first K tasks."),
    repeats: int = typer.Option(
        1, "--repeats", "-k", metavar="K", min=1, rich_help_panel=PANEL_TASKS,
        help="Attempts per task: the scores are Avg@k, the mean over the k attempts, with "
        "pass@1..pass@k; intervals are over tasks."),
    corpus: Path | None = typer.Option(
        None, "--corpus", rich_help_panel=ro.PANEL_RETRIEVAL, metavar="FILE",
        help="JSONL documents: {url, title, text} for the bm25 search backend; for the "
        "search agent {id, title, text} or the wiki-18 passages' {id, contents}."),
    search: SearchOptions = ...,  # type: ignore[assignment]
    loop: LoopOptions = ...,  # type: ignore[assignment]
    grading: GradingOptions = ...,  # type: ignore[assignment]
    requests: RequestOptions = ...,  # type: ignore[assignment]
    resamples: int = o.RESAMPLES,
    ci: str = o.CI,
    ci_level: float = o.CI_LEVEL,
    progress: bool = ro.PROGRESS,
    job: JobOptions = ...,  # type: ignore[assignment]
    search_agent: SearchAgentOptions = ...,  # type: ignore[assignment]
    json_output: bool = ro.JSON_OUTPUT,
) -> None:
    """Run a tool-calling agent on every task, grade its answers and score them.

    The agent has run_sql, knowledge tools, web_search, web_fetch and final_answer: give
    --tasks FILE --db-root DIR, a search backend (--corpus FILE.jsonl for local BM25, or
    --search-backend http) and a judge for the free-text answers (--judge-model); with none of
    --tasks, --db-root, --corpus it runs on hopscore's built-in world. Writes the predictions,
    grades.jsonl, metrics.json and scores.jsonl into the run directory; re-running the same
    command resumes. Exit status 1 when some attempts still failed.

    On a QA benchmark (or with --agent search) the search agent runs instead: it searches
    --corpus (BM25) in a loop, with <search> tags or a native search tool, and answers; the
    benchmark scores the answers, and metrics.json's search block counts the searches and the
    gold paragraphs retrieved.

    Examples:

      hopscore agent --tasks tasks.jsonl --db-root livesqlbench/ --corpus corpus.jsonl \
          --model openai/gpt-4o-mini --judge-model gpt-4o-mini

      hopscore agent --model local/smollm2 --limit 2

      hopscore agent NAME --gold dev.json --corpus wiki.jsonl \
          --model openai/gpt-4o-mini --search-protocol native
    """
    if wants_search(search_agent, benchmark):
        assert benchmark is not None
        run_search_agent(search_agent, requests, job, benchmark=benchmark, model=model,
                         output_dir=output_dir, temperature=temperature, max_tokens=max_tokens,
                         seed=seed, limit=limit, repeats=repeats, corpus=corpus,
                         max_turns=None if loop.max_turns == DEFAULT_MAX_TURNS
                         else loop.max_turns, resamples=resamples, ci=ci, ci_level=ci_level,
                         progress=progress, json_output=json_output)
        return
    if search_agent.gold is not None:
        raise HopscoreError("--gold is the search agent's (a QA benchmark); the tool agent "
                            "reads its tasks from --tasks")
    _chosen(benchmark)
    # --concurrency not given (or called from Python, ctx None): follow the server's slots
    source = None if ctx is None else ctx.get_parameter_source("concurrency")
    follow_slots = source is None or source.name == "DEFAULT"
    settings = agent_settings(world, search, loop, grading, requests, job, model=model,
                              output_dir=output_dir, temperature=temperature,
                              max_tokens=max_tokens, seed=seed, limit=limit, repeats=repeats,
                              corpus=corpus, resamples=resamples, ci=ci, ci_level=ci_level,
                              follow_slots=follow_slots)
    local_judge = model.startswith("local/") and settings.judge_model == model
    run_agent(settings, progress=progress, json_output=json_output, rerun=job.rerun(),
              share_local=local_judge)


def agent_settings(world: WorldOptions, search: SearchOptions, loop: LoopOptions,
                   grading: GradingOptions, requests: RequestOptions, job: JobOptions, *,
                   model: str, output_dir: Path | None, temperature: float, max_tokens: int,
                   seed: int | None, limit: int | None, repeats: int, corpus: Path | None,
                   resamples: int, ci: str, ci_level: float,
                   follow_slots: bool) -> HdrSettings:
    """The agent run's settings from the command's options (the built-in world when no task,
    database or corpus is given)."""
    from hopscore.agent.benchmark import short_title
    from hopscore.agent.run_dir import default_output_dir
    from hopscore.agent.settings import HdrSettings

    local = model.startswith("local/")
    tasks, db_root = world.tasks, world.db_root
    builtin = all(value is None for value in (tasks, db_root, corpus, world.overlay,
                                              search.search_url)) \
        and search.search_backend == "bm25"
    judge = (grading.judge_model, grading.judge_base_url, grading.judge_api_key_env)
    max_turns = loop.max_turns
    if builtin:
        from hopscore.agent.world import materialize

        made = materialize(requests.cache())
        tasks, db_root, corpus = made.tasks, made.db_root, made.corpus
        err_console.print(f"no --tasks/--db-root/--corpus: hopscore's built-in world "
                          f"({made.root}; 18 invented tasks over 3 databases, "
                          "docs/hdr-world.md)", markup=False, highlight=False)
        provider = model.partition("/")[0]
        if not (grading.judge_model or os.environ.get("JUDGE_MODEL")) and not grading.no_grade \
                and provider in ("openai", "local"):
            judge = (model if local else model.partition("/")[2], requests.base_url,
                     requests.api_key_env)
            err_console.print(f"no --judge-model: {model} also judges the SQL2S and Parallel "
                              "answers", markup=False, highlight=False)
        if local and max_turns == DEFAULT_MAX_TURNS:
            max_turns = LOCAL_WORLD_TURNS
            err_console.print(f"{model} on the built-in world: --max-turns {max_turns} (pass "
                              "--max-turns to change it)", markup=False, highlight=False)
        if local and max_tokens == ro.DEFAULT_MAX_TOKENS:
            max_tokens = LOCAL_WORLD_TOKENS
            err_console.print(f"{model} on the built-in world: --max-tokens "
                              f"{LOCAL_WORLD_TOKENS} (pass --max-tokens to change it)",
                              markup=False, highlight=False)
    if tasks is None:
        raise HopscoreError(f"missing option --tasks (the {short_title()} task file or category "
                            "folder); "
                            "give none of --tasks, --db-root, --corpus for the built-in world")
    if db_root is None:
        raise HopscoreError("missing option --db-root (the folder of the SQLite databases)")
    from hopscore.engine.prices import use_file

    use_file(requests.prices)
    return HdrSettings(
        tasks=tasks, overlay=world.overlay, db_root=db_root, db_template=world.db_template,
        model=model, output_dir=output_dir or default_output_dir(model),
        base_url=requests.base_url, api_key_env=requests.api_key_env,
        search_backend=search.search_backend, corpus=corpus, search_url=search.search_url,
        fetch_url=search.fetch_url, direct_fetch=loop.direct_fetch,
        search_api_key_env=search.search_api_key_env, search_timeout=search.search_timeout,
        max_turns=max_turns, task_timeout=loop.task_timeout, repeats=repeats, limit=limit,
        concurrency=requests.concurrency, follow_slots=follow_slots, temperature=temperature,
        max_tokens=max_tokens or None, seed=seed, tool_choice=loop.tool_choice,
        tool_protocol=loop.tool_protocol, tool_call_content=loop.tool_call_content,
        max_text_turns=loop.max_text_turns, max_context_tokens=loop.max_context_tokens,
        sql_timeout=loop.sql_timeout, max_observation_chars=loop.max_observation_chars,
        timeout=requests.timeout if requests.timeout is not None else (900.0 if local else 300.0),
        max_retries=requests.max_retries, backoff=requests.backoff,
        max_retry_wait=requests.max_retry_wait, deadline=requests.deadline,
        max_outage=requests.max_outage, adaptive=requests.adaptive, cache_dir=requests.cache(),
        max_cost=requests.max_cost, max_tokens_total=requests.max_tokens_total,
        max_time=requests.max_time, on_budget=requests.on_budget,
        grade=not grading.no_grade, judge_model=judge[0], judge_base_url=judge[1],
        judge_api_key_env=judge[2], judge_prompt_file=grading.judge_prompt_file,
        judge_concurrency=requests.concurrency, compare=grading.compare, resamples=resamples,
        ci=ci.lower(), ci_level=ci_level, shard=job.shard_spec(),
        on_truncation=job.truncation(), executor=job.executor_name(),
        ray_workers=job.ray_workers, reasoning=requests.reasoning(),
    )  # fmt: skip


def run_agent(settings: HdrSettings, *, progress: bool, json_output: bool = False,
              rerun: str = "refuse", share_local: bool = False) -> None:
    """Run, grade, print, set the exit status.

    ``share_local``: the agent is the local model and judges too: one loaded model serves both.
    """
    from hopscore.agent.agent_job import run
    from hopscore.agent.benchmark import agent_key
    from hopscore.agent.report import truncation_warning
    from hopscore.agent.run_dir import run_writes
    from hopscore.cli.agent_files import activity_table, result_table
    from hopscore.cli.options import print_json
    from hopscore.files.outputs import claim_for_command, output_dir

    claim_for_command(output_dir(settings.output_dir, "--output-dir",
                                 writes=run_writes(settings.repeats)), inputs=settings.inputs())
    console_ = err_console if progress else None
    if share_local:
        import asyncio

        from hopscore.engine.local import LocalSmolLM2
        from hopscore.run.providers import SharedBackend

        shared = SharedBackend(LocalSmolLM2())
        try:
            result = run(settings, backend=shared, judge_backend=shared, console=console_,
                         warn=err_console, rerun=rerun)
        finally:
            asyncio.run(shared.close())
    else:
        result = run(settings, console=console_, warn=err_console, rerun=rerun)
    out = settings.output_dir
    if result.outcome.aborted is not None and result.outcome.aborted.kind == BUDGET:
        raise BudgetReached(
            f"{result.outcome.aborted.message}. Attempts finished so far are in {out}; rerun "
            "the same command with a larger budget to continue (finished attempts are kept)")
    if result.outcome.aborted is not None:
        from hopscore.engine.failures import stopped

        why = stopped(result.outcome.aborted, settings.model, result.prepared.endpoint)
        raise HopscoreError(
            f"stopped early: {why}. Attempts finished so far are in {out}; fix the model name, "
            "endpoint or key and re-run the same command to continue.")
    from hopscore.engine.failures import incomplete_lines

    for line in incomplete_lines(result.summary.get("failures") or {},
                                 result.summary.get("attempts"), "attempt"):
        err_console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    if json_output:  # metrics.json when graded, else the attempts' counts
        print_json(result.metrics if result.metrics is not None
                   else {"graded": False, agent_key(): result.summary})
    else:
        print_table(console, activity_table(result))
    if result.report is not None:
        if not json_output:
            print_table(console, result_table(result))
        for warning in result.report.warnings:
            err_console.print(f"warning: {warning}", style="yellow", markup=False,
                              highlight=False)
    else:
        err_console.print("not graded (--no-grade): predictions are in predictions.jsonl",
                          markup=False, highlight=False)
    err_console.print(f"wrote {out}", markup=False, highlight=False)
    if result.report is None and not json_output:
        cut = truncation_warning(result.summary, settings.max_tokens)
        if cut is not None:
            err_console.print(f"warning: {cut}", style="yellow", markup=False, highlight=False)
    if result.summary.get("problems") or result.summary.get("model_errors") or \
            result.summary.get("truncated_unscored"):
        raise typer.Exit(1)
