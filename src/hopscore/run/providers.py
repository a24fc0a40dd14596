"""Model specs (``PROVIDER/NAME``) and the backend each provider uses.

* ``openai/NAME``: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp
  server, Ollama, hosted APIs). ``--base-url`` (else ``OPENAI_BASE_URL``, else OpenAI's); the key
  from ``OPENAI_API_KEY`` or the variable ``--api-key-env`` names ("EMPTY" when unset, which
  local servers accept). NAME is sent as the request's ``model`` and may contain "/".
* ``anthropic/NAME``: Claude through the Messages API (:mod:`hopscore.engine.anthropic`, extra
  ``hopscore[anthropic]``). ``--base-url`` (else ``ANTHROPIC_BASE_URL``, else Anthropic's); the
  key from ``ANTHROPIC_API_KEY`` unless ``--api-key-env`` names another variable.
* ``local/smollm2``: SmolLM2-135M-Instruct on the CPU (:mod:`hopscore.run.local`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hopscore.engine import ChatBackend, ChatRequest, ChatResponse, OpenAIBackend, endpoint_of
from hopscore.errors import HopscoreError

PROVIDERS = ("openai", "anthropic", "local")
#: the --api-key-env default; an anthropic/... model reads ANTHROPIC_API_KEY instead
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_MODELS = ("smollm2",)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    provider: str
    name: str

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        provider, _, name = text.partition("/")
        if not name or provider not in PROVIDERS:
            raise HopscoreError(
                f"--model {text!r}: expected PROVIDER/NAME with provider openai, anthropic or "
                "local (e.g. openai/gpt-4o-mini, openai/Qwen/Qwen3-8B, "
                "anthropic/claude-sonnet-4-5, local/smollm2)"
            )
        if provider == "local" and name not in LOCAL_MODELS:
            raise HopscoreError(
                f"--model {text!r}: the local provider has {', '.join(LOCAL_MODELS)}"
            )
        return cls(provider, name)

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"

    @property
    def is_local(self) -> bool:
        return self.provider == "local"


def resolve_base_url(spec: ModelSpec, base_url: str | None) -> str | None:
    if spec.is_local:
        if base_url:
            raise HopscoreError("--base-url is for openai/... and anthropic/... models; "
                                "local/smollm2 runs here")
        return None
    if spec.provider == "anthropic":
        return base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    return base_url or os.environ.get("OPENAI_BASE_URL") or None


def api_key(spec: ModelSpec, api_key_env: str) -> str:
    """The key for ``spec``: the variable ``api_key_env`` names ("EMPTY" when unset)."""
    if spec.provider == "anthropic" and api_key_env == DEFAULT_KEY_ENV:
        api_key_env = "ANTHROPIC_API_KEY"
    return os.environ.get(api_key_env) or "EMPTY"


def make_backend(
    spec: ModelSpec, base_url: str | None, api_key_env: str, concurrency: int
) -> ChatBackend:
    if spec.is_local:
        from hopscore.run.local import LocalSmolLM2

        return LocalSmolLM2()
    if spec.provider == "anthropic":
        from hopscore.engine.anthropic import AnthropicBackend

        return AnthropicBackend(base_url, api_key(spec, api_key_env))
    return OpenAIBackend(base_url, api_key(spec, api_key_env), concurrency=concurrency)


def endpoint_for(spec: ModelSpec, base_url: str | None) -> str:
    """The endpoint string a backend for ``spec`` will report (part of cache keys)."""
    if spec.is_local:
        from hopscore.run.local import GGUF_FILE, MODEL_NAME

        return f"local:{MODEL_NAME}:{GGUF_FILE}"
    if spec.provider == "anthropic":
        from hopscore.engine.anthropic import anthropic_endpoint

        return anthropic_endpoint(base_url)
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
