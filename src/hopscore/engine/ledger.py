"""The usage ledger: what a row, a run or a command spent, by role.

A row's ``usage`` block maps a role (``"model"``, ``"judge"``, ``"tool:NAME"``) to a
:class:`Tally`: the prompt, completion, reasoning and cached tokens its replies reported, the
requests actually sent for it (every attempt, retries included; 0 for a reply answered from the
response cache), the retries among them, and the replies that came from the cache. Reasoning
tokens are part of the completion tokens and cached tokens part of the prompt tokens, as the
endpoints report them (:class:`hopscore.engine.types.Usage`).

A reply answered from the cache keeps the tokens it reported when it was first produced: the
ledger says what the answers cost, ``cache_hits`` how many of them were not sent this time
(:func:`Tally.sent` leaves them out, as the budgets count).

The one place tokens are summed: a row's block from the engine's call records
(:func:`of_calls`), a run's, a benchmark's or a strategy's from its rows (:func:`total`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: the token counts of a tally, as the endpoints name them
TOKENS = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cached_tokens")
#: every count of a tally, in the order it is written
FIELDS = (*TOKENS, "requests", "retries", "cache_hits")
#: the row field holding the ledger
USAGE = "usage"
MODEL = "model"
JUDGE = "judge"
#: the suffix of a role's replies that came from a provider's batch (``--batch``)
BATCH_SUFFIX = ":batch"


def tool_role(name: str) -> str:
    """The role of the agent tool ``name`` (``tool:sql``)."""
    return f"tool:{name}"


@dataclass(slots=True)
class Tally:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    requests: int = 0
    retries: int = 0
    cache_hits: int = 0

    def add(self, other: Tally) -> Tally:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens
        self.requests += other.requests
        self.retries += other.retries
        self.cache_hits += other.cache_hits
        return self

    def add_call(self, call: Mapping[str, Any]) -> Tally:
        """Count one call record (:meth:`hopscore.engine.types.CallResult.to_json`)."""
        for name in TOKENS:
            self.__setattr__(name, getattr(self, name) + _int(call.get(name)))
        attempts = call.get("attempts")
        sent = len(attempts) if isinstance(attempts, list) else 0
        self.requests += sent
        self.retries += max(0, sent - 1)
        self.cache_hits += bool(call.get("cached"))
        return self

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in FIELDS}

    @staticmethod
    def from_json(value: Any) -> Tally:
        if not isinstance(value, Mapping):
            return Tally()
        get = value.get
        return Tally(_int(get("prompt_tokens")), _int(get("completion_tokens")),
                     _int(get("reasoning_tokens")), _int(get("cached_tokens")),
                     _int(get("requests")), _int(get("retries")), _int(get("cache_hits")))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def of_calls(calls: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """One role's tally of a row, from the records of its calls."""
    tally = Tally()
    for call in calls:
        tally.add_call(call)
    return tally.to_json()


def block(role: str, calls: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """A row's ``usage`` block with one role; the replies a provider's batch gave
    (``--batch``) under that role's :func:`batch_role`, as they are priced apart."""
    calls = list(calls)
    batched = [call for call in calls if call.get("batched")]
    sent = [call for call in calls if not call.get("batched")]
    out = {role: of_calls(sent)} if sent or not batched else {}
    if batched:
        out[batch_role(role)] = of_calls(batched)
    return out


def batch_role(role: str) -> str:
    """The role of ``role``'s replies that came from a provider's batch (``judge:batch``)."""
    return f"{role}{BATCH_SUFFIX}"


def base_role(role: str) -> tuple[str, bool]:
    """``(role, batched)`` of a ledger role: ``judge:batch`` -> ``("judge", True)``."""
    if role.endswith(BATCH_SUFFIX):
        return role[: -len(BATCH_SUFFIX)], True
    return role, False


def row_usage(row: Mapping[str, Any] | None, field: str = USAGE) -> dict[str, Tally]:
    """The tallies of a row's ``usage`` block, by role (none for a row without one)."""
    found = None if row is None else row.get(field)
    if not isinstance(found, Mapping):
        return {}
    return {str(role): Tally.from_json(value) for role, value in found.items()}


def total(blocks: Iterable[Mapping[str, Tally]]) -> dict[str, Tally]:
    """The sum of several rows' (or runs') tallies, by role, roles in first-seen order."""
    out: dict[str, Tally] = {}
    for usage in blocks:
        for role, tally in usage.items():
            out.setdefault(role, Tally()).add(tally)
    return out


def rows_total(rows: Iterable[Mapping[str, Any] | None], field: str = USAGE
               ) -> dict[str, dict[str, int]]:
    """The ledger of a set of rows as JSON, by role, with ``"total"`` over the roles."""
    return to_json(total(row_usage(row, field) for row in rows))


def to_json(usage: Mapping[str, Tally]) -> dict[str, dict[str, int]]:
    """A ledger as JSON, with ``"total"`` (every role summed) last when there are roles."""
    out = {role: tally.to_json() for role, tally in usage.items() if role != "total"}
    if out:
        every = Tally()
        for role, tally in usage.items():
            if role != "total":
                every.add(tally)
        out["total"] = every.to_json()
    return out


def from_json(value: Any) -> dict[str, Tally]:
    """A ledger read back from JSON (a summary's ``usage``), ``"total"`` left out."""
    if not isinstance(value, Mapping):
        return {}
    return {str(role): Tally.from_json(tally) for role, tally in value.items()
            if role != "total"}


def table_rows(usage: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, value) rows of a ledger (as JSON) for a summary table, by role: tokens, the
    reasoning and cached ones among them (when there are any), requests; none when empty."""
    out: list[tuple[str, str]] = []
    for role in usage:
        if role == "total":
            continue
        t = Tally.from_json(usage[role])
        if t.total_tokens or not role.startswith("tool:"):
            out.append((f"{role} tokens (prompt + completion)",
                        f"{t.prompt_tokens} + {t.completion_tokens}"))
        if t.reasoning_tokens or t.cached_tokens:
            out.append((f"{role} tokens reasoning / cached",
                        f"{t.reasoning_tokens} / {t.cached_tokens}"))
        out.append((f"{role} requests / retries / cache hits",
                    f"{t.requests} / {t.retries} / {t.cache_hits}"))
    return out
