"""``--batch``: a job's requests answered through the provider's batch API, resumably.

Before a job runs its rows, :func:`answer_in_batches` sends every request the rows will make
as one batch (more only past the provider's size limits), polls it, and reads the answers
back by ``custom_id``: the request's response-cache key (:func:`custom_id`), so the same
request always has the same id. Requests already in the response cache are not batched. The
rows then run as usual through a :class:`Prefilled` backend, which hands each request its
batch answer and sends only the others (the requests a batch failed, expired or cancelled)
the normal way, with the usual retries. Resume keys, the cache and the rows are the same as
without ``--batch``; only the usage ledger counts a batch's answers apart, under the role
``<role>:batch`` (``judge:batch``, ``model:batch``), which is priced at the batch discount.

**Resuming.** The batches a job submitted are recorded, the moment each is made, in a file
beside its results file (``<results>.batches.json``: batch id, provider, endpoint, the
custom ids it holds, its last status). A rerun after Ctrl-C, a crash or a SIGKILL while the
batch was running finds its requests recorded there and waits for that batch again instead of
submitting them anew; only requests in no recorded batch go into a new one. A request whose
recorded batch ended without answering it is sent the normal way. (Between the provider
accepting a batch and the record being written there are a few milliseconds in which a kill
would leave the batch unrecorded; the rerun then submits a second one.)
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hopscore.engine.backend import ChatBackend
from hopscore.engine.batch_api import (
    MAX_BYTES,
    MAX_REQUESTS,
    AnthropicBatches,
    BatchClient,
    BatchError,
    BatchStatus,
    OpenAIBatches,
)
from hopscore.engine.cache import cache_for
from hopscore.engine.providers import ModelTarget
from hopscore.engine.types import ChatRequest, ChatResponse
from hopscore.errors import HopscoreError, Interrupted
from hopscore.files.atomic import write_json_atomic
from hopscore.files.io import json_text

LEDGER_VERSION = 1


@dataclass(frozen=True, slots=True)
class BatchMode:
    """``--batch``: how often to ask the provider how the batch is going."""

    poll_s: float = 30.0


def custom_id(request: ChatRequest, endpoint: str) -> str:
    """The batch id of ``request`` to ``endpoint``: its response-cache key (64 hex characters,
    the most both providers allow), so equal requests get equal ids, in this run and the
    next."""
    return request.cache_key(endpoint)


def records_path(results: Path) -> Path:
    """Where the batches of the job writing ``results`` are recorded."""
    return results.with_name(results.name + ".batches.json")


def batch_client(provider: str, url: str, api_key: str) -> BatchClient:
    """The batch API of ``provider`` at ``url`` (OpenAI-compatible ``.../v1``, or Anthropic's
    root)."""
    if provider == "openai":
        return OpenAIBatches(url, api_key)
    if provider == "anthropic":
        return AnthropicBatches(url, api_key)
    raise HopscoreError(f"--batch: {provider}/... models have no batch API; batches are for "
                        "openai/... and anthropic/... models")


@dataclass(slots=True)
class BatchRecords:
    """The recorded batches of one results file."""

    path: Path
    batches: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> BatchRecords:
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HopscoreError(f"{path}: cannot read the batch records ({exc}); it records "
                                "batches still running at the provider: fix or remove it "
                                "(removing it submits those requests again)") from None
        batches = data.get("batches") if isinstance(data, dict) else None
        if not isinstance(batches, list):
            raise HopscoreError(f"{path}: not a batch record file (no 'batches' list)")
        return cls(path, [b for b in batches if isinstance(b, dict)])

    def save(self) -> None:
        write_json_atomic(self.path, {"version": LEDGER_VERSION, "batches": self.batches})

    def record(self, batch_id: str, provider: str, endpoint: str, ids: list[str]) -> None:
        self.batches.append({"id": batch_id, "provider": provider, "endpoint": endpoint,
                             "submitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                             "status": "submitted", "requests": len(ids), "custom_ids": ids})
        self.save()

    def holding(self, provider: str, endpoint: str) -> dict[str, str]:
        """custom id -> the latest recorded batch of ``provider`` at ``endpoint`` holding it."""
        found: dict[str, str] = {}
        for batch in self.batches:
            if batch.get("provider") == provider and batch.get("endpoint") == endpoint:
                for cid in batch.get("custom_ids") or ():
                    found[str(cid)] = str(batch["id"])
        return found

    def note(self, status: BatchStatus) -> None:
        for batch in self.batches:
            if batch.get("id") == status.batch_id and batch.get("status") != status.status:
                batch["status"] = status.status
                self.save()


@dataclass(slots=True)
class BatchOutcome:
    """What the batches gave: answers by custom id, and why the others have none."""

    answers: dict[str, ChatResponse] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    submitted: list[str] = field(default_factory=list)
    resumed: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = [f"{len(self.answers)} answered by batch"]
        if self.submitted:
            parts.append(f"submitted {', '.join(self.submitted)}")
        if self.resumed:
            parts.append(f"collected {', '.join(self.resumed)} (submitted by an earlier run)")
        if self.failed:
            why = Counter(reason.split(":")[0] for reason in self.failed.values())
            text = ", ".join(f"{n} {reason}" for reason, n in why.most_common(3))
            parts.append(f"{len(self.failed)} not answered ({text}): sent the normal way")
        return "; ".join(parts)


def chunks(requests: Sequence[tuple[str, ChatRequest]], provider: str
           ) -> list[list[tuple[str, ChatRequest]]]:
    """``requests`` cut into batches within ``provider``'s limits on count and bytes."""
    out: list[list[tuple[str, ChatRequest]]] = []
    size = 0
    for pair in requests:
        length = len(json_text(pair[1].messages)) + 512
        if not out or len(out[-1]) >= MAX_REQUESTS[provider] or size + length > MAX_BYTES[
                provider]:
            out.append([])
            size = 0
        out[-1].append(pair)
        size += length
    return out


async def answer_in_batches(requests: Sequence[ChatRequest], client: BatchClient,
                            endpoint: str, records: BatchRecords, *, poll_s: float,
                            say: Callable[[str], None]) -> BatchOutcome:
    """Answer ``requests`` through ``client``'s batches, collecting those already recorded in
    ``records``; poll every ``poll_s`` seconds, saying each change of status."""
    wanted = {custom_id(r, endpoint): r for r in requests}
    holding = records.holding(client.provider, endpoint)
    waiting = {holding[cid] for cid in wanted if cid in holding}
    outcome = BatchOutcome(resumed=sorted(waiting))
    fresh = [(cid, r) for cid, r in wanted.items() if cid not in holding]
    for part in chunks(fresh, client.provider) if fresh else ():
        batch_id = await client.submit(part)
        records.record(batch_id, client.provider, endpoint, [cid for cid, _ in part])
        outcome.submitted.append(batch_id)
        say(f"submitted batch {batch_id} ({len(part)} requests); its id is kept in "
            f"{records.path}, so a rerun collects it instead of submitting again")
        waiting.add(batch_id)
    try:
        final = await _poll(client, sorted(waiting), records, poll_s, say)
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise Interrupted(
            f"stopped while waiting for batch {', '.join(sorted(waiting))}: it goes on at the "
            f"provider; rerun the same command to collect it (nothing is submitted again; "
            f"its id is in {records.path})") from None
    for status in final:
        answers = await client.results(status)
        for cid, answer in answers.items():
            if cid not in wanted:
                continue
            if answer.response is not None:
                outcome.answers[cid] = answer.response
            else:
                outcome.failed[cid] = answer.error
    for cid in wanted:
        if cid not in outcome.answers and cid not in outcome.failed:
            outcome.failed[cid] = "no result: the batch ended without this request"
    return outcome


async def _poll(client: BatchClient, batch_ids: list[str], records: BatchRecords,
                poll_s: float, say: Callable[[str], None]) -> list[BatchStatus]:
    final: dict[str, BatchStatus] = {}
    last: dict[str, str] = {}
    while len(final) < len(batch_ids):
        for batch_id in batch_ids:
            if batch_id in final:
                continue
            status = await _status(client, batch_id, poll_s, say)
            line = status.describe()
            if last.get(batch_id) != line:
                say(line)
                last[batch_id] = line
                records.note(status)
            if status.final:
                final[batch_id] = status
        if len(final) < len(batch_ids):
            await asyncio.sleep(poll_s)
    return [final[b] for b in batch_ids]


async def batched_backend(live: ChatBackend, target: ModelTarget,
                          requests: Sequence[ChatRequest], results: Path, mode: BatchMode, *,
                          cache_dir: Path | None, say: Callable[[str], None]) -> Prefilled:
    """``live`` with the answers of ``requests`` collected through ``target``'s batch API
    first, recorded beside ``results``; requests in the response cache at ``cache_dir`` are
    left to it. Says what it submitted, collected and could not get."""
    endpoint = live.endpoint
    cache = cache_for(cache_dir)
    try:
        wanted = [r for r in requests if cache is None or cache.get(
            r.cache_key(endpoint), (endpoint, r.model)) is None]
    finally:
        if cache is not None:
            cache.close()
    if not wanted:
        return Prefilled(live, {}, [])
    provider = target.spec.provider
    client = batch_client(provider, target.url if provider == "anthropic" else target.endpoint,
                          target.api_key)
    try:
        outcome = await answer_in_batches(wanted, client, endpoint,
                                          BatchRecords.load(records_path(results)),
                                          poll_s=mode.poll_s, say=say)
    finally:
        await client.aclose()
    say(outcome.describe())
    return Prefilled(live, outcome.answers, wanted,
                     batch_ids=tuple(outcome.resumed + outcome.submitted))


#: looks at a batch that may fail in a row (an endpoint's passing 5xx) before the command
#: gives up, resumable
POLL_TRIES = 5


async def _status(client: BatchClient, batch_id: str, poll_s: float,
                  say: Callable[[str], None]) -> BatchStatus:
    """The batch's status; a failed look is tried again after ``poll_s`` (and longer each
    time), up to :data:`POLL_TRIES` looks: a batch runs for hours, an endpoint's bad minute
    must not end the wait."""
    for attempt in range(1, POLL_TRIES + 1):
        try:
            return await client.status(batch_id)
        except BatchError as exc:
            if attempt == POLL_TRIES:
                raise BatchError(f"{exc} ({POLL_TRIES} looks in a row failed; the batch is "
                                 "recorded: rerun the same command to collect it)") from None
            say(f"{exc}; looking again")
            await asyncio.sleep(poll_s * attempt)
    raise AssertionError("unreachable")


class Prefilled:
    """A backend that answers each request from its batch answer, once, and sends the others
    (and a request asked again) through ``live``."""

    def __init__(self, live: ChatBackend, answers: dict[str, ChatResponse],
                 wanted: Sequence[ChatRequest], *, batch_ids: tuple[str, ...] = ()) -> None:
        self.live = live
        self.batch_ids = batch_ids
        self.endpoint = live.endpoint
        self.answers = answers
        # a request made by several rows is answered once per row
        self.uses = Counter(custom_id(r, live.endpoint) for r in wanted)
        self.from_batch = 0

    def __getattr__(self, name: str) -> Any:  # probe_urls, concurrency, ...
        return getattr(self.live, name)

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        cid = custom_id(request, self.endpoint)
        answer = self.answers.get(cid)
        if answer is not None and self.uses[cid] > 0:
            self.uses[cid] -= 1
            self.from_batch += 1
            return replace(answer, batched=True)
        return await self.live.send(request, timeout)

    async def aclose(self) -> None:
        await self.live.aclose()
