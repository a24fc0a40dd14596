"""The summary of a judge run (:class:`JudgeSummary`): counts over the finished output file plus
what the run did (requests, tokens, time)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(slots=True)
class JudgeSummary:
    """Counts over the finished output file plus what this run did."""

    rows: int = 0
    judged: int = 0
    correct: int = 0
    parse_failures: int = 0
    empty_responses: int = 0
    invalid_inputs: int = 0
    errors: int = 0
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    #: each failure class with its first message (:func:`hopscore.engine.failures.tally`)
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    differs_from_reference: int = 0
    conflicting_verdicts: int = 0
    #: replies cut at max_tokens (any status), and those kept out of the accuracy for it
    truncated: int = 0
    truncated_unscored: int = 0
    #: rows whose reply had no verdict that this run asked again (--retry-unparsed)
    retried_unparsed: int = 0
    already_done: int = 0
    processed: int = 0
    requests_sent: int = 0
    retries: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    #: the usage ledger of the output file's rows, by role (:mod:`hopscore.engine.ledger`)
    usage: dict[str, Any] = field(default_factory=dict)
    #: what the rows cost at the dated list prices (:func:`hopscore.engine.prices.ledger_cost`)
    cost: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    model: str = ""
    prompt_sha256: str = ""
    #: the judge preset (``builtin``, ``BENCHMARK/NAME``; None: a user's prompt file alone)
    #: and where the template came from
    preset: str | None = "builtin"
    prompt_source: str = ""
    aborted: str | None = None
    #: ``--batch``: the replies that came from the provider's batches, and those batches
    answered_by_batch: int = 0
    batch_ids: list[str] = field(default_factory=list)
    #: where the rows ran (``--executor ray``: the pool's counts)
    executor: dict[str, Any] = field(default_factory=lambda: {"executor": "local"})

    @property
    def accuracy(self) -> float:
        """Correct over ALL rows: parse failures, empty responses and errors count as wrong."""
        return self.correct / self.rows if self.rows else 0.0

    @property
    def accuracy_judged(self) -> float | None:
        """Correct over rows with a verdict (parse failures, errors and truncated rows under
        --on-truncation error left out)."""
        decided = self.judged - self.parse_failures + self.empty_responses
        return self.correct / decided if decided else None

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["accuracy"] = self.accuracy
        out["accuracy_judged"] = self.accuracy_judged
        return out
