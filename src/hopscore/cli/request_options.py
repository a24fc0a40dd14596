"""Options that ``hopscore run`` and ``hopscore suite mcr`` share: the model, its requests, the
response cache. One definition each, so the two commands cannot drift apart in name, default
or help; the panels they are shown under are named here too."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from hopscore.cli import options as o
from hopscore.defaults import DEFAULT_MAX_OUTAGE

PANEL_MODEL = "Model"
PANEL_PROMPT = "Examples and prompt"
PANEL_RETRIEVAL = "Retrieval"
PANEL_OUTPUT = "Output"
PANEL_ADVANCED = "Requests (advanced)"
METHODS = "MCR's methods and open-book runs"
MODEL_HELP = ("PROVIDER/NAME: openai/<model> (any OpenAI-compatible endpoint), "
              "anthropic/<model> (Messages API) or local/smollm2.")
#: --max-tokens' default (the QA runs'; an agent run sends it too)
DEFAULT_MAX_TOKENS = 1024

MODEL = typer.Option(..., "--model", "-m", metavar="PROVIDER/NAME", show_default=False,
                     help=MODEL_HELP)
API_KEY_ENV = typer.Option(
    "OPENAI_API_KEY", "--api-key-env", rich_help_panel=PANEL_MODEL, metavar="VAR",
    help="Environment variable holding the API key.")
MAX_TOKENS = typer.Option(
    DEFAULT_MAX_TOKENS, "--max-tokens", rich_help_panel=PANEL_MODEL, metavar="N", min=0,
    help="Completion budget per request; 0 sends none (run: 128 for local/ models unless "
    "given).")
SEED = typer.Option(None, "--seed", rich_help_panel=PANEL_MODEL,
                    help="Sampling seed sent with requests.")
SAMPLE_SEED = typer.Option(11, "--sample-seed", rich_help_panel=PANEL_PROMPT,
                           help="Seed of --sample (MCR: 11).")
CORPUS = typer.Option(None, "--corpus", rich_help_panel=PANEL_RETRIEVAL, metavar="FILE",
                      help="JSONL documents {id, title, text} for BM25 retrieval.")
RETRIEVE_K = typer.Option(5, "--retrieve-k", rich_help_panel=PANEL_RETRIEVAL, metavar="N", min=1,
                          help="Documents per question.")
CONCURRENCY = typer.Option(
    8, "--concurrency", "-c", rich_help_panel=PANEL_ADVANCED, metavar="N", min=1,
    help="Most requests in flight; fewer while the endpoint cannot sustain more.")
ADAPTIVE = typer.Option(
    True, "--adaptive-concurrency/--fixed-concurrency", rich_help_panel=PANEL_ADVANCED,
    help="Fit requests in flight to what the endpoint sustains, or always --concurrency.")
TIMEOUT = typer.Option(
    None, "--timeout", rich_help_panel=PANEL_ADVANCED, metavar="SECONDS", min=0.001,
    show_default=False, help="Seconds per attempt (default 120; 900 for local/smollm2).")
MAX_RETRIES = typer.Option(5, "--max-retries", rich_help_panel=PANEL_ADVANCED, metavar="N",
                           min=0, help="Retries per request.")
BACKOFF = typer.Option(1.0, "--backoff", rich_help_panel=PANEL_ADVANCED, metavar="SECONDS",
                       min=0.0, help=o.BACKOFF_HELP)
MAX_RETRY_WAIT = typer.Option(
    60.0, "--max-retry-wait", rich_help_panel=PANEL_ADVANCED, metavar="SECONDS", min=0.0,
    help="Longest wait before a retry, whatever the server's Retry-After asks.")
DEADLINE = typer.Option(
    None, "--deadline", rich_help_panel=PANEL_ADVANCED, metavar="SECONDS", min=0.001,
    show_default=False,
    help="Seconds one request may take over all its attempts and waits (default: --timeout x "
    "(retries + 1)).")


def max_outage_option(name: str = "--max-outage", panel: str | None = PANEL_ADVANCED) -> Any:
    """--max-outage, of run, suite mcr and judge (``score --judge``: --judge-max-outage)."""
    return typer.Option(
        DEFAULT_MAX_OUTAGE, name, rich_help_panel=panel, metavar="SECONDS", min=0.0,
        help="How long a run waits, its requests paused, for an endpoint that stopped "
        "answering; then it ends (exit 2) and a rerun resumes it.")


MAX_OUTAGE = max_outage_option()

EFFORT_HELP = ("Reasoning effort: none|minimal|low|medium|high, sent as the provider's "
               "parameter (docs/running-models.md, Reasoning models).")
BUDGET_HELP = ("Thinking tokens: Anthropic's budget_tokens (--max-tokens must exceed it), or "
               "chat-template's thinking_budget.")
STYLE_HELP = ("How the settings are sent: openai (reasoning_effort), anthropic (thinking) or "
              "chat-template (vLLM, llama.cpp); default by provider.")
REASONING_EFFORT = typer.Option(None, "--reasoning-effort", rich_help_panel=PANEL_MODEL,
                                metavar="LEVEL", show_default=False, help=EFFORT_HELP)
THINKING_BUDGET = typer.Option(None, "--thinking-budget", rich_help_panel=PANEL_MODEL,
                               metavar="N", min=0, show_default=False, help=BUDGET_HELP)
REASONING_STYLE = typer.Option(None, "--reasoning-style", rich_help_panel=PANEL_MODEL,
                               metavar="STYLE", show_default=False, help=STYLE_HELP)

CACHE_DIR = typer.Option(
    None, "--cache-dir", rich_help_panel=PANEL_OUTPUT, metavar="DIR",
    envvar="HOPSCORE_CACHE_DIR", show_default=False,
    help="Response cache folder (default ~/.cache/hopscore).")
NO_CACHE = typer.Option(False, "--no-cache", rich_help_panel=PANEL_OUTPUT,
                        help="Neither read nor write the cache.")
PROGRESS = typer.Option(True, "--progress/--no-progress", rich_help_panel=PANEL_OUTPUT,
                        help="Progress bar.")
JSON_OUTPUT = typer.Option(False, "--json", rich_help_panel=PANEL_OUTPUT, help=o.JSON_HELP)


def request_timeout(timeout: float | None, model: str) -> float:
    """--timeout, or its default: 120 s, and 900 s for the offline model on the CPU."""
    if timeout is not None:
        return timeout
    return 900.0 if model.startswith("local/") else 120.0


def response_cache(cache_dir: Path | None, no_cache: bool) -> Path | None:
    """The response cache folder a run uses (None: --no-cache)."""
    if no_cache:
        return None
    if cache_dir is not None:
        return cache_dir
    from hopscore.engine import default_cache_dir  # the client stack loads when a run starts

    return default_cache_dir()


def run_inputs(**paths: Path | None) -> list[Any]:
    """The run's input files and folders, by option, for the output-is-an-input check."""
    from hopscore.files.output_specs import Input

    return [Input(path, "--" + name.replace("_", "-")) for name, path in paths.items()
            if path is not None]


BASE_URL = typer.Option(
    None, "--base-url", rich_help_panel=PANEL_MODEL, metavar="URL", show_default=False,
    help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (else OPENAI_BASE_URL).")


PANEL_BUDGETS = "Budgets"
MAX_COST = typer.Option(
    None, "--max-cost", rich_help_panel=PANEL_BUDGETS, metavar="USD", min=0.0,
    show_default=False,
    help="Stop sending once this many dollars were spent at list prices; rerun with more to "
    "go on (exit 4).")
MAX_TOKENS_TOTAL = typer.Option(
    None, "--max-tokens-total", rich_help_panel=PANEL_BUDGETS, metavar="N", min=1,
    show_default=False,
    help="Stop sending once replies used this many tokens, prompt and completion (exit 4).")
MAX_TIME = typer.Option(
    None, "--max-time", rich_help_panel=PANEL_BUDGETS, metavar="SECONDS", min=0.001,
    show_default=False,
    help="Stop sending this long after the first request (exit 4).")

ON_BUDGET = typer.Option(
    "finish", "--on-budget", rich_help_panel=PANEL_BUDGETS, metavar="finish|abandon",
    help="When a budget is reached: let the requests in flight finish (and keep their rows), "
    "or abandon them at once (they stay unfinished; what they cost is not counted).")

PRICES = typer.Option(
    None, "--prices", rich_help_panel=PANEL_BUDGETS, metavar="FILE", show_default=False,
    help="JSON price file over the shipped list prices (docs/running-models.md).")


@dataclass(frozen=True)
class RequestOptions:
    """How a command's model requests are sent: the endpoint, its key, how many at once, how
    long each may take and how often it is retried, and the response cache."""

    base_url: Annotated[str | None, BASE_URL]
    api_key_env: Annotated[str, API_KEY_ENV]
    reasoning_effort: Annotated[str | None, REASONING_EFFORT]
    thinking_budget: Annotated[int | None, THINKING_BUDGET]
    reasoning_style: Annotated[str | None, REASONING_STYLE]
    concurrency: Annotated[int, CONCURRENCY]
    adaptive: Annotated[bool, ADAPTIVE]
    timeout: Annotated[float | None, TIMEOUT]
    max_retries: Annotated[int, MAX_RETRIES]
    backoff: Annotated[float, BACKOFF]
    max_retry_wait: Annotated[float, MAX_RETRY_WAIT]
    deadline: Annotated[float | None, DEADLINE]
    max_outage: Annotated[float, MAX_OUTAGE]
    cache_dir: Annotated[Path | None, CACHE_DIR]
    no_cache: Annotated[bool, NO_CACHE]
    max_cost: Annotated[float | None, MAX_COST]
    max_tokens_total: Annotated[int | None, MAX_TOKENS_TOTAL]
    max_time: Annotated[float | None, MAX_TIME]
    on_budget: Annotated[str, ON_BUDGET]
    prices: Annotated[Path | None, PRICES]

    def cache(self) -> Path | None:
        """The response cache folder (None: --no-cache)."""
        return response_cache(self.cache_dir, self.no_cache)

    def reasoning(self) -> Any:
        """The reasoning settings (:class:`~hopscore.engine.reasoning.ReasoningSettings`), or
        None when no reasoning option is given."""
        from hopscore.engine.reasoning import reasoning_settings

        return reasoning_settings(self.reasoning_effort, self.thinking_budget,
                                  self.reasoning_style)


#: ``score --judge``'s names of the judge's reasoning settings
JUDGE_REASONING_EFFORT = typer.Option(
    None, "--judge-reasoning-effort", metavar="LEVEL", show_default=False,
    help="The judge's " + EFFORT_HELP[0].lower() + EFFORT_HELP[1:])
JUDGE_THINKING_BUDGET = typer.Option(
    None, "--judge-thinking-budget", metavar="N", min=0, show_default=False,
    help="The judge's thinking tokens (as --thinking-budget).")
JUDGE_REASONING_STYLE = typer.Option(
    None, "--judge-reasoning-style", metavar="STYLE", show_default=False,
    help="How the judge's settings are sent (as --reasoning-style).")


@dataclass(frozen=True)
class ReasoningOptions:
    """The reasoning settings of a command without the shared request options (judge)."""

    reasoning_effort: Annotated[str | None, typer.Option(
        None, "--reasoning-effort", metavar="LEVEL", show_default=False, help=EFFORT_HELP)]
    thinking_budget: Annotated[int | None, typer.Option(
        None, "--thinking-budget", metavar="N", min=0, show_default=False, help=BUDGET_HELP)]
    reasoning_style: Annotated[str | None, typer.Option(
        None, "--reasoning-style", metavar="STYLE", show_default=False, help=STYLE_HELP)]

    def reasoning(self) -> Any:
        from hopscore.engine.reasoning import reasoning_settings

        return reasoning_settings(self.reasoning_effort, self.thinking_budget,
                                  self.reasoning_style)


@dataclass(frozen=True)
class SearchOptions:
    """Where web searches go: local BM25 over --corpus, or a search service over HTTP."""

    search_backend: Annotated[str, typer.Option(
        "bm25", "--search-backend", metavar="bm25|http", rich_help_panel=PANEL_RETRIEVAL,
        help="bm25 (local --corpus of {url, title, text}) or http.")]
    search_url: Annotated[str | None, typer.Option(
        None, "--search-url", metavar="URL", rich_help_panel=PANEL_RETRIEVAL,
        help="http backend: POST {query, count} here.")]
    fetch_url: Annotated[str | None, typer.Option(
        None, "--fetch-url", metavar="URL", rich_help_panel=PANEL_RETRIEVAL,
        help="http backend: POST {url} here for page text.")]
    search_api_key_env: Annotated[str | None, typer.Option(
        None, "--search-api-key-env", metavar="VAR", rich_help_panel=PANEL_RETRIEVAL,
        help="Variable holding the search service's key (sent as a bearer header).")]
    search_timeout: Annotated[float, typer.Option(
        30.0, "--search-timeout", metavar="SECONDS", min=0.001, rich_help_panel=PANEL_RETRIEVAL,
        help="Seconds per search or fetch call, in all (body included).")]


@dataclass(frozen=True)
class JobOptions:
    """How a resumable job reruns and scales out: its rerun policy, its shard, its executor."""

    shard: Annotated[str | None, o.SHARD]
    shards: Annotated[int | None, o.SHARDS]
    on_truncation: Annotated[str, o.ON_TRUNCATION]
    restart: Annotated[bool, o.RESTART]
    resume_any: Annotated[bool, o.RESUME_ANY]
    executor: Annotated[str, o.EXECUTOR]
    ray_workers: Annotated[int | None, o.RAY_WORKERS]

    def rerun(self) -> str:
        """The rerun policy (--restart, --resume-any)."""
        return o.rerun_policy(self.restart, self.resume_any)

    def shard_spec(self) -> Any:
        return o.shard_option(self.shard, self.shards)

    def truncation(self) -> str:
        return o.truncation_policy(self.on_truncation)

    def executor_name(self) -> str:
        return o.executor_option(self.executor, self.ray_workers)


@dataclass(frozen=True)
class ChainOptions:
    """MCR's methods: the strategy, its chains and its meta-reasoner."""

    strategy: Annotated[str, typer.Option(
        "cot", "--strategy", metavar="cot|self-ask|sc|mcr", rich_help_panel=METHODS,
        help="cot (one answer), or MCR's methods: self-ask, sc (k chains, majority), mcr (k "
        "chains, meta-reasoner).")]
    chains: Annotated[int | None, typer.Option(
        None, "--chains", metavar="K", min=1, rich_help_panel=METHODS, show_default=False,
        help="Chains per question for sc and mcr (default 5).")]
    chain_temperature: Annotated[float, typer.Option(
        0.7, "--chain-temperature", min=0.0, rich_help_panel=METHODS,
        help="Temperature of chains 1..k-1 (chain 0: --temperature).")]
    num_retries: Annotated[int | None, typer.Option(
        None, "--num-retries", metavar="N", min=0, rich_help_panel=METHODS, show_default=False,
        help="Re-run abstained questions up to N times (default: 2 for mcr, as MCR; else 0).")]
    chain_calls: Annotated[int, typer.Option(
        5, "--chain-calls", metavar="N", min=1, rich_help_panel=METHODS,
        help="Model calls per chain (MCR: 5).")]
    meta_facts: Annotated[str | None, typer.Option(
        None, "--meta-facts", metavar="qa|evidence|both", rich_help_panel=METHODS,
        show_default=False,
        help="What the meta-reasoner reads: qa, evidence or both (default: both when the chains "
        "retrieve, else qa).")]


@dataclass(frozen=True)
class IntervalOptions:
    """The intervals around a run's scores, and the clusters they are drawn over."""

    resamples: Annotated[int, o.RESAMPLES]
    ci: Annotated[str, o.CI]
    ci_level: Annotated[float, o.CI_LEVEL]
    cluster: Annotated[str | None, o.CLUSTER]
    cluster_file: Annotated[Path | None, o.CLUSTER_FILE]


@dataclass(frozen=True)
class BudgetOptions:
    """The budgets of a command without the whole request options (``hopscore judge``)."""

    max_cost: Annotated[float | None, MAX_COST]
    max_tokens_total: Annotated[int | None, MAX_TOKENS_TOTAL]
    max_time: Annotated[float | None, MAX_TIME]
    on_budget: Annotated[str, ON_BUDGET]
    prices: Annotated[Path | None, PRICES]
