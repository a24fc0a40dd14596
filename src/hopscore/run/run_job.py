"""``hopscore run``: ask a model every selected example, read and score its answers, resumably.

The run directory holds ``config.json`` (settings, prompt hashes, versions, status),
``samples.jsonl`` (one row per example: prompt, raw output, extracted answers, scores, usage,
latency, attempts, errors; appended as requests finish, rewritten in gold order at the end),
the predictions in the benchmark's official format, and ``metrics.json`` + ``scores.jsonl``
exactly as ``hopscore score`` writes them for those predictions (plus a ``run`` block, and an
``mcr`` block under ``--protocol mcr``).

Requests go through the shared engine (:mod:`hopscore.engine`): bounded concurrency, retries
with back-off, a persistent response cache (an identical re-run makes no model call), and the
samples are a job of :mod:`hopscore.jobs` (resumed by settings, written as they finish), so a
killed run continues where it stopped and no example is asked twice. A failed request is
recorded with its error and never scored as an answer: it has no prediction (scores 0, listed
as missing), the metrics say how many failed, and re-running the same command retries only
those.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from rich.console import Console

from hopscore.benchmarks.base import ModelAnswer
from hopscore.distributed import Built, Gate, local_execution, ray_execution
from hopscore.distributed.work import prepared_elsewhere
from hopscore.engine import (
    BatchOutcome,
    CallFailure,
    CallResult,
    ChatBackend,
    ChatEngine,
    ChatRequest,
    ChatResponse,
    EngineStats,
    RowResult,
    batch_workers,
    run_key_of,
    run_sync,
    warn_printer,
)
from hopscore.engine.batch_mode import BatchMode, batched_backend
from hopscore.engine.capacity import cluster_limit
from hopscore.engine.ledger import MODEL, USAGE
from hopscore.engine.ledger import block as ledger_block
from hopscore.engine.preflight import preflight
from hopscore.engine.reasoning import reasoning_of, reply_fields, split_reply
from hopscore.errors import HopscoreError
from hopscore.files.io import bulk_load
from hopscore.files.outputs import claim, output_dir
from hopscore.files.reruns import REFUSE
from hopscore.jobs import Job, open_results, run_rows
from hopscore.run.caps import capped_sample, kept_text
from hopscore.run.extract import extract_flexible, extract_mcr, extract_strict
from hopscore.run.finish import finish_run, run_differences, write_config
from hopscore.run.providers import make_backend, model_engine, target_of
from hopscore.run.repeats import split_rows
from hopscore.run.settings import RunSettings, run_writes
from hopscore.run.tasks import PreparedRun, Task, prepare
from hopscore.scores.scoring import ScoreReport

SAMPLES_FILE = "samples.jsonl"


@dataclass(slots=True)
class RunResult:
    settings: RunSettings
    prepared: PreparedRun
    outcome: BatchOutcome
    stats: EngineStats
    report: ScoreReport | None
    metrics: dict[str, Any] | None
    #: the ``run`` block of metrics.json (counts over the finished samples)
    summary: dict[str, Any]


def is_done(row: dict[str, Any]) -> bool:
    return row.get("error") is None and isinstance(row.get("raw_output"), str)


class _Worker:
    def __init__(self, engine: ChatEngine, prepared: PreparedRun, settings: RunSettings) -> None:
        self.engine = engine
        self.prepared = prepared
        self.settings = settings
        if settings.protocol == "mcr":
            from hopscore.run.mcr import evaluator_of

            self.evaluator = evaluator_of(prepared.benchmark)
        self.strategy = None
        if prepared.plan is not None:
            from hopscore.run.strategy import StrategyWorker, method_scorer

            self.strategy = StrategyWorker(engine, prepared.plan, prepared.benchmark,
                                           method_scorer(prepared.benchmark, settings.protocol))
        self.agent = None
        if prepared.agent is not None:
            from hopscore.run.search_agent import SearchAgentWorker

            self.agent = SearchAgentWorker(engine, prepared.agent, prepared.benchmark)
        self.retries = settings.num_retries or 0

    async def __call__(self, task: Task, key: str) -> RowResult:
        if self.agent is not None:
            base: dict[str, Any] = {
                "run_key": key, "id": task.example.id, "question": task.example.question,
                "prompt": task.request.messages, "prompt_sha256": task.prompt_sha256}
            if self.settings.repeats > 1:
                base["attempt"] = task.attempt
            return await self.agent.run(task.example, task.question, task.hints, base,
                                        task.request.cache_tag, task.request.seed)
        if self.strategy is not None:
            base = {"run_key": key, "id": task.example.id, "question": task.example.question,
                    "asked": task.question, "prompt": task.request.messages,
                    "prompt_sha256": task.prompt_sha256}
            return await self.strategy.run(task.example, task.question, task.hints, key, base)
        call = await self.engine.complete(task.request)
        calls: list[dict[str, Any]] = []  # every call's record, for the row's usage ledger
        row = self.base_row(task, key, call, calls)
        if call.response is None:
            assert call.failure is not None
            return RowResult(row, done=False, failure=call.failure)
        row["truncated"] = call.response.finish_reason == "length"
        row.update(self.read_reply(task, call.response))
        earlier: list[dict[str, Any]] = []
        for round_ in range(1, self.retries + 1):  # --num-retries: re-sample an abstention
            if not (row["abstained"] or row["answer"] is None):
                break
            earlier.append({k: row[k] for k in ("raw_output", "answer", "abstained",
                                                "cache_key")})
            tag = f"retry={round_}"
            if task.request.cache_tag:  # a --repeats attempt: its retries are its own
                tag = f"{task.request.cache_tag};{tag}"
            request = replace(task.request, temperature=self.settings.chain_temperature,
                              cache_tag=tag, seed=None if task.request.seed
                              is None else task.request.seed + 1000 * round_)
            call = await self.engine.complete(request)
            row = self.base_row(task, key, call, calls)
            if call.response is None:
                assert call.failure is not None
                return RowResult(row, done=False, failure=call.failure)
            row["truncated"] = call.response.finish_reason == "length"
            row.update(self.read_reply(task, call.response))
        if earlier:
            row["retried"] = earlier
        return RowResult(row)

    def base_row(self, task: Task, key: str, call: CallResult,
                 calls: list[dict[str, Any]]) -> dict[str, Any]:
        """The row's request part; ``calls`` (the records of the row's earlier calls) gets
        this call's record, and the row's ``usage`` ledger counts them all."""
        messages = task.request.messages
        row: dict[str, Any] = {
            "run_key": key,
            "id": task.example.id,
            "question": task.example.question,
            "prompt": messages,
            "prompt_sha256": task.prompt_sha256,
            "retrieved": None if task.retrieved is None else [d.id for d in task.retrieved],
            "raw_output": None,
        }
        if self.settings.repeats > 1:
            row["attempt"] = task.attempt
        record = call.to_json()
        calls.append(record)
        row.update(record)
        row[USAGE] = ledger_block(MODEL, calls)
        return row

    def read_reply(self, task: Task, response: ChatResponse) -> dict[str, Any]:
        """:meth:`read` of the answer after the reply's thinking; the raw reply (with its
        inline thinking) and any separate reasoning text kept; thinking that never closed
        gives no answer (:func:`hopscore.run.finish.unscored`)."""
        output = response.content or ""
        reasoning = reasoning_of(response.raw)
        reply = split_reply(output, reasoning)
        read = self.read(task, reply.answer)
        read["raw_output"] = output
        read.update(reply_fields(reply, reasoning))
        return read

    def read(self, task: Task, output: str) -> dict[str, Any]:
        """Extraction, the scored answer, the benchmark's prediction and its scores."""
        bench = self.prepared.benchmark
        marker = self.prepared.marker
        strict = extract_strict(output, marker)
        flexible = extract_flexible(output, task.hints, marker)
        extracted: dict[str, Any] = {"strict": strict, "flexible": flexible}
        abstained = False
        mcr_score: float | None = None
        if self.settings.protocol == "mcr":
            mcr = extract_mcr(output)
            extracted["mcr"] = mcr.answer
            answer = mcr.answer
            abstained = mcr.abstained
            if not abstained and mcr.answer is not None:
                mcr_score = self.evaluator(mcr.answer, bench.mcr_gold(task.example))
                abstained = mcr_score is None
        else:
            answer = flexible if self.settings.extraction == "flexible" else strict
        prediction = None
        if not abstained:  # from what the row keeps, as the end of the run reads it again
            prediction = bench.make_prediction(task.example, model_answer(
                None if answer is None else kept_text(answer), kept_text(output), task))
        scores = bench.score(task.example, prediction)
        if prediction is not None and bench.answer_kind == "yesno" and prediction.answer_text():
            # the answer as scored (a benchmark may write "true" for the "yes" it read), so that
            # samples.jsonl and scores.jsonl agree (a judge file made from either one binds)
            answer = prediction.answer_text()
        return {
            "raw_output": output,
            "extracted": extracted,
            "answer": answer,
            "abstained": abstained,
            "mcr_score": mcr_score,
            "prediction": None if prediction is None else {
                "answer": prediction.answer_text(), **bench.prediction_details(prediction)},
            "scores": scores,
        }


def model_answer(answer: str | None, output: str, task: Task) -> ModelAnswer:
    retrieved = None if task.retrieved is None else tuple(d.id for d in task.retrieved)
    return ModelAnswer(answer, output, retrieved)


async def execute(
    settings: RunSettings,
    *,
    backend: ChatBackend | None = None,
    console: Console | None = None,
    warn: Console | None = None,
    prepared: PreparedRun | None = None,
    rerun: str = REFUSE,
    batch: BatchMode | None = None,
) -> RunResult:
    """Run (or resume) one benchmark run into ``settings.output_dir``.

    The directory is held for the whole run (:func:`hopscore.files.outputs.claim`). Samples of
    other settings already there are handled by ``rerun`` (:mod:`hopscore.files.reruns`: refused by
    default, naming the settings that differ). Ctrl-C keeps every finished sample, marks
    config.json "interrupted" and raises :class:`~hopscore.errors.Interrupted`. ``batch``
    (``--batch``): the samples' requests go through the provider's batch API first
    (:mod:`hopscore.engine.batch_mode`; single-turn runs only).
    """
    from hopscore import benchmarks

    writes = run_writes(benchmarks.get(settings.benchmark).predictions_file)
    with claim(output_dir(settings.output_dir, "--output-dir", writes=writes,
                          create_parents=True), inputs=settings.inputs()):
        if prepared is None:
            with bulk_load():  # thousands of prompts built, no reference cycles
                prepared = prepare(settings)
        return await _execute(settings, prepared, backend, console, warn, rerun, batch)


async def _execute(settings: RunSettings, prepared: PreparedRun, backend: ChatBackend | None,
                   console: Console | None, warn: Console | None, rerun: str,
                   batch: BatchMode | None = None) -> RunResult:
    out = settings.output_dir
    job = Job(path=out / SAMPLES_FILE, items=prepared.tasks,
              keys=[task.key for task in prepared.tasks], key_of=run_key_of, is_done=is_done,
              what="samples", description=f"{prepared.benchmark.name} {prepared.spec}",
              stale="samples made with other settings or examples; this run replaces them",
              saved=f"samples are saved in {out / SAMPLES_FILE}",
              interrupted_hint=" (config.json says interrupted); rerun the same command to "
                               "resume")
    keys = job.keys
    log = open_results(job, warn=warn, rerun=rerun,
                       differences=lambda rows: run_differences(settings, prepared))
    local = prepared.spec.is_local
    if backend is None:  # credentials, then the endpoint (unless nothing is left to ask)
        target = target_of(settings.model, prepared.base_url, settings.api_key_env)
        if job.pending(log):
            await preflight(target, cache_dir=settings.cache_dir, warn=warn_printer(warn))
    if batch is not None:
        check_batchable(settings, prepared)
        if job.pending(log):
            backend = await _batched(settings, prepared, backend, batch, warn,
                                     [t.request for t in prepared.tasks if not log.is_done(t.key)])
    factory = RunWork(settings)
    if settings.executor == "ray":
        if local:
            raise HopscoreError("local/smollm2 runs in this process; leave --executor ray out")
        limit = await cluster_limit(prepared.endpoint, settings.concurrency, settings.adaptive)
        execution = await ray_execution(factory, limits={prepared.endpoint: limit},
                                        per_worker=limit,
                                        workers=settings.ray_workers)
    else:
        if local and backend is None:  # made here, to be loaded before the first sample
            backend = make_backend(prepared.spec, None, settings.api_key_env, 1)
        built = await factory.build(None, backend=backend, prepared=prepared, warn=warn)
        execution = local_execution(built, 1 if local else batch_workers(settings.concurrency))
    write_config(settings, prepared, status="running")  # once the model could be loaded

    async def load_model() -> None:
        if local and job.pending(log):
            from hopscore.engine.local import preload

            say = None if warn is None else (
                lambda line: warn.print(line, markup=False, highlight=False))
            await preload(backend, say)

    def interrupted() -> None:
        rows, attempts = split_rows(prepared.tasks, log.latest(keys), settings.repeats)
        write_config(settings, prepared, status="interrupted", rows=rows,
                     stats=execution.stats(), attempts=attempts)

    finished = await run_rows(job, log, execution, console=console, warm_up=load_model,
                              on_stop=interrupted)
    outcome, stats = finished.outcome, finished.stats
    with bulk_load():  # every sample read back, counted and scored: no reference cycles
        # by example id (attempt 0), and with --repeats every example's attempts
        rows, attempts = split_rows(prepared.tasks, log.latest(keys), settings.repeats)
        if outcome.aborted is not None:
            summary = write_config(settings, prepared, status="aborted", rows=rows,
                                   outcome=outcome, stats=stats, executor=finished.executor,
                                   attempts=attempts)
            return RunResult(settings, prepared, outcome, stats, None, None, summary)
        report, metrics, summary = finish_run(settings.scoring(), prepared, rows, attempts)
        status = "complete" if not summary["errors"] else "incomplete"
        write_config(settings, prepared, status=status, rows=rows, outcome=outcome,
                     stats=stats, executor=finished.executor, attempts=attempts,
                     summary=summary)
    return RunResult(settings, prepared, outcome, stats, report, metrics, summary)


def check_batchable(settings: RunSettings, prepared: PreparedRun) -> None:
    """``--batch`` is for runs whose samples each ask the model once, on an endpoint."""
    why = None
    if prepared.spec.is_local:
        why = f"{settings.model} runs on this machine"
    elif prepared.plan is not None:
        why = f"--strategy {settings.strategy} asks the model again after each reply"
    elif settings.num_retries:
        why = "--num-retries asks again after a reply"
    elif settings.executor == "ray":
        why = "a batch is one job at the provider, sent and collected from this machine"
    if why is not None:
        raise HopscoreError(f"--batch is for single-turn runs on an endpoint: {why}")


async def _batched(settings: RunSettings, prepared: PreparedRun, backend: ChatBackend | None,
                   mode: BatchMode, warn: Console | None, requests: list[ChatRequest]
                   ) -> ChatBackend:
    live = backend or make_backend(prepared.spec, prepared.base_url, settings.api_key_env,
                                   settings.concurrency)
    target = target_of(settings.model, prepared.base_url, settings.api_key_env)

    def say(line: str) -> None:
        if warn is not None:
            warn.print(line, markup=False, highlight=False, soft_wrap=True)

    return await batched_backend(live, target, requests, settings.output_dir / SAMPLES_FILE,
                                 mode, cache_dir=settings.cache_dir, say=say)


@dataclass(frozen=True, slots=True)
class RunWork:
    """The work of a model run (:class:`hopscore.distributed.WorkFactory`): built in this
    process, or in each Ray worker, which prepares the run itself and finds a task by its key."""

    settings: RunSettings
    ships_items: ClassVar[bool] = False

    async def build(self, gate: Gate | None, *, backend: ChatBackend | None = None,
                    prepared: PreparedRun | None = None, warn: Console | None = None) -> Built:
        settings = self.settings
        prepared = prepared or prepare(settings)
        engine = model_engine(settings, prepared.spec, prepared.base_url, backend, gate, warn)
        worker = _Worker(engine, prepared, settings)
        tasks = {task.key: task for task in prepared.tasks} if gate is not None else {}

        async def work(item: Task | None, key: str) -> RowResult:
            task = item if item is not None else tasks.get(key)
            if task is None:
                raise prepared_elsewhere(key, "example")
            result = await worker(task, key)
            row, line = capped_sample(result.row)
            return RowResult(row, result.done, result.failure, line)

        return Built(work, lambda: engine.stats, engine.aclose, engine.start_interval)

    def lost_row(self, item: Task, key: str, failure: CallFailure) -> dict[str, Any]:
        return {"run_key": key, "id": item.example.id, "question": item.example.question,
                "raw_output": None, "error": failure.to_json()}


def run(settings: RunSettings, **kwargs: Any) -> RunResult:
    """Synchronous wrapper of :func:`execute`."""
    return run_sync(execute(settings, **kwargs))
