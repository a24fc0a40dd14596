"""The check of an endpoint before the first batch: one models listing, and llama.cpp's
``/props`` where the server has one.

A dead endpoint would otherwise cost every example its retries (125 questions took 5 min 36 s
against a closed port) before a table of zeros. :func:`check_endpoint` asks once, with a short
timeout, and ends the command (:class:`EndpointUnusable`, exit status 2) on what no retry
fixes: a refused connection, a connection not answered within the timeout (a host that drops
packets: the run would wait for every attempt), a host that does not resolve, a TLS failure, a
key refused (401/403). Anything else (no listing, a server that accepts the connection but
answers slowly or not at all, 5xx) is left to the run, which retries and reports it; a
listing without the model is not an error either (llama.cpp's server answers any name). A wrong
model name fails the first request with 404, which stops the batch at once.

What the server says about its model (the listing's entry for it, ``/props``' model, chat
template and its capabilities) is kept as :attr:`EndpointInfo.identity`, a hash the response
cache compares with the one its replies were made with
(:meth:`hopscore.engine.cache.ResponseCache.note_server`), and ``/props`` tells the agent
whether the chat template supports tools.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.engine.cache import ResponseCache, Warn
from hopscore.engine.providers import EndpointUnusable, ModelTarget, make_backend
from hopscore.engine.types import canonical_json, sha256_text

#: seconds the check waits for each answer
PROBE_TIMEOUT_S = 5.0
#: fields of a listing's entry that say which model it is (not its timestamps, nor vLLM's
#: "permission" objects, whose ids and times are made anew for every listing)
ENTRY_FIELDS = ("id", "owned_by", "root", "parent", "max_model_len", "meta")
#: fields of /props that say which model answers and how its chat is rendered
PROPS_FIELDS = ("model_path", "model_alias", "chat_template", "chat_template_tool_use",
                "chat_template_caps")


@dataclass(frozen=True, slots=True)
class Probe:
    """What one GET got: an HTTP status and body, or (status None) why none came."""

    status: int | None
    body: bytes = b""
    #: refused, unresolvable, TLS: no retry helps; None: a timeout or other passing trouble
    fatal: str | None = None


@dataclass(frozen=True, slots=True)
class EndpointInfo:
    """What the endpoint said about itself."""

    url: str
    #: the listing's entry for the model (or the one model a single-model server lists)
    model_entry: dict[str, Any] | None = None
    #: llama.cpp's /props (None: no such route)
    props: dict[str, Any] | None = None

    @property
    def identity(self) -> str | None:
        """A hash of what identifies the model behind the URL, as far as the server says;
        None when it says nothing."""
        if self.model_entry is None and self.props is None:
            return None
        entry = {k: v for k, v in (self.model_entry or {}).items() if k in ENTRY_FIELDS}
        props = {k: self.props[k] for k in PROPS_FIELDS if self.props and k in self.props}
        return sha256_text(canonical_json({"model": entry, "props": props}))[:16]



def tool_support(props: dict[str, Any] | None) -> bool | None:
    """Whether llama.cpp's chat template handles tools, from its ``/props``
    (``chat_template_caps``); None when the server does not say."""
    caps = (props or {}).get("chat_template_caps")
    if not isinstance(caps, dict):
        return None
    values = [caps[k] for k in ("supports_tools", "supports_tool_calls") if k in caps]
    return all(bool(v) for v in values) if values else None


def fetch(url: str, headers: dict[str, str], timeout: float) -> Probe:
    """GET ``url`` (proxies of the environment honoured, as the backends do)."""
    from hopscore.engine.backend import ssl_context

    request = urllib.request.Request(url, headers=headers, method="GET")
    handlers: list[Any] = []
    if url.startswith("https://"):
        handlers.append(urllib.request.HTTPSHandler(context=ssl_context()))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as reply:
            return Probe(reply.status, reply.read(1 << 20))
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(1 << 16)
        except OSError:
            body = b""
        return Probe(exc.code, body)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):  # urllib wraps what failed before the answer
            return Probe(None, fatal=f"no answer to the connection within {timeout:g} s (a "
                         "host that drops packets: a firewall, a wrong address or port)")
        return Probe(None, fatal=_cause(exc.reason))
    except TimeoutError:  # connected, but the answer is slow: a busy server, left to the run
        return Probe(None)
    except ssl.SSLError as exc:
        return Probe(None, fatal=f"TLS failure: {exc}")
    except ConnectionError as exc:
        return Probe(None, fatal=_cause(exc))
    except (OSError, ValueError):  # a reset mid-answer, a malformed reply: the run will see
        return Probe(None)


def _cause(reason: object) -> str | None:
    """Why a connection failed, or None when it may pass (a timeout)."""
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return None
    if isinstance(reason, socket.gaierror):
        return f"the host name does not resolve ({reason.strerror or reason})"
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"TLS certificate not accepted ({reason.verify_message or reason})"
    if isinstance(reason, ssl.SSLError):
        plain = " (the server speaks plain HTTP? then the URL is http://)" \
            if reason.reason == "WRONG_VERSION_NUMBER" else ""
        return f"TLS failure ({reason.reason or reason}){plain}"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (nothing listens there)"
    if isinstance(reason, OSError):
        text = reason.strerror or str(reason) or type(reason).__name__
        return text
    return str(reason)


def server_message(status: int, body: bytes) -> str:
    """The message of an error body (the server's own words), short."""
    from hopscore.engine.classify import error_message

    return error_message(status, body.decode("utf-8", "replace"))


def listing_entry(body: bytes, model: str) -> dict[str, Any] | None:
    """The entry of a models listing (``{"data": [...]}``) for ``model``, or the only entry."""
    try:
        data = json.loads(body).get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    for entry in entries:
        if entry.get("id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def props_of(probe: Probe) -> dict[str, Any] | None:
    if probe.status != 200:
        return None
    try:
        value = json.loads(probe.body)
    except ValueError:
        return None
    return value if isinstance(value, dict) and "chat_template" in value else None


async def check_endpoint(urls: tuple[str, str | None, dict[str, str]], model: str, *,
                         what: str = "--model", key_env: str | None = None,
                         key_option: str = "--api-key-env", timeout: float = PROBE_TIMEOUT_S
                         ) -> EndpointInfo:
    """Ask an endpoint once whether it can serve ``model``: ``urls`` is a backend's
    ``probe_urls()`` (the listing, llama.cpp's /props or None, the headers). Raise
    :class:`EndpointUnusable` naming the URL, the model (``what``) and the cause when it
    cannot."""
    listing_url, props_url, headers = urls
    listing = await asyncio.to_thread(fetch, listing_url, headers, timeout)
    where = f"{what} at {listing_url}"
    if listing.fatal is not None:
        raise EndpointUnusable(f"cannot reach the endpoint of {where}: {listing.fatal}; "
                               "nothing was sent (check --base-url and that the server runs)")
    if listing.status in (401, 403):
        key = f"the key in {key_env}" if key_env else \
            f"the request without a key (set one with {key_option})"
        raise EndpointUnusable(f"the endpoint of {where} refused {key} (HTTP {listing.status}: "
                               f"{server_message(listing.status, listing.body)}); nothing was "
                               "sent")
    if listing.status != 200:
        return EndpointInfo(listing_url)
    props = None
    if props_url is not None:
        props = props_of(await asyncio.to_thread(fetch, props_url, headers, timeout))
    return EndpointInfo(listing_url, listing_entry(listing.body, model), props)


async def preflight(target: ModelTarget, *, cache_dir: Path | None = None,
                    warn: Warn | None = None, what: str = "--model",
                    key_option: str = "--api-key-env") -> EndpointInfo | None:
    """Check ``target``'s endpoint before the first batch (:func:`check_endpoint`) and tell
    the response cache in ``cache_dir`` what the server said about its model, so that replies
    made before it changed are not reused. None for the local model."""
    if target.spec.is_local:
        return None
    backend = make_backend(target)
    try:
        urls = backend.probe_urls()  # type: ignore[attr-defined]
    finally:
        await backend.aclose()
    info = await check_endpoint(urls, target.spec.name, what=f"{what} {target.spec}",
                                key_env=target.key_env, key_option=key_option)
    identity = info.identity
    if identity is not None and cache_dir is not None:
        cache = ResponseCache.in_dir(cache_dir, warn=warn)
        try:
            await asyncio.to_thread(cache.note_server, target.endpoint, target.spec.name,
                                    identity)
        finally:
            await asyncio.to_thread(cache.close)
    return info
