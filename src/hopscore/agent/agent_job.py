"""The agent command (``hopscore agent``): the baseline agent on every task of the agent
benchmark (:mod:`hopscore.agent.benchmark`), then grading.

The run directory holds

* ``config.json``: every setting, the task set's sha256, model, endpoint, prompt and tool
  hashes, search backend, versions, status and counts;
* ``samples.jsonl``: one row per (task, attempt) with the agent's status, final answer, turns,
  tokens and every tool call with its arguments, latency and result size (appended as attempts
  finish, rewritten in task order at the end);
* ``trajectories/<task>__<attempt>.json``: the conversation in OpenAI message format;
* ``predictions.jsonl``: the submission (``instance_id``, ``final_answer``) of attempt 0,
  and ``predictions.attempt-<i>.jsonl`` for the other attempts;
* the grading files of :mod:`hopscore.agent.grade` and ``grades.jsonl``;
* ``metrics.json`` + ``scores.jsonl`` as ``hopscore score`` writes them for the benchmark
  (groups: the families), plus a block of counts.

Attempts run concurrently (``--concurrency`` in flight) through the shared request engine
(retries, cache, resume): a finished attempt is never run again, a killed run continues where
it stopped, and an attempt that failed on a model error is retried by the next run.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from rich.console import Console

from hopscore.agent.benchmark import agent_benchmark, agent_key
from hopscore.agent.endpoints import (
    agents_at_once,
    check_endpoints,
    judge_config,
    no_tool_call_hint,
)
from hopscore.agent.grade import AttemptOutcome, GradeOptions, GradeSummary, grade
from hopscore.agent.knowledge import KnowledgeBase
from hopscore.agent.loop import MODEL_ERROR, AgentLoop, AgentSettings, prompt_sha256
from hopscore.agent.prepared import PreparedAgentRun, attempt_key
from hopscore.agent.protocol import ToolProtocol
from hopscore.agent.report import (
    cut_unscored,
    finish_metrics,
    run_differences,
    write_config,
    write_predictions,
)
from hopscore.agent.run_dir import (
    CONVERSATION,
    DROPPABLE,
    SAMPLES_FILE,
    TRAJECTORIES,
    previous_protocol,
    run_writes,
    set_trajectory_aside,
    writing_trajectories,
)
from hopscore.agent.settings import HdrSettings
from hopscore.agent.tools import SCHEMAS, ToolLimits, Toolset, openai_tools
from hopscore.agent.trajectory import file_name, read_trajectory
from hopscore.agent.wire import content_style_for
from hopscore.benchmarks.agent_tasks import HdrTask
from hopscore.distributed import Built, Gate, local_execution, ray_execution
from hopscore.distributed.work import prepared_elsewhere
from hopscore.engine import (
    BatchOutcome,
    CallFailure,
    ChatBackend,
    ChatEngine,
    EngineStats,
    RowResult,
    canonical_json,
    run_key_of,
    run_sync,
    sha256_text,
)
from hopscore.engine.outage import EndpointDown
from hopscore.errors import HopscoreError, Interrupted
from hopscore.files.outputs import claim, output_dir
from hopscore.files.reruns import REFUSE
from hopscore.jobs import Job, open_results, run_rows
from hopscore.run.caps import cap_sample
from hopscore.run.providers import (
    ModelSpec,
    endpoint_for,
    model_engine,
    resolve_base_url,
)
from hopscore.run.search import Bm25Search, HttpSearch, SearchBackend
from hopscore.scores.scoring import ScoreReport
from hopscore.sql.match_job import MatchOptions
from hopscore.sql.sandbox import SqlExecutor


@dataclass(slots=True)
class HdrRunResult:
    prepared: PreparedAgentRun
    outcome: BatchOutcome
    stats: EngineStats
    grades: GradeSummary | None
    report: ScoreReport | None
    metrics: dict[str, Any] | None
    #: counts over the attempts (a block of metrics.json)
    summary: dict[str, Any]


def is_done(row: dict[str, Any]) -> bool:
    return row.get("status") not in (None, MODEL_ERROR)


def make_search(settings: HdrSettings) -> SearchBackend:
    if settings.search_backend == "http":
        assert settings.search_url is not None
        key = os.environ.get(settings.search_api_key_env) if settings.search_api_key_env else None
        try:
            return HttpSearch(settings.search_url, fetch_url=settings.fetch_url,
                              direct_fetch=settings.direct_fetch, timeout=settings.search_timeout,
                              max_bytes=settings.search_max_bytes, api_key=key,
                              allow_private=settings.allow_private_fetch)
        except ValueError as exc:
            raise HopscoreError(f"--search-url/--fetch-url: {exc}") from None
    assert settings.corpus is not None
    return Bm25Search(settings.corpus)


def prepare(settings: HdrSettings, search: SearchBackend | None = None) -> PreparedAgentRun:
    """Check everything a run needs before the first model call."""
    settings.check()
    spec = ModelSpec.parse(settings.model)
    base_url = resolve_base_url(spec, settings.base_url)
    tasks, merged = agent_benchmark().load_agent_tasks(settings.tasks, settings.overlay)
    if settings.limit is not None:
        tasks = tasks[: settings.limit]
    if settings.shard is not None:  # --shard I/N: this shard's tasks (all their attempts)
        tasks = [task for task in tasks if settings.shard.owns(task.id)]
    if settings.grade:
        no_gold = [t.id for t in tasks if t.gold is None]
        if no_gold:
            raise HopscoreError(
                f"{len(no_gold)} tasks have no gold to grade with (final_answer, or sql for "
                f"S2SQL), e.g. {', '.join(no_gold[:5])}; pass --no-grade to run without grading")
        if any(t.family.grader == "judge" for t in tasks) and not settings.judge_model_name():
            raise HopscoreError("SQL2S and Parallel answers are graded by an LLM judge: pass "
                                "--judge-model (or set JUDGE_MODEL), or --no-grade")
    missing = {t.db: settings.db_path(t.db) for t in tasks if not settings.db_path(t.db).is_file()}
    if missing:
        listing = ", ".join(f"{db} ({path})" for db, path in sorted(missing.items()))
        raise HopscoreError(f"database files not found for {len(missing)} databases: {listing}")
    knowledge = {db: KnowledgeBase.load(settings.db_root, db)
                 for db in sorted({t.db for t in tasks})}
    search = search or make_search(settings)
    endpoint = endpoint_for(spec, base_url)
    content_style = content_style_for(endpoint, settings.tool_call_content)
    fingerprint = sha256_text(canonical_json({
        "model": str(spec), "endpoint": endpoint, "system_prompt": prompt_sha256(),
        "tools": sha256_text(canonical_json(openai_tools(tuple(SCHEMAS)))),
        "max_turns": settings.max_turns,
        "task_timeout": settings.task_timeout, "temperature": settings.temperature,
        "max_tokens": settings.max_tokens, "seed": settings.seed,
        "tool_choice": settings.tool_choice, "search": search.describe(),
        "db_template": settings.db_template, "sql_timeout": settings.sql_timeout,
        "max_observation_chars": settings.max_observation_chars,
        "tool_protocol": settings.tool_protocol, "content": content_style,
        "max_text_turns": settings.max_text_turns,
        "max_context_tokens": settings.max_context_tokens,
    }))[:16]
    protocol = ToolProtocol(settings.tool_protocol, endpoint=endpoint)
    return PreparedAgentRun(settings, spec, base_url, endpoint, tasks, merged, knowledge, search,
                    fingerprint, content_style, protocol)


class _AttemptWorker:
    def __init__(self, prepared: PreparedAgentRun, engine: ChatEngine, executor: SqlExecutor,
                 protocol: ToolProtocol) -> None:
        s = prepared.settings
        self.prepared = prepared
        self.loop = AgentLoop(engine, AgentSettings(
            model=prepared.spec.name, max_turns=s.max_turns, task_timeout_s=s.task_timeout,
            temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed,
            tool_choice=s.tool_choice or (None if prepared.spec.is_local else "auto"),
            max_text_turns=s.max_text_turns,
            max_context_tokens=s.max_context_tokens, content_style=prepared.content_style),
            protocol)
        limits = ToolLimits(sql_timeout_s=s.sql_timeout,
                            max_observation_chars=s.max_observation_chars,
                            backend_timeout_s=max(s.search_timeout * 2, 10.0))
        self.toolsets = {db: Toolset(db_path=s.db_path(db), knowledge=kb,
                                     search=prepared.search, executor=executor, limits=limits)
                         for db, kb in prepared.knowledge.items()}

    async def __call__(self, item: tuple[HdrTask, int], key: str) -> RowResult:
        task, index = item
        toolset = self.toolsets[task.db]
        attempt = await self.loop.run(task, index, toolset)
        relative = f"{TRAJECTORIES}/{file_name(task.id, index)}"
        row = {"run_key": key, "id": task.id, "instance_id": task.id, "attempt": index,
               "hybrid_type": task.hybrid_type, "db": task.db, "trajectory_file": relative,
               **attempt.summary()}
        row = cap_sample(row, kept=[name for name in row if name not in DROPPABLE])
        # the conversation travels with the row to the process that writes the output
        row[CONVERSATION] = {
            "instance_id": task.id, "attempt": index, "model": str(self.prepared.spec),
            "status": attempt.status, "message_format": "openai", "tools": toolset.schemas(),
            "tool_protocol": attempt.summary()["tool_protocol"], "messages": attempt.messages}
        done = attempt.status != MODEL_ERROR
        return RowResult(row, done=done, failure=attempt.failure)




@dataclass(frozen=True, slots=True)
class HdrWork:
    """The agent's work (:class:`hopscore.distributed.WorkFactory`): built in this process, or
    in each Ray worker, which prepares the run itself (tasks, knowledge, search), opens its own
    SQL sandbox and finds an attempt by its key."""

    settings: HdrSettings
    ships_items: ClassVar[bool] = False

    async def build(self, gate: Gate | None, *, prepared: PreparedAgentRun | None = None,
                    backend: ChatBackend | None = None, executor: SqlExecutor | None = None,
                    warn: Console | None = None) -> Built:
        settings = self.settings
        prepared = prepared or prepare(settings)
        engine = model_engine(settings, prepared.spec, prepared.base_url, backend, gate, warn)
        own = executor is None
        sandbox = SqlExecutor(workers=1) if executor is None else executor
        if own:
            sandbox.__enter__()
        worker = _AttemptWorker(prepared, engine, sandbox, prepared.protocol)
        attempts = {attempt_key(prepared, task, i): (task, i) for task in prepared.tasks
                    for i in range(settings.repeats)} if gate is not None else {}

        async def work(item: tuple[HdrTask, int] | None, key: str) -> RowResult:
            attempt = item if item is not None else attempts.get(key)
            if attempt is None:
                raise prepared_elsewhere(key, "task attempt")
            return await worker(attempt, key)

        async def close() -> None:
            try:
                await engine.aclose()
            finally:
                if own:
                    sandbox.__exit__(None, None, None)

        return Built(work, lambda: engine.stats, close, engine.start_interval)

    def lost_row(self, item: tuple[HdrTask, int], key: str, failure: CallFailure
                 ) -> dict[str, Any]:
        task, index = item
        return {"run_key": key, "id": task.id, "instance_id": task.id, "attempt": index,
                "hybrid_type": task.hybrid_type, "db": task.db, "status": MODEL_ERROR,
                "final_answer": None, "error": failure.to_json()}




def note_no_tool_calls(prepared: PreparedAgentRun, rows: dict[str, dict[str, Any]]) -> None:
    """Warn when the model made requests but never called a tool (a template without tools,
    a model that cannot call them): every attempt then ends without an answer."""
    requests = sum(int(row.get("model_calls") or 0) for row in rows.values())
    calls = sum(int(row.get("tool_call_count") or 0) for row in rows.values())
    if not requests or calls:
        return
    used = prepared.protocol.mode
    hint = no_tool_call_hint(used, prepared.protocol.props)
    prepared.protocol.say(
        f"warning: {prepared.endpoint} returned no tool call in {requests} replies "
        f"({len(rows)} attempts, {used} tool protocol): no attempt could use a tool or give "
        f"a final answer; {hint}")


def outcomes_of(prepared: PreparedAgentRun,
                rows: dict[str, dict[str, Any]]) -> list[AttemptOutcome]:
    """Every (task, attempt) of the run, in task order, with what grading needs."""
    out = prepared.settings.output_dir
    outcomes = []
    for task in prepared.tasks:
        for index in range(prepared.settings.repeats):
            row = rows.get(attempt_key(prepared, task, index))
            if row is None:
                outcomes.append(AttemptOutcome(task, index, "not_run", None))
                continue
            if cut_unscored(prepared, row):  # --on-truncation error: not graded
                outcomes.append(AttemptOutcome(task, index, "truncated", None))
                continue
            messages, fmt = None, "openai"
            if task.family.grader == "exec" and row.get("final_answer") is not None:
                messages, fmt = read_trajectory(out / str(row["trajectory_file"]))
            outcomes.append(AttemptOutcome(task, index, str(row["status"]),
                                           row.get("final_answer"), messages, fmt))
    return outcomes




async def execute(settings: HdrSettings, *, backend: ChatBackend | None = None,
                  judge_backend: ChatBackend | None = None, search: SearchBackend | None = None,
                  console: Console | None = None, warn: Console | None = None,
                  rerun: str = REFUSE) -> HdrRunResult:
    """Run (or resume) the agent on every task and attempt, then grade and score.

    The run directory is held for the whole run and never holds an input
    (:func:`hopscore.files.outputs.claim`). Attempts of other settings already there are handled by
    ``rerun`` (:mod:`hopscore.files.reruns`: refused by default, naming the settings that differ;
    the judge's rows likewise). Ctrl-C keeps every finished attempt and verdict, marks
    config.json "interrupted" and raises :class:`~hopscore.errors.Interrupted`.
    """
    with claim(output_dir(settings.output_dir, "--output-dir", writes=run_writes(
            settings.repeats), create_parents=True), inputs=settings.inputs()):
        prepared = prepare(settings, search)
        return await _execute(prepared, backend, judge_backend, console, warn, rerun)


async def _execute(prepared: PreparedAgentRun, backend: ChatBackend | None,
                   judge_backend: ChatBackend | None, console: Console | None,
                   warn: Console | None, rerun: str) -> HdrRunResult:
    settings = prepared.settings
    out = settings.output_dir
    if warn is not None:
        printer = warn
        prepared.protocol.warn = lambda text: printer.print(
            text, style="yellow", markup=False, highlight=False, soft_wrap=True)
        for db, kb in prepared.knowledge.items():
            if kb is None:
                warn.print(f"note: no knowledge base for database {db}; its tasks get no "
                           "knowledge tools", markup=False, highlight=False)
    items = [(task, i) for task in prepared.tasks for i in range(settings.repeats)]
    job = Job(path=out / SAMPLES_FILE, items=items,
              keys=[attempt_key(prepared, task, i) for task, i in items], key_of=run_key_of,
              is_done=is_done, what="attempts", description=f"{agent_key()} {prepared.spec}",
              stale="attempts made with other settings or tasks; this run replaces them",
              saved=f"attempts are saved in {out / SAMPLES_FILE} (config.json says interrupted)")
    keys = job.keys
    log = open_results(job, warn=warn, rerun=rerun,
                       differences=lambda rows: run_differences(prepared),
                       set_aside=lambda row: set_trajectory_aside(out, row))
    local = prepared.spec.is_local
    if job.pending(log):  # before the first batch
        await check_endpoints(prepared, backend, judge_backend, warn)
    prepared.protocol.previous = previous_protocol(out)
    factory = HdrWork(settings)
    with SqlExecutor(workers=min(2, max(1, os.cpu_count() or 1))) as executor:
        if settings.executor == "ray":
            if local:
                raise HopscoreError("local/smollm2 runs in this process; leave --executor ray "
                                    "out")
            execution = await ray_execution(
                factory, limits={prepared.endpoint: settings.concurrency},
                per_worker=settings.concurrency, workers=settings.ray_workers)
        else:
            built = await factory.build(None, prepared=prepared, backend=backend,
                                        executor=executor, warn=warn)
            execution = local_execution(built, await agents_at_once(prepared, warn))
        # the conversations are written here; the attempts start 5 ms apart, whatever the engine
        execution = replace(execution, work=writing_trajectories(out, execution.work),
                            start_interval=0.005)
        write_config(prepared, status="running")  # once the model could be loaded

        def interrupted() -> None:
            executor.terminate()  # a run_sql in the middle of a query is killed, not awaited
            write_config(prepared, status="interrupted", rows=log.latest(keys),
                         stats=execution.stats())

        finished = await run_rows(job, log, execution, console=console, on_stop=interrupted)
        outcome, stats = finished.outcome, finished.stats
        rows = log.latest(keys)
        note_no_tool_calls(prepared, rows)
        if outcome.aborted is not None:
            summary = write_config(prepared, status="aborted", rows=rows, outcome=outcome,
                                   stats=stats)
            return HdrRunResult(prepared, outcome, stats, None, None, None, summary)
        try:
            return await finish(prepared, rows, outcome, stats, executor,
                                judge_backend=judge_backend, console=console, warn=warn,
                                rerun=rerun)
        except (asyncio.CancelledError, KeyboardInterrupt, Interrupted, EndpointDown) as stopped:
            executor.terminate()
            write_config(prepared, status="interrupted", rows=rows, outcome=outcome,
                         stats=stats)
            if isinstance(stopped, EndpointDown):  # the judge's endpoint stayed down
                raise EndpointDown(stopped.url, f"{stopped.cause}; all {len(rows)} finished "
                                   "attempts are kept (config.json says interrupted); rerun "
                                   "the same command to finish grading", stopped.seconds
                                   ) from None
            raise Interrupted(
                f"grading was interrupted; all {len(rows)} finished attempts are saved in "
                f"{out / SAMPLES_FILE} and the verdicts so far beside them (config.json says "
                "interrupted); rerun the same command to finish grading") from None


async def finish(prepared: PreparedAgentRun, rows: dict[str, dict[str, Any]], outcome: BatchOutcome,
                 stats: EngineStats, executor: SqlExecutor, *,
                 judge_backend: ChatBackend | None = None, console: Console | None = None,
                 warn: Console | None = None, rerun: str = REFUSE) -> HdrRunResult:
    """After the attempts (``rows`` by attempt key): the submission files, grading, metrics and
    config.json (also what ``hopscore merge`` runs on the merged attempts)."""
    settings = prepared.settings
    write_predictions(prepared, rows, attempt_key)
    if not settings.grade:
        summary = write_config(prepared, status="ungraded", rows=rows, outcome=outcome,
                               stats=stats)
        return HdrRunResult(prepared, outcome, stats, None, None, None, summary)
    options = GradeOptions(
        match=MatchOptions(db_root=settings.db_root, db_template=settings.db_template,
                           timeout_s=settings.sql_timeout, compare=settings.compare),
        judge=judge_config(settings), judge_backend=judge_backend, rerun=rerun)
    grades = await grade(outcomes_of(prepared, rows), settings.repeats, settings.output_dir,
                         options, executor, console=console, warn=warn)
    report, metrics, summary = finish_metrics(prepared, rows, grades, attempt_key)
    status = "complete" if not summary["problems"] else "incomplete"
    write_config(prepared, status=status, rows=rows, outcome=outcome, stats=stats,
                 grades=grades)
    return HdrRunResult(prepared, outcome, stats, grades, report, metrics, summary)


def run(settings: HdrSettings, **kwargs: Any) -> HdrRunResult:
    return run_sync(execute(settings, **kwargs))
