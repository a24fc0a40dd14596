"""MCR's methods as run strategies: ``hopscore run BENCH --strategy self-ask|sc|mcr``.

* ``self-ask``: one self-ask chain (:mod:`hopscore.run.selfask`) with a retrieved context for
  the question and for every follow-up (:mod:`hopscore.run.evidence`); its final answer (SA).
* ``sc``: ``--chains k`` chains, chain 0 greedy (``--temperature``, 0 by default) and the others
  sampled at ``--chain-temperature`` (0.7, MCR's); the majority answer (SC), with SA and the
  oracle beside it (:mod:`hopscore.run.methods`).
* ``mcr``: the same k chains, then the meta-reasoner over their question-answer pairs and
  evidence (:mod:`hopscore.run.metareason`), which may abstain ("Unknown").

``--num-retries n`` (MCR: 2; the default for ``mcr``) re-runs a question whose answer is an
abstention (MCR's "Unknown", or no chain answered) up to n more rounds: all k chains are made
again, chain 0 greedy as before (the response cache gives it back unchanged, as MCR's cache
does) and the sampled ones drawn anew; SA and SC come from the last round, as in MCR. Every
round is kept in the sample row.

A question's row in ``samples.jsonl`` holds every round with every chain (its text, steps,
retrieved evidence, each model call's reply and what was kept of it), the meta-reasoner's
input messages and output, and ``methods``: the answer and score of SA, SC, oracle and MCR.
Rows are written when the whole question is done; a request that fails after the engine's
retries fails the question, which a re-run retries (finished calls come from the cache).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from hopscore.benchmarks.base import Benchmark, Example, ModelAnswer
from hopscore.engine import (
    CallFailure,
    ChatEngine,
    ChatRequest,
    RowResult,
    canonical_json,
    sha256_text,
)
from hopscore.engine.ledger import MODEL, USAGE
from hopscore.engine.ledger import block as ledger_block
from hopscore.errors import HopscoreError
from hopscore.run.caps import kept_text
from hopscore.run.evidence import CachedSource, EvidenceSource
from hopscore.run.extract import Hints, _map, clean
from hopscore.run.metareason import META_MODES, META_STOP, meta_context, read_meta
from hopscore.run.methods import METHODS, MethodAnswer, chain_methods
from hopscore.run.prompts import PromptTemplate
from hopscore.run.selfask import CHAIN_STOP, FINAL, Chain, Evidence, generate_chain

STRATEGIES = ("cot", "self-ask", "sc", "mcr")
#: The error kind of a question whose evidence lookup failed.
RETRIEVAL_ERROR = "retrieval_error"
CHAIN_STRATEGIES = ("self-ask", "sc", "mcr")
DEFAULT_CHAINS = 5
CHAIN_TEMPERATURE = 0.7
#: MCR's num_retries (every shipped config), the default of --strategy mcr.
MCR_NUM_RETRIES = 2
DEFAULT_SHOTS = 4
#: Exemplar set per answer kind (a label question is asked as yes/no: "Is it true that ...?").
_SHOT_KIND = {"yesno": "yesno", "label": "yesno", "choice": "choice", "number": "number",
              "span": "span"}


def load_exemplars(name: str, kind: str, count: int) -> list[dict[str, Any]]:
    path = resources.files("hopscore.run") / "shots" / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    available: list[dict[str, Any]] = data[_SHOT_KIND[kind]]
    if count > len(available):
        raise HopscoreError(f"--shots {count}: the {name} exemplars for {kind} answers number "
                            f"{len(available)}")
    return available[:count]


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategySettings:
    """What :func:`make_plan` reads of a run's settings (:meth:`RunSettings.strategy_settings
    <hopscore.run.settings.RunSettings.strategy_settings>`)."""

    #: self-ask, sc or mcr
    strategy: str
    #: chains per question (None: 1 for self-ask, 5 for sc and mcr)
    chains: int | None
    #: re-runs of an abstaining question (None: 2 for mcr, else 0)
    num_retries: int | None
    #: what the meta-reasoner reads (None: both with retrieval, else qa)
    meta_facts: str | None
    #: exemplars (None: DEFAULT_SHOTS)
    shots: int | None
    #: the temperature of chain 0, and of the sampled chains
    temperature: float | None
    chain_temperature: float
    #: model calls per chain
    chain_calls: int
    protocol: str
    max_tokens: int | None
    seed: int | None


class ChainFailed(Exception):
    def __init__(self, failure: CallFailure) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass(slots=True)
class StrategyPlan:
    """Everything a chain strategy needs besides the engine, fixed before the first call."""

    strategy: str
    chains: int
    greedy_temperature: float | None
    chain_temperature: float
    num_retries: int
    chain_calls: int
    meta_mode: str
    protocol: str
    answer_kind: str
    source: CachedSource | None
    selfask: PromptTemplate
    meta: PromptTemplate
    selfask_shots: list[dict[str, Any]]
    meta_shots: list[dict[str, Any]]
    model: str
    max_tokens: int | None
    seed: int | None
    stop: list[str]

    def fingerprint(self) -> str:
        return sha256_text(canonical_json({
            "strategy": self.strategy, "chains": self.chains,
            "greedy_temperature": self.greedy_temperature,
            "chain_temperature": self.chain_temperature, "num_retries": self.num_retries,
            "chain_calls": self.chain_calls, "meta_mode": self.meta_mode,
            "protocol": self.protocol, "source": None if self.source is None
            else self.source.describe(), "selfask": self.selfask.sha256, "meta": self.meta.sha256,
            "shots": sha256_text(canonical_json([self.selfask_shots, self.meta_shots])),
            "model": self.model, "max_tokens": self.max_tokens, "seed": self.seed,
            "stop": self.stop,
        }))  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "chains": self.chains,
            "greedy_temperature": self.greedy_temperature,
            "chain_temperature": self.chain_temperature, "num_retries": self.num_retries,
            "chain_calls": self.chain_calls,
            "meta_facts": self.meta_mode if self.strategy == "mcr" else None,
            "retrieval": None if self.source is None else self.source.describe(),
            "selfask_template": self.selfask.sha256, "meta_template": self.meta.sha256,
            "selfask_shots": len(self.selfask_shots), "meta_shots": len(self.meta_shots),
            "fingerprint": self.fingerprint(),
        }  # fmt: skip

    def sampling(self, index: int, round_: int) -> tuple[float | None, int | None, str]:
        """(temperature, seed, cache tag) of chain ``index`` in round ``round_``.

        Chain 0 is greedy in every round (the same request, so a retry round gets it back
        from the cache, as MCR's cached greedy chain); the others are sampled, each with its
        own cache tag (and seed, when --seed is given) so no two share a response. With one
        chain, retry rounds sample it: a greedy repeat could not change the answer.
        """
        greedy = index == 0 and (round_ == 0 or self.chains > 1)
        if greedy:
            return self.greedy_temperature, self.seed, ""
        seed = None if self.seed is None else self.seed + index + 1000 * round_
        return self.chain_temperature, seed, f"chain={index};round={round_}"

    def chain_request(self, tail: str, index: int, round_: int) -> ChatRequest:
        messages = self.selfask.render({"shots": self.selfask_shots, "tail": tail,
                                        "retrieval": self.source is not None,
                                        "answer_kind": self.answer_kind})
        temperature, seed, tag = self.sampling(index, round_)
        return ChatRequest(
            model=self.model, messages=messages, temperature=temperature,
            max_tokens=self.max_tokens, seed=seed, stop=[*CHAIN_STOP, *self.stop][:4],
            cache_tag=tag, require_content=False,
        )  # fmt: skip

    def meta_request(self, chains: list[Chain], question: str) -> ChatRequest:
        messages = self.meta.render({"shots": self.meta_shots, "answer_kind": self.answer_kind,
                                     "context": meta_context(chains, question, self.meta_mode)})
        return ChatRequest(model=self.model, messages=messages, temperature=0.0,
                           max_tokens=self.max_tokens, seed=self.seed,
                           stop=[*META_STOP, *self.stop][:4])


def make_plan(settings: StrategySettings, kind: str, source: EvidenceSource | None, model: str,
              stop: list[str]) -> StrategyPlan:
    strategy = settings.strategy
    chains = settings.chains if settings.chains is not None else (
        1 if strategy == "self-ask" else DEFAULT_CHAINS)
    if strategy == "self-ask" and chains != 1:
        raise HopscoreError("--strategy self-ask makes one chain; use --strategy sc or mcr "
                            "for --chains k")
    retries = settings.num_retries if settings.num_retries is not None else (
        MCR_NUM_RETRIES if strategy == "mcr" else 0)
    mode = settings.meta_facts or ("both" if source is not None else "qa")
    if mode not in META_MODES:
        raise HopscoreError(f"--meta-facts must be one of {', '.join(META_MODES)}")
    if mode != "qa" and source is None:
        raise HopscoreError(f"--meta-facts {mode} needs retrieval (--corpus, --search-backend "
                            "http, or a benchmark whose gold has paragraphs)")
    shots = settings.shots if settings.shots is not None else DEFAULT_SHOTS
    return StrategyPlan(
        strategy=strategy, chains=chains, greedy_temperature=settings.temperature,
        chain_temperature=settings.chain_temperature, num_retries=retries,
        chain_calls=settings.chain_calls, meta_mode=mode, protocol=settings.protocol,
        answer_kind=kind, source=CachedSource(source) if source is not None else None,
        selfask=PromptTemplate.builtin("selfask.jinja"), meta=PromptTemplate.builtin("meta.jinja"),
        selfask_shots=load_exemplars("selfask", kind, shots),
        meta_shots=load_exemplars("meta", kind, min(shots, 3)) if strategy == "mcr" else [],
        model=model, max_tokens=settings.max_tokens, seed=settings.seed, stop=list(stop),
    )  # fmt: skip


def _attempt_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    return []


def _usage_total(calls: list[dict[str, Any]]) -> dict[str, Any]:
    latency = [c["latency_s"] for c in calls if c.get("latency_s") is not None]
    return {
        "requests": len(calls),
        "cached": bool(calls) and all(c.get("cached") for c in calls),
        # each call's attempt records (status, error, elapsed), in call order
        "attempts": [a for c in calls for a in _attempt_list(c.get("attempts"))],
        "prompt_tokens": sum(int(c.get("prompt_tokens") or 0) for c in calls),
        "completion_tokens": sum(int(c.get("completion_tokens") or 0) for c in calls),
        "latency_s": round(sum(latency), 4) if latency else None,
        "elapsed_s": round(sum(float(c.get("elapsed_s") or 0.0) for c in calls), 4),
        # calls whose reply was cut at max_tokens (finish_reason "length")
        "truncated_calls": sum(1 for c in calls if c.get("finish_reason") == "length"),
        "truncated": any(c.get("finish_reason") == "length" for c in calls),
        USAGE: ledger_block(MODEL, calls),
    }


class StrategyWorker:
    """Runs one question through a chain strategy and builds its sample row."""

    def __init__(self, engine: ChatEngine, plan: StrategyPlan, benchmark: Benchmark[Any, Any],
                 score: Any) -> None:
        self.engine = engine
        self.plan = plan
        self.benchmark = benchmark
        #: (example, answer) -> score or None, for the methods
        self.score = score

    async def _complete(self, request: ChatRequest, calls: list[dict[str, Any]]) -> str:
        result = await self.engine.complete(request)
        calls.append(result.to_json())
        if result.response is None:
            assert result.failure is not None
            raise ChainFailed(result.failure)
        # the text after the reply's thinking: the chain never reads (nor continues) the
        # thinking, and thinking that never closed answers nothing
        from hopscore.engine.reasoning import reasoning_of, split_reply

        return split_reply(result.response.content, reasoning_of(result.response.raw)).answer

    async def _chain(self, example: Example, question: str, index: int, round_: int,
                     calls: list[dict[str, Any]]) -> Chain:
        plan = self.plan

        async def complete(tail: str, call: int) -> tuple[str, dict[str, Any]]:
            request = plan.chain_request(tail, index, round_)
            mine: list[dict[str, Any]] = []
            reply = await self._complete(request, mine)
            calls.extend(mine)
            usage = mine[0]
            return reply, {k: usage.get(k) for k in ("cache_key", "cached", "prompt_tokens",
                                                       "completion_tokens", "latency_s")}

        retrieve = None
        if plan.source is not None:
            source = plan.source

            async def retrieve(query: str) -> Evidence | None:
                try:
                    return await source.lookup(query, example)
                except Exception as exc:  # a search service down: the question is retried
                    raise ChainFailed(CallFailure(
                        RETRIEVAL_ERROR, f"{source.label} lookup of {query!r} failed: "
                        f"{type(exc).__name__}: {exc}")) from None

        temperature, seed, _ = plan.sampling(index, round_)
        return await generate_chain(index, question, complete, retrieve,
                                    max_calls=plan.chain_calls, temperature=temperature,
                                    seed=seed)

    def _answer_of(self, chain: Chain, hints: Hints) -> str | None:
        """A chain's answer as the methods see it (MCR's raw answer under --protocol mcr)."""
        if chain.answer is None:
            return None
        if self.plan.protocol == "mcr":
            return chain.answer
        return _map(clean(chain.answer), hints)

    async def run(self, example: Example, question: str, hints: Hints, key: str,
                  base: dict[str, Any]) -> RowResult:
        plan = self.plan
        calls: list[dict[str, Any]] = []
        rounds: list[dict[str, Any]] = []
        try:
            for round_ in range(plan.num_retries + 1):
                chains = await asyncio.gather(*(
                    self._chain(example, question, index, round_, calls)
                    for index in range(plan.chains)))  # fmt: skip
                record = await self._round(example, question, hints, list(chains), calls,
                                           round_)
                rounds.append(record)
                if not record["abstained"]:
                    break
        except ChainFailed as failed:
            row = {**base, "strategy": plan.strategy, "rounds": rounds, "raw_output": None,
                   **_usage_total(calls), "error": failed.failure.to_json()}
            return RowResult(row, done=False, failure=failed.failure)
        return RowResult(self._row(example, base, rounds, calls))

    async def _round(self, example: Example, question: str, hints: Hints, chains: list[Chain],
                     calls: list[dict[str, Any]], round_: int) -> dict[str, Any]:
        plan = self.plan
        answers = [(c.index, a) for c in chains if (a := self._answer_of(c, hints)) is not None]
        methods = chain_methods(answers, lambda a: self.score(example, a),
                                lower_winner=plan.protocol == "mcr")
        record: dict[str, Any] = {"round": round_, "chains": [c.to_json() for c in chains]}
        if plan.strategy == "mcr":
            request = plan.meta_request(chains, question)
            output = await self._complete(request, calls)
            read = read_meta(output, hints, plan.protocol)
            score = None if read.abstained or read.answer is None else self.score(example,
                                                                                read.answer)
            methods["mcr"] = MethodAnswer(read.answer, score, abstained=read.abstained
                                          or score is None)
            record["meta"] = {"input": request.messages, "output": output,
                              "answer": read.answer, "abstained": read.abstained,
                              "strict": read.strict, "flexible": read.flexible,
                              "cache_key": calls[-1].get("cache_key")}
        final = methods[{"self-ask": "sa", "sc": "sc", "mcr": "mcr"}[plan.strategy]]
        record["methods"] = {name: m.to_json() for name, m in methods.items()}
        record["answer"] = final.answer
        record["abstained"] = final.answer is None or final.abstained
        return record

    def _row(self, example: Example, base: dict[str, Any], rounds: list[dict[str, Any]],
             calls: list[dict[str, Any]]) -> dict[str, Any]:
        plan = self.plan
        last = rounds[-1]
        chains = last["chains"]
        methods = last["methods"]
        final_name = {"self-ask": "sa", "sc": "sc", "mcr": "mcr"}[plan.strategy]
        answer = last["answer"]
        if plan.strategy == "mcr":
            raw = last["meta"]["output"]
            strict = last["meta"]["strict"]
        else:
            chosen = methods[final_name].get("chain")
            raw = chains[chosen]["text"] if chosen is not None else chains[0]["text"]
            strict = answer if answer is not None and FINAL in raw else None
        retrieved = list(dict.fromkeys(
            context["source"] for chain in chains for context in chain["contexts"]
            if context.get("source")))
        abstained = bool(last["abstained"])
        prediction = None
        sources = tuple(retrieved) if plan.source is not None else None
        if not abstained:  # from what the row keeps, as the end of the run reads it again
            prediction = self.benchmark.make_prediction(example, ModelAnswer(
                None if answer is None else kept_text(answer), kept_text(raw), sources, sources))
        mcr_score = methods[final_name]["score"] if plan.protocol == "mcr" else None
        return {
            **base, "strategy": plan.strategy, "raw_output": raw,
            "retrieved": retrieved if plan.source is not None else None,
            "evidence_ids": retrieved if plan.source is not None else None,
            "extracted": {"strict": strict, "flexible": answer,
                          "mcr": answer if plan.protocol == "mcr" else None},
            "answer": answer, "abstained": abstained,
            "mcr_score": None if abstained else mcr_score,
            "prediction": None if prediction is None else {
                "answer": prediction.answer_text(),
                **self.benchmark.prediction_details(prediction)},
            "scores": self.benchmark.score(example, prediction),
            "methods": methods, "rounds": rounds, **_usage_total(calls),
            "finish_reason": None, "cache_key": None, "error": None,
        }  # fmt: skip


def method_names(strategy: str) -> tuple[str, ...]:
    """The methods a strategy's rows carry, in table order."""
    if strategy == "mcr":
        return METHODS
    if strategy == "sc":
        return ("sa", "sc", "oracle")
    if strategy == "self-ask":
        return ("sa",)
    return ()


def kind_hints(kind: str, variables: dict[str, Any]) -> Hints:
    choices = tuple((c["label"], c["text"]) for c in variables.get("choices", ()))
    return Hints(kind=kind, choices=choices, unit=variables.get("unit"))



def answer_metric(benchmark: Benchmark[Any, Any], protocol: str) -> str:
    """The metric the methods are scored with: MCR's evaluator under --protocol mcr, else the
    benchmark's answer metric."""
    if protocol == "mcr":
        from hopscore.run.mcr import metric_name

        return metric_name(benchmark.mcr_evaluator)
    return benchmark.answer_metric or benchmark.metrics[0]


def method_scorer(benchmark: Benchmark[Any, Any], protocol: str) -> Any:
    """``score(example, answer) -> float | None`` for the methods of a chain strategy."""
    if protocol == "mcr":
        from hopscore.run.mcr import evaluator_of

        evaluator = evaluator_of(benchmark)

        def mcr_score(example: Example, answer: str) -> float | None:
            return evaluator(answer, benchmark.mcr_gold(example))

        return mcr_score
    metric = answer_metric(benchmark, protocol)

    def own_score(example: Example, answer: str) -> float | None:
        prediction = benchmark.make_prediction(example, ModelAnswer(answer))
        return float(benchmark.score(example, prediction)[metric])

    return own_score
