"""``hopscore agent BENCH --agent search``: the search agent on a QA benchmark
(:mod:`hopscore.run.search_agent`), run, resumed and scored by the run machinery."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from hopscore import benchmarks
from hopscore.cli import console, err_console
from hopscore.cli.request_options import JobOptions, RequestOptions
from hopscore.errors import HopscoreError
from hopscore.scores.display import print_report, print_table

if TYPE_CHECKING:
    from hopscore.run.run_job import RunResult

PANEL_SEARCH = "Search agent (QA benchmarks)"
#: --max-turns' default for the search agent (the tool agent's is 300)
SEARCH_MAX_TURNS = 8


@dataclass(frozen=True)
class SearchAgentOptions:
    """The search agent's options: which agent, the QA gold file, the protocol, the passages."""

    agent: Annotated[str | None, typer.Option(
        None, "--agent", metavar="tools|search", rich_help_panel=PANEL_SEARCH, show_default=False,
        help="search: search --corpus in a loop and answer (default for a QA benchmark); "
        "tools: the tool agent of an agent benchmark.")]
    gold: Annotated[Path | None, typer.Option(
        None, "--gold", metavar="FILE", rich_help_panel=PANEL_SEARCH, show_default=False,
        help="The QA benchmark's gold file (default: its bundled sample).")]
    search_protocol: Annotated[str, typer.Option(
        "tags", "--search-protocol", metavar="tags|native", rich_help_panel=PANEL_SEARCH,
        help="tags: <search>, <information>, <answer> in the text; native: a search tool.")]
    top_k: Annotated[int, typer.Option(
        3, "--top-k", metavar="N", min=1, rich_help_panel=PANEL_SEARCH,
        help="Passages per search.")]
    passage_chars: Annotated[int, typer.Option(
        600, "--passage-chars", metavar="N", min=1, rich_help_panel=PANEL_SEARCH,
        help="Characters of a passage shown.")]
    retriever: Annotated[str, typer.Option(
        "bm25", "--retriever", metavar="bm25|dense", rich_help_panel=PANEL_SEARCH,
        help="bm25 over --corpus, or dense: embeddings from an OpenAI-compatible /embeddings "
        "endpoint, exact cosine search.")]
    embed_model: Annotated[str | None, typer.Option(
        None, "--embed-model", metavar="NAME", rich_help_panel=PANEL_SEARCH,
        show_default=False, help="dense: the embedding model's name at the endpoint.")]
    embed_base_url: Annotated[str | None, typer.Option(
        None, "--embed-base-url", metavar="URL", rich_help_panel=PANEL_SEARCH,
        show_default=False, help="dense: the endpoint serving /embeddings (default: the "
        "model's).")]
    query_prefix: Annotated[str, typer.Option(
        "", "--query-prefix", metavar="TEXT", rich_help_panel=PANEL_SEARCH,
        help="dense: written before each query (e5: 'query: ').")]
    passage_prefix: Annotated[str, typer.Option(
        "", "--passage-prefix", metavar="TEXT", rich_help_panel=PANEL_SEARCH,
        help="dense: written before each document (e5: 'passage: ').")]


def wants_search(options: SearchAgentOptions, benchmark: str | None) -> bool:
    """Whether the command runs the search agent: --agent search, or a QA benchmark named."""
    if options.agent not in (None, "tools", "search"):
        raise HopscoreError("--agent must be tools or search")
    if options.agent is not None:
        if options.agent == "search" and benchmark is None:
            raise HopscoreError("--agent search: name the QA benchmark (hopscore agent NAME)")
        return options.agent == "search"
    if benchmark is None:
        return False
    from hopscore.cli.alias import agent_benchmark

    return agent_benchmark(benchmark) is None and benchmarks.get(benchmark).runner != "agent"


def _sample(bench: Any) -> tuple[Path | None, Path | None]:
    from hopscore.benchmarks.sample_files import sample_of

    sample = sample_of(bench.name)
    if sample is None:
        return None, None
    corpus = None if sample.corpus is None else Path(str(sample.folder / sample.corpus))
    return Path(str(sample.folder / sample.gold)), corpus


def run_search_agent(options: SearchAgentOptions, requests: RequestOptions, job: JobOptions, *,
                     benchmark: str, model: str, output_dir: Path | None, temperature: float,
                     max_tokens: int, seed: int | None, limit: int | None, repeats: int,
                     corpus: Path | None, max_turns: int | None, resamples: int, ci: str,
                     ci_level: float, progress: bool, json_output: bool) -> None:
    """Run the search agent on every question of ``benchmark``, score, print, set the exit
    status (1 when some questions failed)."""
    from hopscore.cli import options as o
    from hopscore.cli import request_options as ro
    from hopscore.files.outputs import claim_for_command
    from hopscore.files.outputs import output_dir as directory
    from hopscore.hub import official_gold
    from hopscore.run.run_job import run
    from hopscore.run.search_agent import SearchAgentSettings
    from hopscore.run.settings import RunSettings, default_output_dir, run_writes

    bench = benchmarks.get(benchmark)
    if bench.runner == "agent":
        raise HopscoreError(f"{bench.title} is an agent benchmark: --agent search runs on a QA "
                            "benchmark")
    bench.require_prompting("hopscore agent --agent search")
    gold, bundled_corpus = options.gold, None
    if gold is None or corpus is None:
        sample_gold, bundled_corpus = _sample(bench)
        if gold is None:
            if sample_gold is None:
                raise HopscoreError(f"missing option --gold ({bench.title} ships no sample)")
            gold = sample_gold
            err_console.print(f"no --gold: {bench.title}'s bundled sample", markup=False,
                              highlight=False)
    if corpus is None:
        if bundled_corpus is None or options.gold is not None:
            raise HopscoreError("missing option --corpus (the JSONL corpus the agent searches)")
        corpus = bundled_corpus
        err_console.print(f"no --corpus: the sample's toy corpus {corpus}", markup=False,
                          highlight=False)
    out = output_dir or default_output_dir(f"{bench.name}-search", model, "default")
    claim_for_command(directory(out, "--output-dir", writes=run_writes(bench.predictions_file)),
                      inputs=ro.run_inputs(gold=gold, corpus=corpus))
    gold_file = official_gold(bench.name, gold)
    if model.startswith("local/") and max_tokens == ro.DEFAULT_MAX_TOKENS:
        from hopscore.engine.local import RUN_MAX_TOKENS

        max_tokens = RUN_MAX_TOKENS
        err_console.print(f"{model}: --max-tokens {max_tokens} per turn (pass --max-tokens to "
                          "change it)", markup=False, highlight=False)
    agent = SearchAgentSettings(protocol=options.search_protocol,
                                max_turns=max_turns or SEARCH_MAX_TURNS, top_k=options.top_k,
                                passage_chars=options.passage_chars,
                                retriever=options.retriever, embed_model=options.embed_model,
                                embed_base_url=options.embed_base_url,
                                query_prefix=options.query_prefix,
                                passage_prefix=options.passage_prefix)
    settings = RunSettings(
        benchmark=bench.name, gold=gold_file.path, model=model, output_dir=out,
        base_url=requests.base_url, api_key_env=requests.api_key_env, temperature=temperature,
        max_tokens=max_tokens or None, seed=seed, limit=limit, corpus=corpus,
        concurrency=requests.concurrency, timeout=ro.request_timeout(requests.timeout, model),
        max_retries=requests.max_retries, backoff=requests.backoff,
        max_retry_wait=requests.max_retry_wait, deadline=requests.deadline,
        max_outage=requests.max_outage, adaptive=requests.adaptive, cache_dir=requests.cache(),
        resamples=resamples, ci=ci.lower(), ci_level=ci_level, shard=job.shard_spec(),
        repeats=repeats, on_truncation=job.truncation(), executor=job.executor_name(),
        ray_workers=job.ray_workers, agent=agent, reasoning=requests.reasoning(),
    )  # fmt: skip
    result = run(settings, console=err_console if progress else None, warn=err_console,
                 rerun=job.rerun())
    if result.outcome.aborted is not None:
        from hopscore.engine.failures import stopped

        raise HopscoreError(
            f"stopped early: {stopped(result.outcome.aborted, model, result.prepared.endpoint)}"
            f". Questions finished so far are in {out}; fix the model name, endpoint or key "
            "and re-run the same command to continue.")
    assert result.report is not None
    if json_output:
        o.print_json(result.metrics or result.report.to_json())
    else:
        print_report(result.report, console, err_console)
        print_table(console, search_table(result))
    err_console.print(f"wrote {out}", markup=False, highlight=False)
    if result.summary.get("errors") or result.summary.get("truncated_unscored"):
        raise typer.Exit(1)


def search_table(result: RunResult) -> Table:
    """The agent's searches: per question, and the recall of the gold paragraphs."""
    block = (result.metrics or {}).get("search") or {}
    table = Table(title=f"search agent: {result.prepared.benchmark.name} with "
                  f"{result.prepared.spec}", title_justify="left", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")

    def number(value: Any, places: int = 2) -> str:
        return "-" if value is None else f"{value:.{places}f}"

    table.add_row("questions answered / finished",
                  f"{(block.get('statuses') or {}).get('answered', 0)} / "
                  f"{block.get('questions', 0)}")
    table.add_row("search calls per question", number(block.get("search_calls_per_question")))
    table.add_row("model turns per question", number(block.get("turns_per_question")))
    table.add_row("documents retrieved per question",
                  number(block.get("documents_per_question")))
    if block.get("gold_questions"):
        table.add_row("gold paragraphs retrieved (recall)",
                      number(block.get("retrieval_recall"), 3))
        table.add_row("questions with every gold paragraph",
                      number(block.get("all_gold_retrieved"), 3))
    else:
        table.add_row("gold paragraphs retrieved (recall)", "no gold paragraphs")
    return table
