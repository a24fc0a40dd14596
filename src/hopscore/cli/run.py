"""``hopscore run``: run a model on a benchmark and score it; ``hopscore suite mcr``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.methods_tables import mcr_line, methods_table
from hopscore.cli.request_options import (
    DEFAULT_MAX_TOKENS,
    METHODS,
    PANEL_MODEL,
    PANEL_OUTPUT,
    PANEL_PROMPT,
    PANEL_RETRIEVAL,
)
from hopscore.errors import HopscoreError
from hopscore.files.outputs import claim_for_command
from hopscore.files.outputs import output_dir as directory
from hopscore.scores.display import print_report, print_table, print_warnings

if TYPE_CHECKING:
    from hopscore.run.run_job import RunResult

HDR = "HybridDeepResearch agent (hopscore run hybrid-deep-research)"
#: Turns per attempt of the local model on the built-in world (its answers are weak; 300 turns
#: of a 135M-parameter model on the CPU would take hours).
LOCAL_WORLD_TURNS = 4
LOCAL_WORLD_TOKENS = 128


def summary_table(result: RunResult) -> Table:
    s = result.summary
    stats = result.stats
    prepared = result.prepared
    table = Table(title=f"run: {prepared.benchmark.name} with {prepared.spec}",
                  title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("examples", str(s.get("examples", s.get("samples", len(prepared.examples)))))
    if s.get("repeats", 1) > 1:
        table.add_row("attempts per example", str(s["repeats"]))
    table.add_row("answered / no answer / abstained",
                  f"{s.get('answered', 0)} / {s.get('no_answer', 0)} / {s.get('abstained', 0)}")
    rate = s.get("strict_failure_rate")
    table.add_row("strict extraction failed",
                  f"{s.get('strict_failures', 0)}" + (f"  ({100 * rate:.1f}%)" if rate else ""))
    kinds = ", ".join(f"{k} {v}" for k, v in sorted((s.get("errors_by_kind") or {}).items()))
    table.add_row("request errors (not scored)", f"{s.get('errors', 0)}"
                  + (f"  ({kinds})" if kinds else ""))
    unscored = s.get("truncated_unscored")
    table.add_row("cut at --max-tokens", f"{s.get('truncated', 0)}"
                  + (f"  (not scored: {unscored})" if unscored else ""))
    table.add_row("samples this run / already done",
                  f"{result.outcome.processed} / {result.outcome.already_done}")
    table.add_row("requests sent / retries / cache hits",
                  f"{stats.requests_sent} / {stats.retries} / {stats.cache_hits}")
    table.add_row("tokens this run (prompt + completion)",
                  f"{stats.prompt_tokens} + {stats.completion_tokens}")
    settled = stats.settled()
    if settled is not None:
        table.add_row("requests in flight at the end", settled)
    table.add_row("wall time", f"{result.outcome.wall_s:.1f} s")
    return table


@app.command(name="run", rich_help_panel="Run models and agents")
def run_command(
    ctx: typer.Context,
    benchmark: str = typer.Argument(
        ..., show_default=False,
        help=f"One of: {', '.join(benchmarks.names())}."),
    gold: Path | None = typer.Option(
        None, "--gold", "--tasks", "-g", metavar="FILE", show_default=False,
        help="Required: the benchmark's gold file, or a Hugging Face copy "
        "(docs/getting-the-data.md); hybrid-deep-research: --tasks, the task file or folder "
        "(none of --tasks, --db-root, --corpus: the built-in world)."),
    model: str = ro.MODEL,
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", rich_help_panel=PANEL_OUTPUT, metavar="DIR",
        help="Run directory (default runs/<benchmark>__<model>); an existing run is resumed."),
    base_url: str | None = typer.Option(
        None, "--base-url", rich_help_panel=PANEL_MODEL, metavar="URL", show_default=False,
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (else OPENAI_BASE_URL)."),
    api_key_env: str = ro.API_KEY_ENV,
    protocol: str = typer.Option(
        "default", "--protocol", rich_help_panel=PANEL_PROMPT, metavar="default|mcr",
        help="default, or mcr (MCR's extraction, abstention, metric)."),
    shots: int | None = typer.Option(
        None, "--shots", rich_help_panel=PANEL_PROMPT, metavar="N", min=0, show_default=False,
        help="Built-in exemplars (default: 0 for cot, 4 for the chain strategies)."),
    limit: int | None = typer.Option(
        None, "--limit", rich_help_panel=PANEL_PROMPT, metavar="K", min=1,
        help="Only the first K examples."),
    sample: int | None = typer.Option(
        None, "--sample", rich_help_panel=PANEL_PROMPT, metavar="N", min=1,
        help="A seeded random sample of N examples (as MCR)."),
    sample_seed: int = ro.SAMPLE_SEED,
    temperature: float = typer.Option(
        0.0, "--temperature", rich_help_panel=PANEL_MODEL, min=0.0,
        help="Sampling temperature."),
    max_tokens: int = ro.MAX_TOKENS,
    seed: int | None = ro.SEED,
    stop: list[str] = typer.Option(
        [], "--stop", rich_help_panel=PANEL_MODEL, metavar="TEXT",
        help="Stop sequence (repeatable)."),
    prompt_template: Path | None = typer.Option(
        None, "--prompt-template", rich_help_panel=PANEL_PROMPT, metavar="FILE",
        help="Jinja template replacing the built-in prompt."),
    answer_marker: str = typer.Option(
        "Answer:", "--answer-marker", rich_help_panel=PANEL_PROMPT,
        help="Marker before the answer (strict extraction)."),
    extraction: str = typer.Option(
        "flexible", "--extraction", rich_help_panel=PANEL_PROMPT, metavar="flexible|strict",
        help="Which extracted answer is scored: flexible or strict."),
    aliases: Path | None = typer.Option(
        None, "--aliases", rich_help_panel=PANEL_PROMPT, metavar="FILE",
        help="2WikiMultihopQA id_aliases.json."),
    tables_dir: Path | None = typer.Option(
        None, "--tables-dir", rich_help_panel=PANEL_PROMPT, metavar="DIR",
        help="HybridQA: WikiTables-WithLinks folder (tables_tok/, request_tok/)."),
    context_tokens: int = typer.Option(
        3000, "--context-tokens", rich_help_panel=PANEL_PROMPT, metavar="N", min=100,
        help="Budget for table + passages (HybridQA)."),
    corpus: Path | None = ro.CORPUS,
    retrieve_k: int = ro.RETRIEVE_K,
    concurrency: int = ro.CONCURRENCY,
    adaptive: bool = ro.ADAPTIVE,
    timeout: float | None = ro.TIMEOUT,
    max_retries: int = ro.MAX_RETRIES,
    backoff: float = ro.BACKOFF,
    max_retry_wait: float = ro.MAX_RETRY_WAIT,
    deadline: float | None = ro.DEADLINE,
    max_outage: float = ro.MAX_OUTAGE,
    cache_dir: Path | None = ro.CACHE_DIR,
    no_cache: bool = ro.NO_CACHE,
    resamples: int = o.RESAMPLES,
    ci: str = o.CI,
    ci_level: float = o.CI_LEVEL,
    cluster: str | None = o.CLUSTER,
    cluster_file: Path | None = o.CLUSTER_FILE,
    progress: bool = ro.PROGRESS,
    shard: str | None = o.SHARD,
    shards: int | None = o.SHARDS,
    on_truncation: str = o.ON_TRUNCATION,
    restart: bool = o.RESTART,
    resume_any: bool = o.RESUME_ANY,
    executor: str = o.EXECUTOR,
    ray_workers: int | None = o.RAY_WORKERS,
    overlay: Path | None = typer.Option(
        None, "--overlay", metavar="PATH", rich_help_panel=HDR,
        help="v2 sparse patch overlaid on --tasks."),
    db_root: Path | None = typer.Option(
        None, "--db-root", metavar="DIR", rich_help_panel=HDR,
        help="Folder of the LiveSQLBench SQLite databases."),
    db_template: str = typer.Option(
        "{db}/{db}_template.sqlite", "--db-template", metavar="TEMPLATE", rich_help_panel=HDR,
        help="Database path below --db-root."),
    search_backend: str = typer.Option(
        "bm25", "--search-backend", metavar="bm25|http", rich_help_panel=PANEL_RETRIEVAL,
        help="bm25 (local --corpus of {url, title, text}) or http."),
    search_url: str | None = typer.Option(
        None, "--search-url", metavar="URL", rich_help_panel=PANEL_RETRIEVAL,
        help="http backend: POST {query, count} here."),
    fetch_url: str | None = typer.Option(
        None, "--fetch-url", metavar="URL", rich_help_panel=PANEL_RETRIEVAL,
        help="http backend: POST {url} here for page text."),
    direct_fetch: bool = typer.Option(
        False, "--direct-fetch", rich_help_panel=HDR,
        help="http backend without --fetch-url: GET pages."),
    search_api_key_env: str | None = typer.Option(
        None, "--search-api-key-env", metavar="VAR", rich_help_panel=PANEL_RETRIEVAL,
        help="Variable holding the search service's key (sent as a bearer header)."),
    search_timeout: float = typer.Option(
        30.0, "--search-timeout", metavar="SECONDS", min=0.001, rich_help_panel=PANEL_RETRIEVAL,
        help="Seconds per search or fetch call, in all (body included)."),
    max_turns: int = typer.Option(
        300, "--max-turns", metavar="N", min=1, rich_help_panel=HDR,
        help="Model requests per attempt (paper: 300)."),
    task_timeout: float = typer.Option(
        3600.0, "--task-timeout", metavar="SECONDS", min=0.001, rich_help_panel=HDR,
        help="Wall-clock seconds per attempt (paper: 3600)."),
    repeats: int = typer.Option(
        1, "--repeats", "-k", metavar="K", min=1, rich_help_panel=PANEL_PROMPT,
        help="Attempts per example (or HDR task): the scores are Avg@k, the mean over the k "
        "attempts, with pass@1..pass@k of the right/wrong metric; intervals are over examples."),
    tool_choice: str | None = typer.Option(
        None, "--tool-choice", metavar="auto|required|none", rich_help_panel=HDR,
        show_default=False,
        help="Sent as tool_choice with native tools: auto (default), required, none; local/smollm2"
        " without it makes every reply a call."),
    tool_protocol: str = typer.Option(
        "auto", "--tool-protocol", metavar="native|text|auto", rich_help_panel=HDR,
        help="native (the request's tools field), text (tools written into the prompt, any "
        "endpoint), auto (native; text once the endpoint ignores the tools)."),
    tool_call_content: str = typer.Option(
        "auto", "--tool-call-content", metavar="empty|null|auto", rich_help_panel=HDR,
        help="Content of tool-call turns without text: empty (\"\"), null, auto (null for Bedrock, "
        "else empty)."),
    max_text_turns: int = typer.Option(
        5, "--max-text-turns", metavar="N", min=1, rich_help_panel=HDR,
        help="Replies in a row without a tool call before an attempt ends (no_tool_call)."),
    max_context_tokens: int | None = typer.Option(
        None, "--max-context-tokens", metavar="N", min=256, rich_help_panel=HDR, show_default=False,
        help="The model's context: drop the oldest tool results to stay inside it."),
    sql_timeout: float = typer.Option(
        120.0, "--sql-timeout", metavar="SECONDS", min=0.001, rich_help_panel=HDR,
        help="Seconds per run_sql query and per graded query."),
    max_observation_chars: int = typer.Option(
        100_000, "--max-observation-chars", metavar="N", min=1000, rich_help_panel=HDR,
        help="Cap per tool result."),
    judge_model: str | None = typer.Option(
        None, "--judge-model", metavar="NAME", envvar="JUDGE_MODEL", rich_help_panel=HDR,
        show_default=False,
        help="Judge for SQL2S and Parallel answers (as judge --model: anthropic/NAME is Claude)."),
    judge_base_url: str | None = typer.Option(
        None, "--judge-base-url", metavar="URL", envvar="JUDGE_BASE_URL", rich_help_panel=HDR,
        show_default=False,
        help="The judge's endpoint (OpenAI-compatible; the Messages API for anthropic/NAME)."),
    judge_api_key_env: str = typer.Option(
        "JUDGE_API_KEY", "--judge-api-key-env", metavar="VAR", rich_help_panel=HDR,
        help="Variable of the judge key."),
    judge_prompt_file: Path | None = typer.Option(
        None, "--judge-prompt-file", metavar="FILE", rich_help_panel=HDR,
        help="Judge template (e.g. answer_judge.txt)."),
    no_grade: bool = typer.Option(
        False, "--no-grade", rich_help_panel=HDR,
        help="Run the agent and write predictions; do not grade."),
    compare: str = typer.Option(
        "reference", "--compare", metavar="reference|strict|rows|spider|bird", rich_help_panel=HDR,
        help="S2SQL comparison: reference, strict, rows, spider, bird."),
    strategy: str = typer.Option(
        "cot", "--strategy", metavar="cot|self-ask|sc|mcr", rich_help_panel=METHODS,
        help="cot (one answer), or MCR's methods: self-ask, sc (k chains, majority), mcr (k "
        "chains, meta-reasoner)."),
    chains: int | None = typer.Option(
        None, "--chains", metavar="K", min=1, rich_help_panel=METHODS, show_default=False,
        help="Chains per question for sc and mcr (default 5)."),
    chain_temperature: float = typer.Option(
        0.7, "--chain-temperature", min=0.0, rich_help_panel=METHODS,
        help="Temperature of chains 1..k-1 (chain 0: --temperature)."),
    num_retries: int | None = typer.Option(
        None, "--num-retries", metavar="N", min=0, rich_help_panel=METHODS, show_default=False,
        help="Re-run abstained questions up to N times (default: 2 for mcr, as MCR; else 0)."),
    chain_calls: int = typer.Option(
        5, "--chain-calls", metavar="N", min=1, rich_help_panel=METHODS,
        help="Model calls per chain (MCR: 5)."),
    meta_facts: str | None = typer.Option(
        None, "--meta-facts", metavar="qa|evidence|both", rich_help_panel=METHODS,
        show_default=False,
        help="What the meta-reasoner reads: qa, evidence or both (default: both when the chains "
        "retrieve, else qa)."),
    wiki_db: Path | None = typer.Option(
        None, "--wiki-db", metavar="FILE", rich_help_panel=METHODS,
        help="FEVEROUS: feverous_wikiv1.db, for open-book runs that cite element ids."),
    wiki_pages: int = typer.Option(
        5, "--wiki-pages", metavar="N", min=1, rich_help_panel=METHODS,
        help="FEVEROUS open book: pages retrieved per claim."),
    wiki_elements: int = typer.Option(
        20, "--wiki-elements", metavar="N", min=1, rich_help_panel=METHODS,
        help="FEVEROUS open book: elements shown per claim."),
    json_output: bool = ro.JSON_OUTPUT,
) -> None:
    """Ask a model every example of a benchmark, extract and score its answers.

    Writes config.json, samples.jsonl, the predictions in the official format, metrics.json
    and scores.jsonl (as hopscore score) into the run directory. Re-running the same command
    resumes: finished samples are kept, failed requests are retried, and cached responses
    make an identical re-run free. Exit status 1 when some requests still failed.

    hybrid-deep-research runs a tool-calling agent (run_sql, knowledge tools, web_search,
    web_fetch, final_answer) on every task: --tasks FILE --db-root DIR, a search backend
    (--corpus FILE.jsonl for local BM25, or --search-backend http), and a judge for SQL2S and
    Parallel answers (--judge-model); hopscore run hybrid-deep-research --help lists the
    agent's options.

    Examples:

      hopscore run hotpotqa --gold hotpot_dev_distractor_v1.json --model openai/gpt-4o-mini \
          --limit 200

      hopscore run strategyqa --gold dev.json --model openai/Qwen2.5-7B-Instruct \
          --base-url http://localhost:8000/v1 --shots 2

      hopscore run strategyqa --gold dev.json --model local/smollm2 --limit 20

      hopscore run strategyqa --gold dev.json --model openai/gpt-4o-mini --strategy mcr \
          --chains 5 --corpus wiki.jsonl --protocol mcr

      hopscore run hybrid-deep-research --tasks tasks.jsonl --db-root livesqlbench/ \
          --corpus corpus.jsonl --model openai/gpt-4o-mini --judge-model gpt-4o-mini

      hopscore run hybrid-deep-research --model local/smollm2 --limit 2
    """
    from hopscore.cli.hdr import is_hdr

    given = {name for name, value in locals().items() if name in NOT_HDR and value != NOT_HDR[name]}
    if is_hdr(benchmark):
        if given:
            raise HopscoreError("not options of hybrid-deep-research: "
                                + ", ".join(f"--{n.replace('_', '-')}" for n in sorted(given)))
        # --concurrency not given (or called from Python, ctx None): follow the server's slots
        source = None if ctx is None else ctx.get_parameter_source("concurrency")
        _run_hdr({**locals(), "follow_slots": source is None or source.name == "DEFAULT"})
        return
    hdr_given = [name for name, value in locals().items()
                 if name in HDR_DEFAULTS and value != HDR_DEFAULTS[name]]
    if hdr_given:
        raise HopscoreError("options of hybrid-deep-research only: "
                            + ", ".join(f"--{n.replace('_', '-')}" for n in sorted(hdr_given)))
    if gold is None:
        raise HopscoreError("missing option --gold (the benchmark's gold file)")
    from hopscore.hub import official_gold
    from hopscore.run.run_job import run
    from hopscore.run.settings import RunSettings, default_output_dir, run_writes

    rerun = o.rerun_policy(restart, resume_any)
    out = output_dir or default_output_dir(benchmark.lower(), model, protocol)
    bench = benchmarks.get(benchmark)
    bench.require_prompting("hopscore run")
    claim_for_command(
        directory(out, "--output-dir", writes=run_writes(bench.predictions_file)),
        inputs=ro.run_inputs(gold=gold, aliases=aliases, tables_dir=tables_dir, corpus=corpus,
                          prompt_template=prompt_template, cluster_file=cluster_file,
                          wiki_db=wiki_db))
    gold_file = official_gold(benchmark.lower(), gold)
    for line in (gold_file.note(), *gold_file.warnings):
        if line:
            err_console.print(line, markup=False, highlight=False)
    local = model.startswith("local/")
    if local and max_tokens == DEFAULT_MAX_TOKENS:
        from hopscore.engine.local import RUN_MAX_TOKENS

        max_tokens = RUN_MAX_TOKENS
        err_console.print(f"{model}: --max-tokens {max_tokens} (a short answer; pass "
                          "--max-tokens to change it)", markup=False, highlight=False)
    if search_backend not in ("bm25", "http"):
        raise HopscoreError("--search-backend must be bm25 (with --corpus) or http")
    settings = RunSettings(
        benchmark=benchmark.lower(), gold=gold_file.path, model=model,
        output_dir=out,
        base_url=base_url, api_key_env=api_key_env, protocol=protocol, shots=shots,
        temperature=temperature, max_tokens=max_tokens or None, seed=seed, stop=tuple(stop),
        prompt_template=prompt_template, answer_marker=answer_marker, extraction=extraction,
        limit=limit, sample=sample, sample_seed=sample_seed, aliases=aliases,
        tables_dir=tables_dir, context_tokens=context_tokens, corpus=corpus,
        retrieve_k=retrieve_k, concurrency=concurrency,
        timeout=ro.request_timeout(timeout, model),
        max_retries=max_retries, backoff=backoff, max_retry_wait=max_retry_wait,
        deadline=deadline, max_outage=max_outage, adaptive=adaptive,
        cache_dir=ro.response_cache(cache_dir, no_cache),
        resamples=resamples, ci=ci.lower(), ci_level=ci_level, cluster=cluster,
        cluster_file=cluster_file, strategy=strategy, chains=chains,
        chain_temperature=chain_temperature, num_retries=num_retries, chain_calls=chain_calls,
        meta_facts=meta_facts, search_backend="http" if search_backend == "http" else None,
        search_url=search_url, fetch_url=fetch_url, search_api_key_env=search_api_key_env,
        search_timeout=search_timeout, wiki_db=wiki_db, wiki_pages=wiki_pages,
        wiki_elements=wiki_elements, shard=o.shard_option(shard, shards), repeats=repeats,
        on_truncation=o.truncation_policy(on_truncation),
        executor=o.executor_option(executor, ray_workers), ray_workers=ray_workers,
    )  # fmt: skip
    if repeats > 1 and not temperature:
        err_console.print(f"warning: {repeats} attempts at --temperature 0 differ only where the "
                          "server is not deterministic; sample with --temperature above 0",
                          style="yellow", markup=False, highlight=False)
    result = run(settings, console=err_console if progress else None, warn=err_console,
                 rerun=rerun)
    if not json_output:
        print_table(console, summary_table(result))
    if result.outcome.aborted is not None:
        from hopscore.engine.failures import stopped

        raise HopscoreError(
            f"stopped early: {stopped(result.outcome.aborted, model, result.prepared.endpoint)}"
            f". Samples finished so far are in {settings.output_dir}; fix the model name, "
            "endpoint or key and re-run the same command to continue."
        )
    assert result.report is not None
    failed = print_failures(result.summary, "sample")
    if json_output:  # metrics.json: the report with its run (and mcr, methods) block
        o.print_json(result.metrics or result.report.to_json())
        print_warnings(result.report, err_console)
    elif failed and not result.summary.get("answered") and not result.summary.get("no_answer") \
            and not result.summary.get("abstained"):
        err_console.print(f"incomplete: no sample has an answer ({failed} failed), so there is "
                          "no score to show", style="red", markup=False, highlight=False)
    else:
        print_report(result.report, console, err_console)
        if result.metrics and "mcr" in result.metrics:
            console.print(mcr_line(result.metrics["mcr"]), markup=False, highlight=False)
        if result.metrics and "methods" in result.metrics:
            print_table(console, methods_table(result.metrics["methods"],
                                               f"{benchmark} with {model}"))
    err_console.print(f"wrote {settings.output_dir}", markup=False, highlight=False)
    if result.summary.get("errors") or result.summary.get("truncated_unscored"):
        raise typer.Exit(1)


def print_failures(summary: dict[str, Any], unit: str) -> int:
    """Each failure class of a finished run, its first message and what to do (on stderr);
    how many failed."""
    from hopscore.engine.failures import incomplete_lines

    failures = summary.get("failures") or {}
    for line in incomplete_lines(failures, summary.get("samples"), unit):
        err_console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    return sum(int(entry.get("count") or 0) for entry in failures.values())


#: Options of the QA runs that an HDR agent run does not take, with their defaults.
NOT_HDR: dict[str, object] = {
    "protocol": "default", "shots": None, "sample": None, "sample_seed": 11, "stop": [],
    "prompt_template": None, "answer_marker": "Answer:", "extraction": "flexible",
    "aliases": None, "tables_dir": None, "context_tokens": 3000, "retrieve_k": 5,
    "strategy": "cot", "chains": None, "chain_temperature": 0.7, "num_retries": None,
    "chain_calls": 5, "meta_facts": None, "wiki_db": None, "wiki_pages": 5,
    "wiki_elements": 20,
    "cluster": None, "cluster_file": None,
}
#: Options of HDR agent runs only, with their defaults (the search options also serve the
#: chain strategies' retrieval; RunSettings.check says when they do not apply).
HDR_DEFAULTS: dict[str, object] = {
    "overlay": None, "db_root": None, "db_template": "{db}/{db}_template.sqlite",
    "direct_fetch": False, "max_turns": 300,
    "task_timeout": 3600.0, "tool_choice": None, "tool_protocol": "auto",
    "tool_call_content": "auto", "max_text_turns": 5, "max_context_tokens": None,
    "sql_timeout": 120.0,
    "max_observation_chars": 100_000, "judge_api_key_env": "JUDGE_API_KEY",
    "judge_prompt_file": None, "no_grade": False, "compare": "reference",
}


def _run_hdr(args: dict[str, Any]) -> None:
    """``hopscore run hybrid-deep-research`` from the run command's arguments."""
    from hopscore.cli.hdr import run_hdr
    from hopscore.hdr.agent_job import default_output_dir
    from hopscore.hdr.settings import HdrSettings

    model = args["model"]
    local = model.startswith("local/")
    world_args = ("gold", "db_root", "corpus", "overlay", "search_url")
    builtin = all(args[name] is None for name in world_args) and \
        args["search_backend"] == "bm25"
    judge = {k: args[k] for k in ("judge_model", "judge_base_url", "judge_api_key_env")}
    max_turns = args["max_turns"]
    if builtin:
        from hopscore.hdr.world import materialize

        world = materialize(ro.response_cache(args["cache_dir"], args["no_cache"]))
        args = {**args, "gold": world.tasks, "db_root": world.db_root, "corpus": world.corpus}
        err_console.print(f"no --tasks/--db-root/--corpus: hopscore's built-in world "
                          f"({world.root}; 18 invented tasks over 3 databases, "
                          "docs/hdr-world.md)", markup=False, highlight=False)
        provider = model.partition("/")[0]
        if not (args["judge_model"] or os.environ.get("JUDGE_MODEL")) and not args["no_grade"] \
                and provider in ("openai", "local"):
            judge = {"judge_model": model if local else model.partition("/")[2],
                     "judge_base_url": args["base_url"], "judge_api_key_env": args["api_key_env"]}
            err_console.print(f"no --judge-model: {model} also judges the SQL2S and Parallel "
                              "answers", markup=False, highlight=False)
        if local and max_turns == HDR_DEFAULTS["max_turns"]:
            max_turns = LOCAL_WORLD_TURNS
            err_console.print(f"{model} on the built-in world: --max-turns {max_turns} (pass "
                              "--max-turns to change it)", markup=False, highlight=False)
        if local and args["max_tokens"] == DEFAULT_MAX_TOKENS:
            args = {**args, "max_tokens": LOCAL_WORLD_TOKENS}
            err_console.print(f"{model} on the built-in world: --max-tokens "
                              f"{LOCAL_WORLD_TOKENS} (pass --max-tokens to change it)",
                              markup=False, highlight=False)
    if args["gold"] is None:
        raise HopscoreError("missing option --tasks (the HDR task file or category folder); "
                            "give none of --tasks, --db-root, --corpus for the built-in world")
    if args["db_root"] is None:
        raise HopscoreError("missing option --db-root (the folder of the SQLite databases)")
    settings = HdrSettings(
        tasks=args["gold"], overlay=args["overlay"], db_root=args["db_root"],
        db_template=args["db_template"], model=model,
        output_dir=args["output_dir"] or default_output_dir(model),
        base_url=args["base_url"], api_key_env=args["api_key_env"],
        search_backend=args["search_backend"], corpus=args["corpus"],
        search_url=args["search_url"], fetch_url=args["fetch_url"],
        direct_fetch=args["direct_fetch"], search_api_key_env=args["search_api_key_env"],
        search_timeout=args["search_timeout"], max_turns=max_turns,
        task_timeout=args["task_timeout"], repeats=args["repeats"], limit=args["limit"],
        concurrency=args["concurrency"], follow_slots=args.get("follow_slots", False),
        temperature=args["temperature"],
        max_tokens=args["max_tokens"] or None, seed=args["seed"],
        tool_choice=args["tool_choice"], tool_protocol=args["tool_protocol"],
        tool_call_content=args["tool_call_content"], max_text_turns=args["max_text_turns"],
        max_context_tokens=args["max_context_tokens"], sql_timeout=args["sql_timeout"],
        max_observation_chars=args["max_observation_chars"],
        timeout=args["timeout"] if args["timeout"] is not None else (900.0 if local else 300.0),
        max_retries=args["max_retries"], backoff=args["backoff"],
        max_retry_wait=args["max_retry_wait"], deadline=args["deadline"],
        max_outage=args["max_outage"], adaptive=args["adaptive"],
        cache_dir=ro.response_cache(args["cache_dir"], args["no_cache"]),
        grade=not args["no_grade"], judge_model=judge["judge_model"],
        judge_base_url=judge["judge_base_url"], judge_api_key_env=judge["judge_api_key_env"],
        judge_prompt_file=args["judge_prompt_file"], judge_concurrency=args["concurrency"],
        compare=args["compare"], resamples=args["resamples"], ci=args["ci"].lower(),
        ci_level=args["ci_level"], shard=o.shard_option(args["shard"], args["shards"]),
        on_truncation=o.truncation_policy(args["on_truncation"]),
        executor=o.executor_option(args["executor"], args["ray_workers"]),
        ray_workers=args["ray_workers"],
    )  # fmt: skip
    local_judge = local and settings.judge_model == model
    run_hdr(settings, progress=args["progress"], json_output=args["json_output"],
            rerun=o.rerun_policy(args["restart"], args["resume_any"]),
            default_location=args["output_dir"] is None, share_local=local_judge)
