"""Judge a JSONL file of (question, response, correct_answer) rows on the request engine."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from rich.console import Console

from hopscore.defaults import DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS
from hopscore.distributed import Built, Gate, local_execution, ray_execution
from hopscore.engine import (
    BatchOutcome,
    CallFailure,
    ChatBackend,
    ChatEngine,
    ChatRequest,
    EngineStats,
    ResultLog,
    RowResult,
    batch_workers,
    run_sync,
    warn_printer,
)
from hopscore.engine.batch_mode import BatchMode, Prefilled, batched_backend
from hopscore.engine.failures import tally
from hopscore.engine.ledger import JUDGE, Tally, row_usage
from hopscore.engine.ledger import to_json as ledger_json
from hopscore.engine.ledger import total as ledger_total
from hopscore.engine.preflight import preflight
from hopscore.engine.prices import ledger_cost
from hopscore.engine.prices import load as load_prices
from hopscore.engine.providers import make_backend as provider_backend
from hopscore.engine.reasoning import reasoning_of, split_reply, with_reasoning
from hopscore.engine.types import API_ERROR
from hopscore.errors import HopscoreError
from hopscore.files.io import bulk_load
from hopscore.files.output_specs import Input
from hopscore.files.outputs import claim, output_file
from hopscore.files.reruns import REFUSE
from hopscore.files.shard import Shard, clear_sidecar, write_sidecar
from hopscore.jobs import Job, chat_engine, open_results, run_rows
from hopscore.judge.judge_config import ON_TRUNCATION, TEMPERATURE, JudgeConfig
from hopscore.judge.judge_summary import JudgeSummary
from hopscore.judge.parse import provider_error
from hopscore.judge.rows import (
    EMPTY_RESPONSE,
    ERROR,
    INVALID_INPUT,
    JUDGED,
    META_FIELD,
    TRUNCATED,
    JudgeItem,
    JudgeMeta,
    build_row,
    cap_row,
    capped_line,
    done_check,
    item_key,
    key_of,
    load_items,
    shard_key,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack



def make_backend(config: JudgeConfig) -> ChatBackend:
    """The judge's backend: Claude's Messages API for ``anthropic/NAME`` (the key: the judge's
    variable, else ``ANTHROPIC_API_KEY``), else the OpenAI-compatible endpoint; the local model
    only when the command passes its backend in (refused here)."""
    return provider_backend(config.target(), config.concurrency)


def judge_request(config: JudgeConfig, item: JudgeItem, retry: int = 0) -> ChatRequest:
    """The request that asks the judge about ``item`` (``retry``: the how-manieth ask)."""
    # the judge never reads the model's thinking: only the answer after it
    prompt = config.prompt.render(item.question, judged_text(item), item.correct_answer)
    return with_reasoning(ChatRequest(
        model=config.model_name,
        messages=[{"role": "user", "content": prompt}],
        temperature=TEMPERATURE,
        max_tokens=config.max_tokens,
        # a retry of an unparsed reply must not get the cached reply back
        cache_tag=f"retry-unparsed:{retry}" if retry else "",
    ), config.reasoning, config.provider)


def judged_text(item: JudgeItem) -> str:
    """The response the judge reads: the answer after any thinking (``<think>`` blocks); a
    response whose thinking never closed has none."""
    return split_reply(item.response).answer


def needs_call(item: JudgeItem) -> bool:
    """Whether judging ``item`` asks the judge (an invalid or empty one is graded without)."""
    return item.problem() is None and bool(judged_text(item).strip())


class _Judge:
    def __init__(self, engine: ChatEngine, config: JudgeConfig, meta: JudgeMeta,
                 retries: dict[str, int]) -> None:
        self.engine = engine
        self.config = config
        self.meta = meta
        self.retries = retries

    def request(self, item: JudgeItem, retry: int = 0) -> ChatRequest:
        return judge_request(self.config, item, retry)

    async def __call__(self, item: JudgeItem, key: str) -> RowResult:
        problem = item.problem()
        if problem is not None:
            return RowResult(build_row(item, key, self.meta, INVALID_INPUT, error=problem))
        if not judged_text(item).strip():
            return RowResult(build_row(item, key, self.meta, EMPTY_RESPONSE, raw_output=""))
        retry = self.retries.get(key, 0)
        call = await self.engine.complete(self.request(item, retry))
        if call.response is None:
            assert call.failure is not None
            row = build_row(item, key, self.meta, ERROR, call=call, error=str(call.failure))
            return RowResult(self._retries(row, retry), done=False, failure=call.failure)
        raw = (call.response.content or "").strip()
        verdict = self.config.prompt.read(raw)
        notice = None if verdict.parse_ok else provider_error(raw)
        if notice is not None:  # an error notice sent as a reply: a failed request
            failure = CallFailure(API_ERROR, "the judge's reply is a provider's error message, "
                                  f"not a verdict: {notice!r}", call.response.status)
            row = build_row(item, key, self.meta, ERROR, raw_output=raw, call=call,
                            error=str(failure))
            # asked anew by the next run, not answered from the cache
            row[META_FIELD].update(error=failure.to_json(), unparsed_retries=retry + 1)
            return RowResult(row, done=False, failure=failure)
        status, error = JUDGED, None
        if call.response.finish_reason == "length" and self.config.on_truncation == "error":
            status = TRUNCATED
            error = (f"truncated: the judge's reply was cut at max_tokens "
                     f"({self.config.max_tokens}); --on-truncation error gives it no verdict")
        row = build_row(item, key, self.meta, status, verdict=verdict, raw_output=raw,
                        call=call, error=error, cap=False)
        thinking = reasoning_of(call.response.raw)
        if thinking is not None:  # the judge's own reasoning, kept beside its reply
            capped = cap_row(row, self.meta.max_cell_chars, self.meta.max_row_bytes)
            row = cap_row({**capped, "raw_judge_reasoning": thinking}, self.meta.max_cell_chars,
                          self.meta.max_row_bytes)
            return RowResult(self._retries(row, retry))
        row, line = capped_line(row, self.meta)  # the row's line, made once
        if retry:
            return RowResult(self._retries(row, retry))
        return RowResult(row, line=line)

    @staticmethod
    def _retries(row: dict[str, Any], retry: int) -> dict[str, Any]:
        if retry:
            row[META_FIELD]["unparsed_retries"] = retry
        return row


class JudgeRunOptions(TypedDict, total=False):
    """How a judge job runs, beside its :class:`JudgeConfig` (every key optional)."""

    #: the judge's client; None: one made from the configuration, its endpoint checked first
    backend: ChatBackend | None
    #: where the progress bar goes, and where notes and warnings go
    console: Console | None
    warn: Console | None
    #: what happens to rows of other settings (:mod:`hopscore.files.reruns`; default: refuse)
    rerun: str
    #: ``"local"`` (default) or ``"ray"``, and how many Ray workers (None: as many as fit)
    executor: str
    ray_workers: int | None
    #: ``--batch``: the requests go through the provider's batch API first
    batch: BatchMode | None


async def judge_file(input_path: Path, output_path: Path, config: JudgeConfig, *,
                     shard: Shard | None = None,
                     **options: Unpack[JudgeRunOptions]) -> JudgeSummary:
    """Judge every row of ``input_path`` (``shard``: the rows of that shard) into
    ``output_path``, resuming what is already there. The output is held for the whole run
    and is never the input (:func:`hopscore.files.outputs.claim`)."""
    with claim(output_file(output_path, "--output"), inputs=[Input(input_path, "--input")]):
        items = load_items(input_path)
        if shard is None:
            clear_sidecar(output_path)
        else:
            total = len(items)
            items = [item for item in items if shard.owns(shard_key(item))]
            backend = options.get("backend")
            endpoint = backend.endpoint if backend is not None else config.endpoint()
            write_sidecar(output_path, command="judge", shard=shard,
                          fingerprint=config.fingerprint(endpoint), input_path=input_path,
                          rows=len(items), rows_total=total, settings=config.describe(endpoint))
        return await judge_items(items, output_path, config, **options)


async def judge_items(items: list[JudgeItem], output_path: Path, config: JudgeConfig, *,
                      other_inputs: str | None = None,
                      **options: Unpack[JudgeRunOptions]) -> JudgeSummary:
    """Judge ``items`` into ``output_path`` (resumable), then summarize the finished file;
    ``executor="ray"``: on Ray workers (the rows are still written here).

    Rows of another judge configuration or other input rows already in the file are handled by
    ``rerun`` (:mod:`hopscore.files.reruns`: refused by default, naming what differs; rows of the
    same configuration for other inputs by ``other_inputs`` when given). Ctrl-C keeps
    every finished row and raises :class:`~hopscore.errors.Interrupted`.
    """
    if config.on_truncation not in ON_TRUNCATION:
        raise HopscoreError(f"--on-truncation must be one of {', '.join(ON_TRUNCATION)}")
    if options.get("batch") is not None and options.get("executor", "local") == "ray":
        raise HopscoreError("--batch and --executor ray do not go together: a batch is one job "
                            "at the provider, sent and collected from this machine")
    with claim(output_file(output_path, "--output")):
        return await _judge_items(items, output_path, config, other_inputs, options)


async def _judge_items(items: list[JudgeItem], output_path: Path, config: JudgeConfig,
                       other_inputs: str | None, options: JudgeRunOptions) -> JudgeSummary:
    given = options.get("backend")
    console, warn = options.get("console"), options.get("warn")
    probe = given is None
    backend = given or make_backend(config)
    meta = JudgeMeta(config.model, backend.endpoint, config.prompt.sha256, config.prompt.source,
                     max_tokens=config.max_tokens, preset=config.prompt.preset,
                     four_field=config.prompt.reader is None, max_cell_chars=config.max_cell_chars,
                     max_row_bytes=config.max_row_bytes)
    fingerprint = config.fingerprint(backend.endpoint)
    job = Job(path=output_path, items=items, keys=[item_key(item, fingerprint) for item in items],
              key_of=key_of, is_done=done_check(on_truncation=config.on_truncation,
                                                retry_unparsed=config.retry_unparsed),
              what="judge rows", description="judging", saved=f"rows are judged in {output_path}",
              stale="rows judged with another model, prompt or input; they are replaced by this "
                    "run",
              down_hint="; rerun the same command to judge the rest",
              interrupted_hint="; rerun the same command to judge the rest (finished rows are "
                               "kept)")
    keys = job.keys
    log = open_results(job, warn=warn, rerun=options.get("rerun", REFUSE),
                       other_inputs=other_inputs,
                       differences=lambda rows: judge_differences(rows, meta))
    retries, retried = retry_numbers(log, keys, config.retry_unparsed)
    if probe and job.pending(log):  # before the first batch
        await preflight(config.target(), cache_dir=config.cache_dir, warn=warn_printer(warn),
                        what="the judge")
    batch = options.get("batch")
    if batch is not None and job.pending(log):
        backend = await _batched(backend, config, batch, output_path, warn,
                                 [judge_request(config, item, retries.get(key, 0))
                                  for item, key in zip(items, keys, strict=True)
                                  if not log.is_done(key) and needs_call(item)])
    factory = JudgeWork(config, meta, retries)
    if options.get("executor", "local") == "ray":
        driver = backend

        async def build_driver(gate: Gate) -> Built:
            return await factory.build(gate, backend=driver, warn=warn)

        execution = await ray_execution(factory, limits={backend.endpoint: config.concurrency},
                                        per_worker=config.concurrency,
                                        workers=options.get("ray_workers"),
                                        local=build_driver,
                                        local_workers=batch_workers(config.concurrency,
                                                                   declared=False),
                                        rows=sum(not log.is_done(key) for key in keys))
    else:
        execution = local_execution(await factory.build(None, backend=backend, warn=warn),
                                    batch_workers(config.concurrency))
    finished = await run_rows(job, log, execution, console=console)
    summary = summarize(log, finished.outcome, finished.stats, config, keys)
    summary.retried_unparsed = retried
    if isinstance(backend, Prefilled):
        summary.answered_by_batch = backend.from_batch
        summary.batch_ids = list(backend.batch_ids)
    summary.executor = finished.executor
    return summary


async def _batched(backend: ChatBackend, config: JudgeConfig, mode: BatchMode,
                   output_path: Path, warn: Console | None,
                   requests: list[ChatRequest]) -> ChatBackend:
    """``backend`` answering ``requests`` from the provider's batches first (``--batch``)."""

    def say(line: str) -> None:
        if warn is not None:
            warn.print(f"judge: {line}", markup=False, highlight=False, soft_wrap=True)

    return await batched_backend(backend, config.target(), requests, output_path, mode,
                                 cache_dir=config.cache_dir, say=say)


def retry_numbers(log: ResultLog, keys: list[str], retry_unparsed: bool
                  ) -> tuple[dict[str, int], int]:
    """How many times each stored row's reply was asked again (``--retry-unparsed``), by key,
    as the next ask numbers it: n + 1 for a reply that gave no verdict under
    ``retry_unparsed``, n for a row read again for another reason; and how many of the rows
    are asked again for a missing verdict."""
    numbers: dict[str, int] = {}
    retried = 0
    stored = log.keys()
    for key in keys:
        if key not in stored or log.is_done(key):
            continue
        row = log.read(key)
        meta = row.get(META_FIELD) or {}
        previous = int(meta.get("unparsed_retries") or 0)
        unparsed = meta.get("status") in (JUDGED, TRUNCATED) and not row.get("parse_ok")
        if retry_unparsed and unparsed:
            retried += 1
            previous += 1
        if previous:
            numbers[key] = previous
    return numbers, retried


#: What a judge row records about its judge, as the settings a refusal names.
JUDGE_SETTINGS = ("model", "endpoint", "prompt_sha256", "preset", "max_tokens")


def judge_differences(rows: list[dict[str, Any]], meta: JudgeMeta) -> list[str]:
    """``setting: old -> new`` for the judge settings of ``rows`` that differ from ``meta``."""
    lines = []
    for name in JUDGE_SETTINGS:
        new = getattr(meta, name)
        old = {json.dumps((r.get(META_FIELD) or {}).get(name, new)) for r in rows}
        old.discard(json.dumps(new))
        if old:
            before = ", ".join(sorted(v.strip('"') for v in old))
            lines.append(f"{name}: {before} -> {json.dumps(new).strip(chr(34))}")
    return lines


@dataclass(frozen=True, slots=True)
class JudgeWork:
    """The judge's work (:class:`hopscore.distributed.WorkFactory`): the rows travel to the
    workers; each builds its own engine. ``retries``: the ask number of rows asked again
    (:func:`retry_numbers`), so that a retry is never answered from the cache."""

    config: JudgeConfig
    meta: JudgeMeta
    retries: dict[str, int] = field(default_factory=dict)
    ships_items: ClassVar[bool] = True

    async def build(self, gate: Gate | None, *, backend: ChatBackend | None = None,
                    warn: Console | None = None) -> Built:
        config = self.config
        engine = chat_engine(backend or make_backend(config), gate, config,
                             concurrency=config.concurrency, retry=config.retry, warn=warn)
        return Built(_Judge(engine, config, self.meta, self.retries), lambda: engine.stats,
                     engine.aclose, engine.start_interval)

    def lost_row(self, item: JudgeItem, key: str, failure: CallFailure) -> dict[str, Any]:
        return build_row(item, key, self.meta, ERROR, error=str(failure))


def summarize(
    log: ResultLog, outcome: BatchOutcome, stats: EngineStats, config: JudgeConfig,
    keys: list[str],
) -> JudgeSummary:
    summary = JudgeSummary(
        already_done=outcome.already_done, processed=outcome.processed,
        requests_sent=stats.requests_sent, retries=stats.retries, cache_hits=stats.cache_hits,
        prompt_tokens=stats.prompt_tokens, completion_tokens=stats.completion_tokens,
        reasoning_tokens=stats.reasoning_tokens, cached_tokens=stats.cached_tokens,
        wall_s=outcome.wall_s, model=config.model, prompt_sha256=config.prompt.sha256,
        preset=config.prompt.preset, prompt_source=config.prompt.source,
        aborted=None if outcome.aborted is None else str(outcome.aborted),
    )
    kinds: Counter[str] = Counter()
    failed: list[dict[str, Any]] = []
    usage: list[dict[str, Tally]] = []
    with bulk_load():  # every row read back at once: no reference cycles
        latest = log.latest(keys)
    for row in latest.values():  # after an abort the file may hold superseded rows
        meta = row["judge"]
        usage.append(row_usage(meta))
        status = meta.get("status")
        summary.rows += 1
        summary.truncated += bool(meta.get("truncated"))
        if status == JUDGED:
            summary.judged += 1
            summary.parse_failures += not row.get("parse_ok")
            summary.differs_from_reference += bool(meta.get("differs_from_reference"))
            summary.conflicting_verdicts += bool(meta.get("conflicting_verdicts"))
        elif status == TRUNCATED:
            summary.truncated_unscored += 1
        elif status == EMPTY_RESPONSE:
            summary.empty_responses += 1
        elif status == INVALID_INPUT:
            summary.invalid_inputs += 1
        elif status == ERROR:
            summary.errors += 1
            error = meta.get("error")
            kinds[error.get("kind", "?") if isinstance(error, dict) else "?"] += 1
            failed.append(error if isinstance(error, dict) else
                          {"kind": "?", "message": str(row.get("error") or "")})
        summary.correct += row.get("correct") is True
    summary.errors_by_kind = dict(kinds)
    summary.failures = tally(failed)
    summed = ledger_total(usage)
    summary.usage = ledger_json(summed)
    summary.cost = ledger_cost(summed, {JUDGE: config.model}, load_prices())
    return summary


def run_judge(
    input_path: Path, output_path: Path, config: JudgeConfig, **kwargs: Any
) -> JudgeSummary:
    """Synchronous wrapper for :func:`judge_file`."""
    return run_sync(judge_file(input_path, output_path, config, **kwargs))
