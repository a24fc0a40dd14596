"""Everything that defines a model run, as one typed record (written to config.json)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopscore import benchmarks
from hopscore.errors import HopscoreError
from hopscore.files.settings_json import option_inputs, settings_json
from hopscore.run.extract import DEFAULT_MARKER

if TYPE_CHECKING:
    from hopscore.engine.reasoning import ReasoningSettings
    from hopscore.files.output_specs import Input
    from hopscore.files.shard import Shard
    from hopscore.inference.clusters import ClusterSpec
    from hopscore.inference.spec import IntervalSpec
    from hopscore.run.evidence import SearchSettings
    from hopscore.run.search_agent import SearchAgentSettings
    from hopscore.run.strategy import StrategySettings
from hopscore.defaults import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

PROTOCOLS = ("default", "mcr")
EXTRACTIONS = ("flexible", "strict")
#: The seed of MCR's subsampling (``random.seed(11); random.sample(...)`` in its configs).
MCR_SAMPLE_SEED = 11


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringSettings:
    """What the scoring of a run's answers reads of its settings
    (:meth:`RunSettings.scoring`)."""

    output_dir: Path
    protocol: str
    #: the scored extraction under the default protocol (flexible or strict)
    extraction: str
    #: a cut answer (finish_reason "length"): "score" it, or "error" (not scored)
    on_truncation: str
    #: the completion budget, named in the warning of cut answers
    max_tokens: int | None
    #: the intervals of the scores, and their clustering
    intervals: IntervalSpec
    clusters: ClusterSpec | None


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptSettings:
    """What turning one example into its request reads of a run's settings
    (:meth:`RunSettings.prompting`, for :mod:`hopscore.run.tasks`)."""

    protocol: str
    answer_marker: str
    #: the scored extraction (part of every resume key)
    extraction: str
    #: --corpus: documents retrieved per question
    retrieve_k: int
    #: open book (--wiki-db): pages retrieved per question, and elements shown from them
    wiki_pages: int
    wiki_elements: int
    temperature: float | None
    max_tokens: int | None
    seed: int | None
    #: --reasoning-effort / --thinking-budget (None: no reasoning parameter sent)
    reasoning: ReasoningSettings | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    benchmark: str
    gold: Path
    model: str
    output_dir: Path
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    protocol: str = "default"
    #: built-in exemplars (None: 0 for the cot strategy, 4 for the chain strategies)
    shots: int | None = None
    temperature: float | None = 0.0
    #: None: send no max_tokens
    max_tokens: int | None = 1024
    seed: int | None = None
    stop: tuple[str, ...] = ()
    prompt_template: Path | None = None
    answer_marker: str = DEFAULT_MARKER
    #: which extraction gives the scored answer under the default protocol
    extraction: str = "flexible"
    limit: int | None = None
    sample: int | None = None
    sample_seed: int = MCR_SAMPLE_SEED
    aliases: Path | None = None
    tables_dir: Path | None = None
    context_tokens: int = 3000
    corpus: Path | None = None
    #: --documents: the pages the questions link to (an oracle setting; left out of
    #: config.json when not given, so runs without it keep their fingerprint)
    documents: Path | None = None
    retrieve_k: int = 5
    concurrency: int = 8
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 1.0
    #: the longest wait before a retry, whatever Retry-After asks
    max_retry_wait: float = 60.0
    #: seconds one request may take over all its attempts (None: timeout x (max_retries + 1))
    deadline: float | None = None
    #: seconds a run waits for an unreachable endpoint before it ends, resumable
    max_outage: float = 300.0
    #: budgets (engine/budget.py): how a run executes, not what it computes
    max_cost: float | None = None
    max_tokens_total: int | None = None
    max_time: float | None = None
    #: --on-budget: the requests in flight finish, or are abandoned, once a budget is reached
    on_budget: str = "finish"
    #: fit the requests in flight to the endpoint (up to concurrency), or keep concurrency
    adaptive: bool = True
    #: None: no response cache
    cache_dir: Path | None = None
    resamples: int = DEFAULT_RESAMPLES
    #: cot (one completion per question), or MCR's methods: self-ask, sc, mcr
    strategy: str = "cot"
    #: chains per question (None: 1 for self-ask, 5 for sc and mcr)
    chains: int | None = None
    #: temperature of the sampled chains (chain 0 uses ``temperature``)
    chain_temperature: float = 0.7
    #: re-runs of a question whose answer is an abstention (None: 2 for mcr, as MCR; else 0)
    num_retries: int | None = None
    #: model calls per chain (MCR: 5)
    chain_calls: int = 5
    #: what the meta-reasoner reads: qa, evidence or both (None: both with retrieval, else qa)
    meta_facts: str | None = None
    #: "http": contexts of the chain strategies from a search service (else --corpus or none)
    search_backend: str | None = None
    search_url: str | None = None
    fetch_url: str | None = None
    search_api_key_env: str | None = None
    search_timeout: float = 30.0
    #: the wiki database of a benchmark that reads one (Benchmark.reads_wiki_db), for open-book
    #: runs
    wiki_db: Path | None = None
    #: open book: pages retrieved per question, and elements shown from them
    wiki_pages: int = 5
    wiki_elements: int = 20
    #: intervals of the scores: --ci, --ci-level, --cluster, --cluster-file (see hopscore score)
    ci: str = "auto"
    ci_level: float = DEFAULT_LEVEL
    cluster: str | None = None
    cluster_file: Path | None = None
    #: --shard I/N: only the examples of this shard (None: all)
    shard: Shard | None = None
    #: an answer cut at max_tokens (finish_reason "length"): "score" it, or "error" (not scored)
    on_truncation: str = "score"
    #: --repeats k: attempts per example, scored as Avg@k and pass@1..k
    repeats: int = 1
    #: local (this process) or ray (--executor ray: a Ray cluster's workers)
    executor: str = "local"
    #: --ray-workers: worker actors (and the CPUs of an embedded local Ray); None: every CPU
    ray_workers: int | None = None
    #: ``hopscore agent BENCH --agent search``: the search agent's settings (None: no agent;
    #: left out of config.json then, so runs without it keep their fingerprint)
    agent: SearchAgentSettings | None = None
    #: --reasoning-effort, --thinking-budget, --reasoning-style (None: none given; left out of
    #: config.json then, so runs without them keep their fingerprint)
    reasoning: ReasoningSettings | None = None

    def check(self) -> None:
        from hopscore.engine.reasoning import check as check_reasoning
        from hopscore.engine.reasoning import provider_of

        check_reasoning(self.reasoning, provider_of(self.model), self.max_tokens)

        if self.agent is not None:
            self.agent.check()
            if self.corpus is None:
                raise HopscoreError("the search agent needs --corpus (a JSONL corpus to search)")
            if self.strategy != "cot" or self.protocol != "default" or self.search_backend:
                raise HopscoreError("the search agent is its own strategy: no --strategy, "
                                    "--protocol mcr or --search-backend http with it")

        if self.protocol not in PROTOCOLS:
            raise HopscoreError(f"--protocol must be one of {', '.join(PROTOCOLS)}")
        if self.strategy != "cot":  # the chain strategies' module loads only for them
            from hopscore.run.strategy import STRATEGIES

            if self.strategy not in STRATEGIES:
                raise HopscoreError(f"--strategy must be one of {', '.join(STRATEGIES)}")
        for name in ("chains", "chain_calls", "wiki_pages", "wiki_elements"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise HopscoreError(f"--{name.replace('_', '-')} must be at least 1")
        if self.num_retries is not None and self.num_retries < 0:
            raise HopscoreError("--num-retries must not be negative")
        if self.repeats < 1:
            raise HopscoreError("--repeats must be at least 1")
        if self.repeats > 1 and self.strategy != "cot" and self.agent is None:
            raise HopscoreError(f"--repeats is for --strategy cot: {self.strategy} samples its "
                                "own chains (--chains)")
        if self.chains is not None and self.strategy == "cot":
            raise HopscoreError("--chains is for --strategy sc or mcr (cot asks once)")
        if self.search_backend not in (None, "http"):
            raise HopscoreError("--search-backend for a QA run is http (BM25 is --corpus)")
        if self.search_backend == "http":
            if self.strategy == "cot":
                raise HopscoreError("--search-backend http feeds the chain strategies' "
                                    "retrieval (--strategy self-ask, sc or mcr)")
            if not self.search_url:
                raise HopscoreError("--search-backend http needs --search-url")
            if self.corpus is not None:
                raise HopscoreError("--corpus and --search-backend http exclude each other")
        elif self.search_url or self.fetch_url:
            raise HopscoreError("--search-url and --fetch-url need --search-backend http")
        if self.wiki_db is not None and not benchmarks.get(self.benchmark).reads_wiki_db:
            readers = [bench for bench in map(benchmarks.get, benchmarks.names())
                       if bench.reads_wiki_db]
            raise HopscoreError(
                f"--wiki-db is the {'/'.join(bench.title for bench in readers)} Wikipedia "
                f"database ({', '.join(bench.name for bench in readers)} only)")
        if self.extraction not in EXTRACTIONS:
            raise HopscoreError(f"--extraction must be one of {', '.join(EXTRACTIONS)}")
        if self.limit is not None and self.sample is not None:
            raise HopscoreError("--limit and --sample exclude each other")
        for name in ("limit", "sample"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise HopscoreError(f"--{name} must be at least 1")
        if not self.answer_marker.strip():
            raise HopscoreError("--answer-marker must not be blank")
        if self.retrieve_k < 1:
            raise HopscoreError("--retrieve-k must be at least 1")
        if self.context_tokens < 100:
            raise HopscoreError("--context-tokens must be at least 100")
        if self.on_truncation not in ("score", "error"):
            raise HopscoreError("--on-truncation must be score or error")
        self.interval_options()  # a bad --ci or --ci-level stops the run before any request

    def interval_options(self) -> tuple[IntervalSpec, ClusterSpec | None]:
        """How the run's scores get their intervals (the bootstrap seed is fixed: --seed is
        the model's sampling seed here)."""
        from hopscore.inference.clusters import ClusterSpec
        from hopscore.inference.spec import IntervalSpec

        clusters = None
        if self.cluster is not None or self.cluster_file is not None:
            clusters = ClusterSpec(field=self.cluster, file=self.cluster_file)
        spec = IntervalSpec(method=self.ci, level=self.ci_level, resamples=self.resamples,
                            seed=DEFAULT_SEED, cluster=None if clusters is None else clusters.name)
        return spec, clusters

    def scoring(self) -> ScoringSettings:
        """What the scoring of the run's answers reads (:func:`hopscore.run.finish.finish_run`)."""

        spec, clusters = self.interval_options()
        return ScoringSettings(output_dir=self.output_dir, protocol=self.protocol,
                               extraction=self.extraction, on_truncation=self.on_truncation,
                               max_tokens=self.max_tokens, intervals=spec, clusters=clusters)

    def prompting(self) -> PromptSettings:
        """What the requests of the run's examples read (:mod:`hopscore.run.tasks`)."""
        return PromptSettings(protocol=self.protocol, answer_marker=self.answer_marker,
                              extraction=self.extraction, retrieve_k=self.retrieve_k,
                              wiki_pages=self.wiki_pages, wiki_elements=self.wiki_elements,
                              temperature=self.temperature, max_tokens=self.max_tokens,
                              seed=self.seed, reasoning=self.reasoning)

    def strategy_settings(self) -> StrategySettings:
        """What the plan of a chain strategy reads (:func:`hopscore.run.strategy.make_plan`)."""
        from hopscore.run.strategy import StrategySettings

        return StrategySettings(strategy=self.strategy, chains=self.chains,
                                num_retries=self.num_retries, meta_facts=self.meta_facts,
                                shots=self.shots, temperature=self.temperature,
                                chain_temperature=self.chain_temperature,
                                chain_calls=self.chain_calls, protocol=self.protocol,
                                max_tokens=self.max_tokens, seed=self.seed)

    def search(self) -> SearchSettings:
        """The search options of a chain strategy's evidence
        (:func:`hopscore.run.evidence.make_source`)."""
        from hopscore.run.evidence import SearchSettings

        return SearchSettings(search_backend=self.search_backend, search_url=self.search_url,
                              fetch_url=self.fetch_url,
                              search_api_key_env=self.search_api_key_env,
                              search_timeout=self.search_timeout)

    def inputs(self) -> list[Input]:
        """The files and folders the run reads, by option (an output never writes over one)."""
        return option_inputs({
            "--gold": self.gold, "--aliases": self.aliases, "--tables-dir": self.tables_dir,
            "--corpus": self.corpus, "--prompt-template": self.prompt_template,
            "--cluster-file": self.cluster_file, "--wiki-db": self.wiki_db,
            "--documents": self.documents})

    def to_json(self) -> dict[str, Any]:
        """Every setting (paths as strings, tuples as lists): config.json's and the
        fingerprint's."""
        out = settings_json(self, tuples_as_lists=True)
        # newer settings, out of config.json when unused
        for name in ("agent", "documents", "reasoning"):
            if out[name] is None:
                del out[name]
        return out


#: Settings that say how a run is executed, not what it computes: left out of its fingerprint,
#: so the shards of one run (and reruns with more concurrency) have the same one.
EXECUTION_FIELDS = ("output_dir", "api_key_env", "concurrency", "timeout", "max_retries",
                    "backoff", "max_retry_wait", "deadline", "max_outage", "adaptive",
                    "max_cost", "max_tokens_total", "max_time", "on_budget",
                    "cache_dir", "shard",
                    "executor", "ray_workers", "search_api_key_env",
                    "search_timeout")
#: Files whose content (sha256, in config.json) stands in the fingerprint for their path, so
#: shards that read the same data from different places agree.
HASHED_PATHS = ("gold", "corpus", "prompt_template")
#: Settings that change how a run is carried out or reported, never its samples: a rerun that
#: differs only in these is a plain resume, and a refused rerun does not name them (another
#: --shard is named: its rows are of other examples).
OPERATIONAL = (*(name for name in EXECUTION_FIELDS if name != "shard"), "resamples", "ci",
               "ci_level", "cluster", "cluster_file", "on_truncation")


def run_writes(predictions_file: str) -> tuple[str, ...]:
    """The files a run writes in its directory."""
    return ("config.json", "samples.jsonl", "samples.other-settings.jsonl", "metrics.json",
            "scores.jsonl", predictions_file)


def default_output_dir(benchmark: str, model: str, protocol: str) -> Path:
    """``runs/<benchmark>__<model>[__mcr]`` with the model spec made file-name safe."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")
    suffix = "" if protocol == "default" else f"__{protocol}"
    return Path("runs") / f"{benchmark}__{safe}{suffix}"
