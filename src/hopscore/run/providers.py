"""Model specs (``PROVIDER/NAME``) and the backend each provider uses, for model runs.

The resolver itself (specs, base URLs, keys and their checks, backends) is
:mod:`hopscore.engine.providers`, shared with the judge and the agent; this module adds what
only a model run has: the local model (``local/smollm2``, :mod:`hopscore.engine.local`), loaded in
this process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from hopscore.engine import ChatBackend, ChatEngine, ChatRequest, ChatResponse
from hopscore.engine.providers import (
    LOCAL_MODELS,
    PROVIDERS,
    ModelSpec,
    ModelTarget,
    base_url_for,
    local_backend,
    resolve,
)
from hopscore.engine.providers import make_backend as engine_backend
from hopscore.jobs import EngineSettings, RetrySettings, chat_engine, retry_policy

__all__ = ["DEFAULT_KEY_ENV", "LOCAL_MODELS", "PROVIDERS", "ModelSpec", "ModelTarget",
           "SharedBackend", "endpoint_for", "local_backend", "make_backend", "model_engine",
           "resolve", "resolve_base_url", "target_of"]

#: the --api-key-env default; an anthropic/... model reads ANTHROPIC_API_KEY when it is unset
DEFAULT_KEY_ENV = "OPENAI_API_KEY"

if TYPE_CHECKING:
    from rich.console import Console

    from hopscore.distributed import Gate


def resolve_base_url(spec: ModelSpec, base_url: str | None) -> str | None:
    """``--base-url``, else ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``, else None."""
    return base_url_for(spec, base_url, openai_env="OPENAI_BASE_URL")


def target_of(model: str, base_url: str | None, api_key_env: str) -> ModelTarget:
    """A run's ``--model``, ``--base-url`` and ``--api-key-env`` resolved; credentials checked."""
    return resolve(model, base_url, api_key_env, default_key_env=DEFAULT_KEY_ENV)


def make_backend(
    spec: ModelSpec, base_url: str | None, api_key_env: str, concurrency: int
) -> ChatBackend:
    """The backend of a run's model (``base_url`` already resolved)."""
    if spec.is_local:
        return local_backend()
    target = resolve(str(spec), base_url, api_key_env, default_key_env=DEFAULT_KEY_ENV)
    return engine_backend(target, concurrency, local=local_backend)


class ModelSettings(EngineSettings, RetrySettings, Protocol):
    """The settings of a command that asks a model (a run's, the agent's)."""

    @property
    def api_key_env(self) -> str: ...
    @property
    def concurrency(self) -> int: ...


def model_engine(settings: ModelSettings, spec: ModelSpec, base_url: str | None,
                 backend: ChatBackend | None, gate: Gate | None, warn: Console | None
                 ) -> ChatEngine:
    """The engine a run's work (a model run's, the agent's) asks ``spec`` through: ``backend``,
    else one made here (:func:`make_backend`); one request at a time for the local model."""
    backend = backend or make_backend(spec, base_url, settings.api_key_env, settings.concurrency)
    engine = chat_engine(backend, gate, settings, retry=retry_policy(settings), warn=warn,
                         concurrency=1 if spec.is_local else settings.concurrency)
    reasoning = getattr(settings, "reasoning", None)  # every request of the run or agent
    if reasoning is not None:
        from functools import partial

        from hopscore.engine.reasoning import with_reasoning

        engine.shape = partial(with_reasoning, settings=reasoning, provider=spec.provider)
    return engine


def endpoint_for(spec: ModelSpec, base_url: str | None) -> str:
    """The endpoint string a backend for ``spec`` will report (part of cache keys)."""
    if spec.is_local:
        from hopscore.engine.local import GGUF_FILE, MODEL_NAME

        return f"local:{MODEL_NAME}:{GGUF_FILE}"
    if spec.provider == "anthropic":
        from hopscore.engine.anthropic import anthropic_endpoint

        return anthropic_endpoint(base_url)
    from hopscore.engine import endpoint_of

    return endpoint_of(base_url)


class SharedBackend:
    """One backend for several runs (a loaded local model): closing a run leaves it open.

    Only for backends that do not belong to an event loop (the local model's worker thread);
    an HTTP client must not outlive the loop it was made in.
    """

    def __init__(self, backend: ChatBackend) -> None:
        self.backend = backend
        self.endpoint = backend.endpoint

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        return await self.backend.send(request, timeout)

    async def aclose(self) -> None:
        """Kept open for the next run; :meth:`close` closes it."""

    async def close(self) -> None:
        await self.backend.aclose()
