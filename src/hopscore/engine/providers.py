"""One model resolver for every command that asks a model: ``hopscore run``, ``judge``,
``score --judge``, the agent and its judge.

``--model`` is ``PROVIDER/NAME``:

* ``openai/NAME``: NAME on an OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
  llama.cpp's server, Ollama, gateways); NAME is sent as the request's ``model`` and may contain
  "/". A name whose first part is no provider (``gpt-4.1-mini``, ``Qwen/Qwen3-8B``) is read the
  same way: the whole name on the OpenAI-compatible endpoint.
* ``anthropic/NAME``: Claude through the Messages API (:mod:`hopscore.engine.anthropic`).
* ``local/smollm2``: the model on this machine's CPU (:mod:`hopscore.engine.local`); the
  commands that may load it pass ``local=local_backend``, anywhere else it is refused at once.

A provider is one module plus one line in :data:`FACTORIES` (``"module:function"``, imported on
first use so that no provider's libraries load with this module).

Credentials are checked before any request: the public OpenAI and Anthropic endpoints need a
key (a server of your own does not: "EMPTY" is sent), and an ``--api-key-env`` naming a variable
that is not set is an error wherever the requests go.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from hopscore.engine.backend import ChatBackend, endpoint_of
from hopscore.errors import HopscoreError

PROVIDERS = ("openai", "anthropic", "local")
LOCAL_MODELS = ("smollm2",)
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
#: the variable each provider's key is read from when the command's own variable is unset
PROVIDER_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
#: the key sent to a server that needs none (local servers accept any)
NO_KEY = "EMPTY"


class EndpointUnusable(HopscoreError):
    """The endpoint cannot serve the command (missing key, unreachable, key refused): nothing
    was sent to the model, and no other dataset or row would fare better."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed ``--model``: the provider and the name sent in requests."""

    provider: str
    name: str

    @classmethod
    def parse(cls, text: str, option: str = "--model") -> ModelSpec:
        provider, _, name = text.partition("/")
        if provider in PROVIDERS and not name:
            raise HopscoreError(f"{option} {text!r}: give the model's name after "
                                f"{provider}/ (e.g. openai/gpt-4o-mini, local/smollm2)")
        if not text.strip():
            raise HopscoreError(f"{option}: empty model name")
        if provider not in PROVIDERS:  # the whole text on the OpenAI-compatible endpoint
            return cls("openai", text)
        if provider == "local" and name not in LOCAL_MODELS:
            raise HopscoreError(f"{option} {text!r}: the local provider has "
                                f"{', '.join(LOCAL_MODELS)}")
        return cls(provider, name)

    def __str__(self) -> str:
        return f"{self.provider}/{self.name}"

    @property
    def is_local(self) -> bool:
        return self.provider == "local"


@dataclass(frozen=True, slots=True)
class ModelTarget:
    """Where a model's requests go and with which key: what every backend is made from."""

    spec: ModelSpec
    #: the base URL given (None: the provider's public endpoint, or none for local)
    base_url: str | None
    #: the key sent (:data:`NO_KEY` for a server of your own without one)
    api_key: str
    #: the variable the key was read from (None: no key)
    key_env: str | None

    @property
    def endpoint(self) -> str:
        """What the backend reports as its endpoint (part of cache and resume keys)."""
        if self.spec.is_local:
            return f"local:{self.spec.name}"
        if self.spec.provider == "anthropic":
            from hopscore.engine.anthropic import anthropic_endpoint

            return anthropic_endpoint(self.base_url)
        return endpoint_of(self.base_url)

    @property
    def url(self) -> str:
        """The base URL requests go to, for messages."""
        if self.spec.provider == "anthropic":
            return (self.base_url or ANTHROPIC_URL).rstrip("/")
        return endpoint_of(self.base_url)


def base_url_for(spec: ModelSpec, base_url: str | None, *, openai_env: str | None,
                 option: str = "--base-url") -> str | None:
    """The base URL of ``spec``: ``base_url``, else the provider's variable (``openai_env``
    for an OpenAI-compatible one, None: none; ``ANTHROPIC_BASE_URL``), else None (public)."""
    if spec.is_local:
        if base_url:
            raise HopscoreError(f"{option} is for openai/... and anthropic/... models; "
                                f"{spec} runs on this machine")
        return None
    if spec.provider == "anthropic":
        return base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
    return base_url or (os.environ.get(openai_env) if openai_env else None) or None


def resolve(text: str, base_url: str | None, api_key_env: str, *, default_key_env: str,
            openai_env: str | None = "OPENAI_BASE_URL", option: str = "--model",
            url_option: str = "--base-url", key_option: str = "--api-key-env") -> ModelTarget:
    """``--model`` ``text`` resolved, its credentials checked (before any request).

    ``api_key_env``: the variable the command was told to read the key from;
    ``default_key_env``: that option's default. When the default is unset, the provider's
    own variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``) is read; a variable named on the
    command line that is unset is an error. The public endpoints without a key are errors."""
    spec = ModelSpec.parse(text, option)
    url = base_url_for(spec, base_url, openai_env=openai_env, option=url_option)
    if spec.is_local:
        return ModelTarget(spec, None, NO_KEY, None)
    key_env: str | None = api_key_env
    key = os.environ.get(api_key_env) or None
    if key is None and api_key_env != default_key_env:
        raise EndpointUnusable(f"{key_option} {api_key_env}: the variable {api_key_env} is not set "
                            f"(set it to the key of {_where(spec, url)}, or leave "
                            f"{key_option} out)")
    if key is None and PROVIDER_KEY_ENV[spec.provider] != api_key_env:
        key_env = PROVIDER_KEY_ENV[spec.provider]
        key = os.environ.get(key_env) or None
    if key is None and url is None:
        public = OPENAI_URL if spec.provider == "openai" else ANTHROPIC_URL
        tried = " or ".join(dict.fromkeys((api_key_env, PROVIDER_KEY_ENV[spec.provider])))
        variable = "ANTHROPIC_BASE_URL" if spec.provider == "anthropic" else openai_env
        also = f" (or set {variable})" if variable else ""
        raise EndpointUnusable(
            f"{option} {text}: requests would go to {public}, which needs an API key, and "
            f"{tried} is not set; set it, or pass {url_option} for a server of your own{also}")
    if key is None:
        return ModelTarget(spec, url, NO_KEY, None)
    return ModelTarget(spec, url, key, key_env)


def _where(spec: ModelSpec, url: str | None) -> str:
    if spec.provider == "anthropic":
        return (url or ANTHROPIC_URL).rstrip("/")
    return endpoint_of(url)


LocalFactory = Callable[[], ChatBackend]

#: provider -> the function that builds its backend from the base URL, the key and the
#: concurrency (``"module:function"``, imported on first use)
FACTORIES = {
    "openai": "hopscore.engine.backend:openai_backend",
    "anthropic": "hopscore.engine.anthropic:anthropic_backend",
}


def local_backend() -> ChatBackend:
    """The local model, loaded in this process (:mod:`hopscore.engine.local`)."""
    from hopscore.engine.local import LocalSmolLM2

    return LocalSmolLM2()


def _factory(provider: str) -> Callable[[str | None, str, int], ChatBackend]:
    import importlib

    module, _, name = FACTORIES[provider].partition(":")
    factory: Callable[[str | None, str, int], ChatBackend] = getattr(
        importlib.import_module(module), name)
    return factory


def make_backend(target: ModelTarget, concurrency: int = 8, *,
                 local: LocalFactory | None = None) -> ChatBackend:
    """The backend for ``target``; a local model needs ``local`` (the command that can load it
    passes it), else it is refused."""
    if target.spec.is_local:
        if local is None:
            raise HopscoreError(f"{target.spec} cannot be used here: it runs in the process of "
                                "hopscore run, hopscore judge or score --judge")
        return local()
    return _factory(target.spec.provider)(target.base_url, target.api_key, concurrency)
