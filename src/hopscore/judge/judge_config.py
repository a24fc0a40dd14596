"""What a judge is and how it is asked (:class:`JudgeConfig`): the model, its endpoint and key,
the prompt, the budgets and caps; and the fingerprint every judged row's resume key holds."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.defaults import DEFAULT_MAX_OUTAGE, DEFAULT_MAX_TOKENS
from hopscore.engine import RetryPolicy, canonical_json, endpoint_of, sha256_text
from hopscore.engine.providers import NO_KEY, ModelSpec, ModelTarget
from hopscore.engine.reasoning import ReasoningSettings
from hopscore.judge.prompt import JudgePrompt
from hopscore.judge.rows import MAX_CELL_CHARS, MAX_ROW_BYTES

#: --on-truncation: score a cut reply's verdict, or give it none
ON_TRUNCATION = ("score", "error")

#: The reference's temperature and completion budget.
TEMPERATURE = 0.0


def split_model(model: str) -> tuple[str, str]:
    """(provider, name sent) of a judge's ``--model``, read as every command reads
    ``--model`` (:class:`hopscore.engine.providers.ModelSpec`): ``anthropic/NAME`` is Claude
    through the Messages API, ``local/smollm2`` the model on this machine, ``openai/NAME`` and
    any other name (``Qwen/Qwen3-8B`` included) NAME on the OpenAI-compatible endpoint."""
    spec = ModelSpec.parse(model)
    return spec.provider, spec.name


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeConfig:
    model: str
    base_url: str | None = None
    api_key: str | None = None
    prompt: JudgePrompt = field(default_factory=JudgePrompt.builtin)
    #: None: do not send max_tokens (some reasoning-model endpoints reject it)
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    concurrency: int = 8
    timeout: float = 120.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    #: None: no response cache
    cache_dir: Path | None = None
    #: caps of each output row: characters of one text field, bytes of the JSON line
    max_cell_chars: int = MAX_CELL_CHARS
    max_row_bytes: int = MAX_ROW_BYTES
    #: fit the requests in flight to the endpoint (up to concurrency), or keep concurrency
    adaptive: bool = True
    #: a reply cut at max_tokens (finish_reason "length"): "score" its verdict, or "error"
    #: (status "truncated", no verdict, out of the accuracy); not part of the rows' keys
    on_truncation: str = "score"
    #: ask again, past the cache, for rows whose reply gave no verdict
    retry_unparsed: bool = False
    #: --reasoning-effort / --thinking-budget (None: none sent; out of the fingerprint then)
    reasoning: ReasoningSettings | None = None
    #: the variable api_key was read from (None: none), for messages
    key_env: str | None = None
    #: seconds the requests wait for an endpoint that stopped answering (--max-outage)
    max_outage: float = DEFAULT_MAX_OUTAGE
    #: budgets (engine/budget.py); not part of the rows' keys
    max_cost: float | None = None
    max_tokens_total: int | None = None
    max_time: float | None = None
    #: --on-budget: the requests in flight finish, or are abandoned, once a budget is reached
    on_budget: str = "finish"

    @property
    def provider(self) -> str:
        """``openai`` (any OpenAI-compatible endpoint) or ``anthropic`` (the Messages API)."""
        return split_model(self.model)[0]

    @property
    def model_name(self) -> str:
        """The model name sent in every request."""
        return split_model(self.model)[1]

    def resolved_base_url(self) -> str | None:
        """The endpoint's base URL: ``base_url``, else (Anthropic) ``ANTHROPIC_BASE_URL``."""
        if self.provider == "anthropic":
            return self.base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        return self.base_url

    def target(self) -> ModelTarget:
        """Where the judge's requests go, with which key (the key already checked)."""
        key = self.api_key or NO_KEY
        if self.provider == "anthropic" and key == NO_KEY:
            key = os.environ.get("ANTHROPIC_API_KEY") or NO_KEY
        return ModelTarget(ModelSpec.parse(self.model), self.resolved_base_url(), key,
                           self.key_env)

    def endpoint(self) -> str:
        """The endpoint the judge's backend reports (part of cache and resume keys)."""
        if self.provider == "local":
            return self.target().endpoint
        if self.provider == "anthropic":
            from hopscore.engine.anthropic import anthropic_endpoint

            return anthropic_endpoint(self.resolved_base_url())
        return endpoint_of(self.base_url)

    def describe(self, endpoint: str) -> dict[str, Any]:
        """Everything that changes what the judge is asked, and (a benchmark's preset) how its
        replies are read."""
        out: dict[str, Any] = {"model": self.model, "endpoint": endpoint,
                               "prompt_sha256": self.prompt.sha256,
                               "temperature": TEMPERATURE, "max_tokens": self.max_tokens}
        if self.prompt.reader is not None:
            out.update(preset=self.prompt.preset, verdict_reader=self.prompt.reader)
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning.to_json()
        return out

    def fingerprint(self, endpoint: str) -> str:
        """Everything that changes what the judge is asked; part of every row's resume key."""
        return sha256_text(canonical_json(self.describe(endpoint)))
