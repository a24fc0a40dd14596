"""``hopscore run``: run a model on a benchmark and score it; ``hopscore suite mcr``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from hopscore import benchmarks
from hopscore.cli import app, console, err_console
from hopscore.cli import options as o
from hopscore.cli import request_options as ro
from hopscore.cli.batch_options import SendOptions
from hopscore.cli.gathered import gathered
from hopscore.cli.methods_tables import mcr_line, methods_table
from hopscore.cli.request_options import (
    DEFAULT_MAX_TOKENS,
    METHODS,
    PANEL_MODEL,
    PANEL_OUTPUT,
    PANEL_PROMPT,
    ChainOptions,
    IntervalOptions,
    JobOptions,
    RequestOptions,
    SearchOptions,
)
from hopscore.engine.budget import BUDGET
from hopscore.engine.ledger import table_rows
from hopscore.engine.prices import use_file as use_prices
from hopscore.errors import BudgetReached, HopscoreError
from hopscore.files.outputs import claim_for_command
from hopscore.files.outputs import output_dir as directory
from hopscore.scores.display import print_report, print_table, print_warnings

if TYPE_CHECKING:
    from hopscore.run.run_job import RunResult


@dataclass(frozen=True)
class ReadBySome:
    """Inputs only some benchmarks read (``Benchmark.reads_run_option``): their help names those
    benchmarks, and one given to another benchmark is ignored with a warning
    (:func:`ignored_options`)."""

    aliases: Annotated[Path | None, typer.Option(
        None, "--aliases", rich_help_panel=PANEL_PROMPT, metavar="FILE",
        help="{benchmark titles reading: --aliases} id_aliases.json.")]
    tables_dir: Annotated[Path | None, typer.Option(
        None, "--tables-dir", rich_help_panel=PANEL_PROMPT, metavar="DIR",
        help="{benchmark titles reading: --tables-dir}: WikiTables-WithLinks folder (tables_tok/, "
        "request_tok/).")]
    context_tokens: Annotated[int, typer.Option(
        3000, "--context-tokens", rich_help_panel=PANEL_PROMPT, metavar="N", min=100,
        help="Budget for table + passages ({benchmark titles reading: --context-tokens}).")]
    documents: Annotated[Path | None, typer.Option(
        None, "--documents", rich_help_panel=PANEL_PROMPT, metavar="FILE",
        help="{benchmark titles reading: --documents}: the pages the questions link to, "
        "shown in the prompt (oracle setting; JSON Lines {url, title, text}).")]


@dataclass(frozen=True)
class WikiOptions:
    """The wiki database of an open-book run (``Benchmark.reads_wiki_db``), as
    :class:`ReadBySome`."""

    wiki_db: Annotated[Path | None, typer.Option(
        None, "--wiki-db", metavar="FILE", rich_help_panel=METHODS,
        help="{benchmark titles reading: --wiki-db}: feverous_wikiv1.db, for open-book runs "
        "that cite element ids.")]
    wiki_pages: Annotated[int, typer.Option(
        5, "--wiki-pages", metavar="N", min=1, rich_help_panel=METHODS,
        help="{benchmark titles reading: --wiki-pages} open book: pages retrieved per claim.")]
    wiki_elements: Annotated[int, typer.Option(
        20, "--wiki-elements", metavar="N", min=1, rich_help_panel=METHODS,
        help="{benchmark titles reading: --wiki-elements} open book: elements shown per claim.")]


#: given to a benchmark that does not read it, this option is refused (RunSettings.check), so
#: it gets no warning that it is ignored
REFUSED = ("--wiki-db",)


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
    if s.get("unclosed_thinking"):
        table.add_row("thinking never closed (not scored)", str(s["unclosed_thinking"]))
    table.add_row("samples this run / already done",
                  f"{result.outcome.processed} / {result.outcome.already_done}")
    table.add_row("requests sent / retries / cache hits",
                  f"{stats.requests_sent} / {stats.retries} / {stats.cache_hits}")
    table.add_row("tokens this run (prompt + completion)",
                  f"{stats.prompt_tokens} + {stats.completion_tokens}")
    for label, value in table_rows(s.get("usage") or {}):  # the rows' ledger, by role
        table.add_row(label, value)
    settled = stats.settled()
    if settled is not None:
        table.add_row("requests in flight at the end", settled)
    table.add_row("wall time", f"{result.outcome.wall_s:.1f} s")
    return table


@app.command(name="run", rich_help_panel="Run models and agents")
@gathered(requests=RequestOptions, search=SearchOptions, job=JobOptions, chain=ChainOptions,
          intervals=IntervalOptions, some=ReadBySome, wiki=WikiOptions, sending=SendOptions)
def run_command(
    ctx: typer.Context,
    benchmark: str = typer.Argument(
        ..., show_default=False,
        help=f"One of: {', '.join(benchmarks.names())}."),
    gold: Path | None = typer.Option(
        None, "--gold", "-g", metavar="FILE", show_default=False,
        help="Required: the benchmark's gold file, or a Hugging Face copy "
        "(docs/getting-the-data.md)."),
    model: str = ro.MODEL,
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", rich_help_panel=PANEL_OUTPUT, metavar="DIR",
        help="Run directory (default runs/<benchmark>__<model>); an existing run is resumed."),
    requests: RequestOptions = ...,  # type: ignore[assignment]
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
    some: ReadBySome = ...,  # type: ignore[assignment]
    corpus: Path | None = ro.CORPUS,
    retrieve_k: int = ro.RETRIEVE_K,
    search: SearchOptions = ...,  # type: ignore[assignment]
    intervals: IntervalOptions = ...,  # type: ignore[assignment]
    progress: bool = ro.PROGRESS,
    job: JobOptions = ...,  # type: ignore[assignment]
    repeats: int = typer.Option(
        1, "--repeats", "-k", metavar="K", min=1, rich_help_panel=PANEL_PROMPT,
        help="Attempts per example: the scores are Avg@k, the mean over the k "
        "attempts, with pass@1..pass@k of the right/wrong metric; intervals are over examples."),
    wiki: WikiOptions = ...,  # type: ignore[assignment]
    chain: ChainOptions = ...,  # type: ignore[assignment]
    sending: SendOptions = ...,  # type: ignore[assignment]
    json_output: bool = ro.JSON_OUTPUT,
) -> None:
    """Ask a model every example of a benchmark, extract and score its answers.

    Writes config.json, samples.jsonl, the predictions in the official format, metrics.json
    and scores.jsonl (as hopscore score) into the run directory. Re-running the same command
    resumes: finished samples are kept, failed requests are retried, and cached responses
    make an identical re-run free. Exit status 1 when some requests still failed.

    A benchmark an agent runs on ({benchmark titles: agent}) has its own command, hopscore
    agent.

    Examples:

      {benchmark examples: hopscore run}
    """
    aliases, tables_dir, context_tokens = some.aliases, some.tables_dir, some.context_tokens
    wiki_db, wiki_pages, wiki_elements = wiki.wiki_db, wiki.wiki_pages, wiki.wiki_elements
    resamples, ci, ci_level, cluster, cluster_file = (
        intervals.resamples, intervals.ci, intervals.ci_level, intervals.cluster,
        intervals.cluster_file)
    strategy, chains, chain_temperature, num_retries, chain_calls, meta_facts = (
        chain.strategy, chain.chains, chain.chain_temperature, chain.num_retries,
        chain.chain_calls, chain.meta_facts)
    if gold is None:
        raise HopscoreError("missing option --gold (the benchmark's gold file)")
    from hopscore.hub import official_gold
    from hopscore.run.run_job import run
    from hopscore.run.settings import RunSettings, default_output_dir, run_writes

    rerun = job.rerun()
    out = output_dir or default_output_dir(benchmark.lower(), model, protocol)
    bench = benchmarks.get(benchmark)
    if bench.runner == "agent":
        raise HopscoreError(f"an agent runs on {bench.title}: hopscore agent {bench.name}")
    bench.require_prompting("hopscore run")
    for warning in ignored_options(bench, ctx):
        err_console.print(warning, style="yellow", markup=False, highlight=False)
    if not sending.dry_run:
        claim_for_command(
            directory(out, "--output-dir", writes=run_writes(bench.predictions_file)),
            inputs=ro.run_inputs(gold=gold, aliases=aliases, tables_dir=tables_dir,
                                 corpus=corpus, documents=some.documents,
                                 prompt_template=prompt_template,
                                 cluster_file=cluster_file, wiki_db=wiki_db))
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
    if search.search_backend not in ("bm25", "http"):
        raise HopscoreError("--search-backend must be bm25 (with --corpus) or http")
    use_prices(requests.prices)
    settings = RunSettings(
        benchmark=benchmark.lower(), gold=gold_file.path, model=model,
        output_dir=out,
        base_url=requests.base_url, api_key_env=requests.api_key_env, protocol=protocol,
        shots=shots,
        temperature=temperature, max_tokens=max_tokens or None, seed=seed, stop=tuple(stop),
        prompt_template=prompt_template, answer_marker=answer_marker, extraction=extraction,
        limit=limit, sample=sample, sample_seed=sample_seed, aliases=aliases,
        tables_dir=tables_dir, context_tokens=context_tokens, corpus=corpus,
        documents=some.documents, reasoning=requests.reasoning(),
        retrieve_k=retrieve_k, concurrency=requests.concurrency,
        timeout=ro.request_timeout(requests.timeout, model),
        max_retries=requests.max_retries, backoff=requests.backoff,
        max_retry_wait=requests.max_retry_wait, deadline=requests.deadline,
        max_outage=requests.max_outage, adaptive=requests.adaptive, cache_dir=requests.cache(),
        max_cost=requests.max_cost, max_tokens_total=requests.max_tokens_total,
        max_time=requests.max_time, on_budget=requests.on_budget,
        resamples=resamples, ci=ci.lower(), ci_level=ci_level, cluster=cluster,
        cluster_file=cluster_file, strategy=strategy, chains=chains,
        chain_temperature=chain_temperature, num_retries=num_retries, chain_calls=chain_calls,
        meta_facts=meta_facts,
        search_backend="http" if search.search_backend == "http" else None,
        search_url=search.search_url, fetch_url=search.fetch_url,
        search_api_key_env=search.search_api_key_env, search_timeout=search.search_timeout,
        wiki_db=wiki_db, wiki_pages=wiki_pages,
        wiki_elements=wiki_elements, shard=job.shard_spec(), repeats=repeats,
        on_truncation=job.truncation(), executor=job.executor_name(),
        ray_workers=job.ray_workers,
    )  # fmt: skip
    if repeats > 1 and not temperature:
        err_console.print(f"warning: {repeats} attempts at --temperature 0 differ only where the "
                          "server is not deterministic; sample with --temperature above 0",
                          style="yellow", markup=False, highlight=False)
    if sending.dry_run:
        print_dry_run(settings, json_output)
        return
    result = run(settings, console=err_console if progress else None, warn=err_console,
                 rerun=rerun,
                 batch=sending.mode(requests.max_cost, requests.max_tokens_total))
    if not json_output:
        print_table(console, summary_table(result))
    if result.outcome.aborted is not None and result.outcome.aborted.kind == BUDGET:
        raise BudgetReached(
            f"{result.outcome.aborted.message}. Samples finished so far are in "
            f"{settings.output_dir}; rerun the same command with a larger budget to continue "
            "(finished samples are kept, none is asked again)")
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


def print_dry_run(settings: Any, json_output: bool) -> None:
    """``--dry-run``: the estimate of :func:`hopscore.run.dry_run.estimate`, as a table or
    JSON; nothing is sent or written."""
    from hopscore.engine.prices import load
    from hopscore.run.dry_run import estimate
    from hopscore.run.tasks import prepare

    found = estimate(prepare(settings), settings.max_tokens, load())
    if json_output:
        o.print_json(found)
        return
    cost = found["cost_usd"]
    table = Table(title=f"dry run: {settings.benchmark} with {found['model']} (nothing sent)",
                  title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("requests", str(found["requests"]))
    table.add_row("prompt tokens (estimate)", str(found["prompt_tokens"]))
    table.add_row("completion tokens (at most)", str(found["completion_tokens"]))
    table.add_row("cost in USD at list prices",
                  cost if isinstance(cost, str) else f"${cost:.4f}")
    print_table(console, table)
    for note in found["notes"]:
        err_console.print(f"note: {note}", markup=False, highlight=False)
    if found["price"] is not None:
        price = found["price"]
        err_console.print(f"note: price as of {price['as_of']} ({price['source']})",
                          markup=False, highlight=False)


def ignored_options(bench: Any, ctx: Any) -> list[str]:
    """A warning for each option of :class:`ReadBySome` and :class:`WikiOptions` given on the
    command line (or by an environment variable) to a benchmark that does not read it, naming
    those that do."""
    from hopscore.cli.gathered import options_of

    lines = []
    for name, _, info in [*options_of(ReadBySome), *options_of(WikiOptions)]:
        option = next(decl for decl in info.param_decls if decl.startswith("--"))
        source = None if ctx is None else ctx.get_parameter_source(name)
        if option in REFUSED or bench.reads_run_option(option) or source is None \
                or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        readers = ", ".join(other.name for other in _benchmarks() if other.reads_run_option(option))
        lines.append(f"warning: {bench.name} does not read {option}, so it is ignored (read "
                     f"by {readers or 'no benchmark'})")
    return lines


def _benchmarks() -> list[Any]:
    """Every benchmark that can be loaded (a broken plugin is left out of a warning)."""
    found = []
    for name in benchmarks.names():
        try:
            found.append(benchmarks.get(name))
        except HopscoreError:
            continue
    return found


def print_failures(summary: dict[str, Any], unit: str) -> int:
    """Each failure class of a finished run, its first message and what to do (on stderr);
    how many failed."""
    from hopscore.engine.failures import incomplete_lines

    failures = summary.get("failures") or {}
    for line in incomplete_lines(failures, summary.get("samples"), unit):
        err_console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    return sum(int(entry.get("count") or 0) for entry in failures.values())
