"""Turning gold examples into model requests: selection, context, prompt, request, resume key.

Everything is prepared before the first request, so a bad template, a missing table or an
unreadable corpus stops the run before any model call.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, Example, PromptInputs, Wiki
from hopscore.engine import ChatRequest, canonical_json, sha256_text
from hopscore.engine.reasoning import with_reasoning
from hopscore.errors import HopscoreError
from hopscore.files.digest import remembered_sha256
from hopscore.run.extract import DEFAULT_MARKER, KINDS, MCR_MARKER, Hints
from hopscore.run.prompts import PromptTemplate, builtin_template_name, load_shots
from hopscore.run.providers import ModelSpec, endpoint_for, resolve_base_url
from hopscore.run.retrieval import Corpus, Document
from hopscore.run.settings import PromptSettings, RunSettings

if TYPE_CHECKING:  # the search agent and the chain strategies load only when a run uses them
    from hopscore.run.search_agent import SearchAgentPlan
    from hopscore.run.strategy import StrategyPlan

#: Under --protocol mcr with exemplars, generation stops where a new exemplar would begin, as
#: MCR's prompts stop at their exemplar separator ("#").
MCR_STOP = "\nQuestion:"


@dataclass(frozen=True, slots=True)
class Task:
    """One example's request and what is needed to read its reply."""

    example: Example
    request: ChatRequest
    hints: Hints
    retrieved: tuple[Document, ...] | None
    #: resume key: the example, the exact request and the settings that read its reply
    key: str
    #: sha256 of the messages
    prompt_sha256: str
    #: the question as the chain strategies ask it (MCR's form); "" for cot
    question: str = ""
    #: which of the ``--repeats`` attempts at the example this is (0: the first)
    attempt: int = 0


@dataclass(slots=True)
class PreparedRun:
    benchmark: Benchmark[Any, Any]
    spec: ModelSpec
    base_url: str | None
    endpoint: str
    examples: list[Example]
    tasks: list[Task]
    template: PromptTemplate
    shots: list[dict[str, Any]]
    answer_kind: str
    marker: str
    #: the stop sequences sent (the user's, plus MCR_STOP under --protocol mcr with shots)
    stop: list[str]
    gold_sha256: str
    gold_examples: int
    corpus: Corpus | None
    #: the chain strategies' plan (None: --strategy cot)
    plan: StrategyPlan | None = None
    #: the search agent's plan (None: no agent, ``hopscore run``)
    agent: SearchAgentPlan | None = None


def select(examples: list[Example], *, limit: int | None, sample: int | None,
           sample_seed: int) -> list[Example]:
    """``--limit K``: the first K in gold order; ``--sample N``: MCR's seeded random sample
    (``random.seed(sample_seed); random.sample(examples, N)``), in sample order."""
    if limit is not None:
        return examples[:limit]
    if sample is not None:
        if sample >= len(examples):
            return examples
        # the same draw as MCR's random.seed(seed); random.sample(...), without global state
        return random.Random(sample_seed).sample(examples, sample)
    return examples


def _answer_kind(benchmark: Benchmark[Any, Any], protocol: str) -> str:
    kind = benchmark.answer_kind
    if protocol == "mcr" and benchmark.mcr_answer_kind:
        kind = benchmark.mcr_answer_kind
    if kind not in KINDS:
        raise HopscoreError(f"{benchmark.name}: unknown answer kind {kind!r}")
    return kind


def load_template(prompt_template: Path | None, benchmark: str, protocol: str) -> PromptTemplate:
    """``--prompt-template``, or the benchmark's built-in template for the protocol."""
    if prompt_template is not None:
        return PromptTemplate.from_file(prompt_template)
    return PromptTemplate.builtin(builtin_template_name(benchmark, protocol))


def prepare(settings: RunSettings) -> PreparedRun:
    settings.check()
    benchmark = benchmarks.get(settings.benchmark)
    spec = ModelSpec.parse(settings.model)
    base_url = resolve_base_url(spec, settings.base_url)
    endpoint = endpoint_for(spec, base_url)
    if settings.protocol == "mcr":
        from hopscore.run.mcr import evaluator_of

        evaluator_of(benchmark)  # fails early for a benchmark MCR did not evaluate
    if settings.strategy != "cot" and not benchmark.mcr_evaluator:
        raise HopscoreError(f"--strategy {settings.strategy} asks the question alone (MCR's "
                            f"methods); {benchmark.title} needs its table in the prompt")
    if settings.strategy != "cot" and settings.prompt_template is not None:
        raise HopscoreError("--prompt-template replaces the cot prompt; the chain strategies "
                            "use the built-in selfask.jinja and meta.jinja")
    gold = benchmark.load_gold(settings.gold, aliases=settings.aliases)
    examples = select(gold, limit=settings.limit, sample=settings.sample,
                      sample_seed=settings.sample_seed)
    if settings.shard is not None:  # --shard I/N: this shard's examples, in the same order
        examples = [example for example in examples if settings.shard.owns(example.id)]
    chained = settings.strategy != "cot"
    # the chain strategies ask MCR's question form (a claim: "Is it true that ...?": yes/no)
    kind = _answer_kind(benchmark, "mcr" if chained else settings.protocol)
    marker = MCR_MARKER if settings.protocol == "mcr" or chained else settings.answer_marker
    template = load_template(settings.prompt_template, settings.benchmark, settings.protocol)
    shots = [] if chained else load_shots(benchmark.name, settings.protocol, settings.shots or 0)
    corpus = Corpus(settings.corpus) if settings.corpus is not None else None
    wiki = None
    if settings.wiki_db is not None and not chained:
        wiki = benchmark.open_wiki(settings.wiki_db)
    plan = None
    agent = None
    if settings.agent is not None:
        from hopscore.run.search_agent import SearchAgentPlan

        assert corpus is not None  # RunSettings.check
        index: Any = corpus
        if settings.agent.retriever == "dense":
            index = _dense_index(settings, corpus, base_url)
        agent = SearchAgentPlan(settings=settings.agent, corpus=index, model=spec.name,
                                temperature=settings.temperature,
                                max_tokens=settings.max_tokens, seed=settings.seed)
    elif chained:
        from hopscore.run.evidence import make_source
        from hopscore.run.strategy import make_plan

        source = make_source(settings.search(), benchmark, corpus, wiki_db=settings.wiki_db)
        plan = make_plan(settings.strategy_settings(), kind, source, spec.name,
                         list(settings.stop))
    inputs = PromptInputs(tables_dir=settings.tables_dir, context_tokens=settings.context_tokens,
                          documents=settings.documents)
    stop = list(settings.stop)
    prompting = settings.prompting()
    if settings.protocol == "mcr" and shots and MCR_STOP not in stop:
        stop.insert(0, MCR_STOP)
    tasks = [
        _task(benchmark, example, prompting, inputs, template, shots, corpus, kind, marker,
              spec, endpoint, stop, wiki) if plan is None
        else _chain_task(benchmark, example, settings.extraction, inputs, plan, kind, endpoint)
        for example in examples
    ] if agent is None else [_agent_task(benchmark, example, inputs, agent, kind, endpoint)
                             for example in examples]
    if settings.repeats > 1:
        tasks = [task if j == 0 else repeat_task(task, j)
                 for task in tasks for j in range(settings.repeats)]
    return PreparedRun(
        benchmark=benchmark, spec=spec, base_url=base_url, endpoint=endpoint,
        examples=examples, tasks=tasks, template=template, shots=shots, answer_kind=kind,
        marker=marker, stop=stop, gold_sha256=remembered_sha256(settings.gold),
        gold_examples=len(gold),
        corpus=corpus, plan=plan, agent=agent,
    )  # fmt: skip


def _dense_index(settings: RunSettings, corpus: Corpus, base_url: str | None) -> Any:
    """The search agent's dense index of ``corpus`` (:mod:`hopscore.run.dense`)."""
    import os

    from hopscore.run.dense import DenseIndex, EmbeddingClient

    agent = settings.agent
    assert agent is not None and agent.embed_model is not None
    url = agent.embed_base_url or base_url
    if not url:
        raise HopscoreError("--retriever dense needs --embed-base-url (an OpenAI-compatible "
                            "endpoint that serves /embeddings)")
    client = EmbeddingClient(agent.embed_model, url, os.environ.get(settings.api_key_env),
                             timeout=settings.timeout)
    return DenseIndex(corpus, client, query_prefix=agent.query_prefix,
                      passage_prefix=agent.passage_prefix, cache_dir=settings.cache_dir)


def _agent_task(benchmark: Benchmark[Any, Any], example: Example, inputs: PromptInputs,
                agent: SearchAgentPlan, kind: str, endpoint: str) -> Task:
    """A question of the search agent: its request is the agent's first (for display); the key
    binds the question to the agent's whole plan."""
    from hopscore.run.strategy import kind_hints

    variables = benchmark.prompt_variables(example, inputs)
    question = str(variables.get("question") or example.question)
    request = agent.request(agent.first_messages(question), "", agent.seed)
    key = sha256_text(canonical_json({
        "id": example.id, "question": question, "endpoint": endpoint,
        "agent": agent.fingerprint(),
    }))  # fmt: skip
    return Task(example, request, kind_hints(kind, variables), None, key,
                sha256_text(canonical_json(request.messages)), question=question)


def _chain_task(
    benchmark: Benchmark[Any, Any], example: Example, extraction: str, inputs: PromptInputs,
    plan: StrategyPlan, kind: str, endpoint: str,
) -> Task:
    """A question of a chain strategy: its request is the first call of chain 0 before any
    retrieval (for display); the key binds the question to the strategy's whole plan."""
    from hopscore.run.selfask import prompt_tail
    from hopscore.run.strategy import kind_hints

    variables = benchmark.prompt_variables(example, inputs)
    question = variables["mcr_question"]
    request = plan.chain_request(prompt_tail(question, [], ""), 0, 0)
    key = sha256_text(canonical_json({
        "id": example.id, "question": question, "endpoint": endpoint,
        "plan": plan.fingerprint(), "extraction": extraction,
    }))  # fmt: skip
    return Task(example, request, kind_hints(kind, variables), None, key,
                sha256_text(canonical_json(request.messages)), question=question)


def repeat_task(task: Task, attempt: int) -> Task:
    """Attempt ``attempt`` (> 0) at the example of ``task``: the same prompt sent again as a
    request of its own (cache tag ``repeat=<attempt>``; ``--seed`` + attempt when a seed is
    set), under a resume key of its own."""
    seed = task.request.seed
    request = replace(task.request, cache_tag=f"repeat={attempt}",
                      seed=None if seed is None else seed + attempt)
    key = sha256_text(canonical_json({"attempt": attempt, "of": task.key}))
    return replace(task, request=request, key=key, attempt=attempt)


def render_messages(
    benchmark: Benchmark[Any, Any], variables: dict[str, Any], template: PromptTemplate,
    shots: list[dict[str, Any]], protocol: str, answer_marker: str, kind: str,
    retrieved: tuple[Document, ...] | None = None,
) -> list[dict[str, str]]:
    """The chat messages of one example: its template variables, rendered with the run's
    exemplars and settings (also the prompts of hopscore's inspect_ai tasks)."""
    return template.render({
        **variables, "shots": shots, "protocol": protocol, "benchmark": benchmark.name,
        "answer_marker": answer_marker if protocol != "mcr" else DEFAULT_MARKER,
        "answer_kind": kind,
        "documents": [d.to_json() for d in retrieved] if retrieved is not None else [],
    })  # fmt: skip


def _task(
    benchmark: Benchmark[Any, Any], example: Example, settings: PromptSettings,
    inputs: PromptInputs, template: PromptTemplate, shots: list[dict[str, Any]],
    corpus: Corpus | None, kind: str, marker: str, spec: ModelSpec, endpoint: str,
    stop: list[str], wiki: Wiki | None = None,
) -> Task:
    variables = benchmark.prompt_variables(example, inputs)
    query = variables["mcr_question"] if settings.protocol == "mcr" else variables["question"]
    retrieved = tuple(corpus.search(query, settings.retrieve_k)) if corpus is not None else None
    shown: list[Document] = []
    if wiki is not None:  # open book (--wiki-db): elements of the question's pages, with ids
        variables["wiki"] = wiki.shown(example.question, settings.wiki_pages,
                                       settings.wiki_elements)
        shown = [Document(i, page["title"], "") for page in variables["wiki"]
                 for i in page["ids"]]
    messages = render_messages(benchmark, variables, template, shots, settings.protocol,
                               settings.answer_marker, kind, retrieved)
    if shown:  # the shown element ids: cited ids are read against them
        retrieved = (*(retrieved or ()), *shown)
    request = with_reasoning(ChatRequest(
        model=spec.name, messages=messages, temperature=settings.temperature,
        max_tokens=settings.max_tokens, seed=settings.seed,
        stop=stop or None,
    ), settings.reasoning, spec.provider)  # fmt: skip
    choices = tuple((c["label"], c["text"]) for c in variables.get("choices", ()))
    hints = Hints(kind=kind, choices=choices, unit=variables.get("unit"))
    messages_json = canonical_json(messages)  # encoded once: the prompt's hash and the key's
    key = sha256_text(canonical_json({
        "id": example.id, "request": request.cache_key(endpoint, messages_json),
        "protocol": settings.protocol, "extraction": settings.extraction, "marker": marker,
    }))  # fmt: skip
    return Task(example, request, hints, retrieved, key, sha256_text(messages_json))


def corpus_info(corpus: Corpus | None, retrieve_k: int) -> dict[str, Any] | None:
    if corpus is None:
        return None
    return {"path": str(corpus.path), "sha256": corpus.sha256, "documents": len(corpus.documents),
            "retrieve_k": retrieve_k}


def shots_sha256(shots: list[dict[str, Any]]) -> str | None:
    return sha256_text(canonical_json(shots)) if shots else None


def tables_info(path: Path | None) -> str | None:
    return str(path) if path is not None else None
