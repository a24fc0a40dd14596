"""Backends send one attempt of a chat request; the engine around them retries, caches, limits.

:class:`ChatBackend` is the whole contract, so a model that runs in-process (a local GGUF model,
a test double) plugs into the same engine as an HTTP endpoint. :class:`OpenAIBackend` talks to
any OpenAI-compatible endpoint (``POST {base_url}/chat/completions``) over one connection pool
per endpoint: :mod:`hopscore.engine.http1` for a plain ``http://`` URL that no proxy applies to
(a server on this machine or the local network, where requests come fastest), else one aiohttp
session (one TLS context however many requests are in flight).

Why not the ``openai`` SDK: its per-request work (typed options, header merging, httpx models)
cost about 1 ms of CPU per request, against about 0.1 ms for aiohttp (bench/judge_throughput.py
and the figures in docs/running-models.md), and importing it took most of a second. The
request body is the chat-completions JSON the SDK would send; proxies from the environment
(``HTTPS_PROXY``, ``NO_PROXY``) are honoured as the SDK does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from hopscore.engine.classify import error_message, parse_body, status_error
from hopscore.engine.http1 import (
    CONNECT,
    CUT,
    MALFORMED,
    MAX_BODY,
    TOO_LARGE,
    Http1Client,
    HTTPFailure,
)
from hopscore.engine.types import (
    CONNECTION,
    MALFORMED_BODY,
    RESPONSE_TOO_LARGE,
    TIMEOUT,
    CallError,
    ChatRequest,
    ChatResponse,
)
from hopscore.errors import HopscoreError
from hopscore.files.jsontext import dumps as json_text

if TYPE_CHECKING:
    import aiohttp

#: seconds an idle connection is kept: under the 5 s after which uvicorn, llama.cpp's server and
#: others close theirs, so a request is never written into a connection the server just closed
KEEPALIVE_S = 3.0


class ChatBackend(Protocol):
    """Sends one attempt. Raise :class:`CallError` on failure; the engine handles retries."""

    #: Identifies what answers (base URL, or e.g. "local:smollm2"); part of every cache key.
    endpoint: str

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse: ...

    async def aclose(self) -> None: ...


def endpoint_of(base_url: str | None) -> str:
    """The endpoint an :class:`OpenAIBackend` for ``base_url`` reports (part of cache keys)."""
    return (base_url or "https://api.openai.com/v1").rstrip("/")


def ssl_context() -> ssl.SSLContext:
    """The system's trust store, plus certifi's bundle when it is installed (as httpx uses)."""
    context = ssl.create_default_context()
    try:
        import certifi
    except ImportError:
        return context
    with contextlib.suppress(OSError):
        context.load_verify_locations(certifi.where())
    return context


class OpenAIBackend:
    """Chat completions on an OpenAI-compatible endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...).

    The connection pool is unbounded: the engine's concurrency limit decides how many
    requests are in flight (``concurrency`` is kept for callers that size things by it).
    """

    def __init__(self, base_url: str | None, api_key: str | None, *, concurrency: int = 8,
                 user_agent: str = "hopscore") -> None:
        self.endpoint = endpoint_of(base_url)
        self.url = f"{self.endpoint}/chat/completions"
        if not self.url.startswith(("http://", "https://")):
            raise HopscoreError(f"--base-url {base_url!r}: not an http:// or https:// URL")
        self.concurrency = max(1, concurrency)
        self._headers = {
            "Authorization": f"Bearer {api_key or 'EMPTY'}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": user_agent,
        }
        self._session: aiohttp.ClientSession | None = None
        self._proxy: Any = None
        self._proxy_auth: Any = None
        self._lean: Http1Client | None = None
        if _plain_http(self.url):
            self._lean = Http1Client(self.url, self._headers)
        else:
            import aiohttp  # noqa: F401  (imported now, not in the first request's time)

    def probe_urls(self) -> tuple[str, str | None, dict[str, str]]:
        """What :func:`hopscore.engine.preflight.check_endpoint` asks: the models listing,
        llama.cpp's ``/props`` (not on OpenAI's own endpoint), and the headers."""
        root = self.endpoint[:-3] if self.endpoint.endswith("/v1") else self.endpoint
        props = None if urlsplit(self.endpoint).hostname == "api.openai.com" else f"{root}/props"
        headers = {k: v for k, v in self._headers.items() if k != "Content-Type"}
        return f"{self.endpoint}/models", props, headers

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp  # deferred: only a run that sends requests needs it
        from aiohttp.helpers import get_env_proxy_for_url
        from yarl import URL

        connector = aiohttp.TCPConnector(
            limit=0, limit_per_host=0, keepalive_timeout=KEEPALIVE_S,
            ssl=ssl_context() if self.url.startswith("https://") else False)
        # The proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) is looked up once: with trust_env the
        # session would look it up, and read ~/.netrc, on a thread for every request.
        try:
            self._proxy, self._proxy_auth = get_env_proxy_for_url(URL(self.url))
        except LookupError:
            self._proxy, self._proxy_auth = None, None
        self._session = aiohttp.ClientSession(connector=connector, trust_env=False,
                                              auto_decompress=True)
        return self._session

    async def send(self, request: ChatRequest, timeout: float) -> ChatResponse:
        body = {"model": request.model, "messages": request.messages, **request.body()}
        data = json_text(body).encode("utf-8")  # json.dumps(body, ensure_ascii=False)
        if self._lean is not None:
            return await self._send_lean(self._lean, data, timeout)
        import aiohttp

        session = self._session or self._open()
        try:
            async with session.post(self.url, data=data, headers=self._headers,
                                    timeout=aiohttp.ClientTimeout(total=timeout),
                                    proxy=self._proxy, proxy_auth=self._proxy_auth) as reply:
                payload = await _read_capped(reply, self.url)
                status = reply.status
                headers = dict(reply.headers) if status >= 300 else {}
        except TimeoutError:
            raise CallError(TIMEOUT, f"no response from {self.url} within {timeout:g} s") \
                from None
        except aiohttp.ClientConnectorError as exc:
            raise CallError(CONNECTION, f"cannot connect to {self.url}: {_reason(exc)}") \
                from None
        except aiohttp.ServerDisconnectedError:
            raise CallError(CONNECTION, f"{self.url} closed the connection before answering") \
                from None
        except aiohttp.ClientPayloadError as exc:
            raise CallError(CONNECTION, f"the reply from {self.url} was cut off: {exc}") \
                from None
        except aiohttp.ClientResponseError as exc:
            raise CallError(MALFORMED_BODY, f"{self.url} sent an unreadable HTTP reply: "
                                            f"{exc.message}") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise CallError(CONNECTION, f"request to {self.url} failed: "
                                        f"{type(exc).__name__}: {exc}") from None
        if 200 <= status < 300:
            return parse_body(payload, status)
        text = payload.decode("utf-8", "replace")
        raise status_error(status, error_message(status, text), headers)

    async def _send_lean(self, client: Http1Client, data: bytes, timeout: float
                         ) -> ChatResponse:
        try:
            async with asyncio.timeout(timeout):
                reply = await client.post(data)
        except TimeoutError:
            raise CallError(TIMEOUT, f"no response from {self.url} within {timeout:g} s") \
                from None
        except HTTPFailure as failure:
            if failure.kind == CONNECT:
                raise CallError(CONNECTION, f"cannot connect to {self.url}: {failure.message}") \
                    from None
            if failure.kind == MALFORMED:
                raise CallError(MALFORMED_BODY, f"{self.url} sent an unreadable HTTP reply: "
                                                f"{failure.message}") from None
            if failure.kind == TOO_LARGE:
                raise CallError(RESPONSE_TOO_LARGE, f"the reply from {self.url} is too large: "
                                                    f"{failure.message}") from None
            if failure.kind == CUT:
                raise CallError(CONNECTION, f"the reply from {self.url} was cut off: "
                                            f"{failure.message}") from None
            raise CallError(CONNECTION, f"{self.url} {failure.message}") from None
        except OSError as exc:
            raise CallError(CONNECTION, f"request to {self.url} failed: "
                                        f"{type(exc).__name__}: {exc}") from None
        if 200 <= reply.status < 300:
            return parse_body(reply.body, reply.status)
        text = reply.body.decode("utf-8", "replace")
        raise status_error(reply.status, error_message(reply.status, text), reply.headers)

    async def aclose(self) -> None:
        if self._lean is not None:
            self._lean.close()
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


async def _read_capped(reply: Any, url: str) -> bytes:
    """A reply's body, or :data:`RESPONSE_TOO_LARGE` once it passes ``MAX_BODY`` bytes."""
    length = reply.content_length
    if length is not None and length > MAX_BODY:
        raise CallError(RESPONSE_TOO_LARGE, f"the reply from {url} is too large: a body of "
                                            f"{length:,} bytes (Content-Length), over {MAX_BODY:,}")
    parts: list[bytes] = []
    size = 0
    async for chunk in reply.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_BODY:
            raise CallError(RESPONSE_TOO_LARGE, f"the reply from {url} is too large: a body "
                                                f"over {MAX_BODY:,} bytes")
        parts.append(chunk)
    return b"".join(parts)


def openai_backend(base_url: str | None, api_key: str, concurrency: int) -> OpenAIBackend:
    """The ``openai`` provider's backend (:data:`hopscore.engine.providers.FACTORIES`)."""
    return OpenAIBackend(base_url, api_key, concurrency=concurrency)


def _plain_http(url: str) -> bool:
    """Whether ``url`` is ``http://``, without user:password, and no proxy of the environment
    applies to it (as aiohttp and urllib read ``HTTP_PROXY`` and ``NO_PROXY``)."""
    if not url.startswith("http://"):
        return False
    parts = urlsplit(url)
    if parts.username is not None or not parts.hostname:
        return False
    names = {name.lower() for name in os.environ if name.lower().endswith("_proxy")}
    if not names - {"no_proxy"}:
        return True
    import urllib.request

    if "http" not in urllib.request.getproxies():
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


def _reason(exc: Any) -> str:
    cause = getattr(exc, "os_error", None)
    if isinstance(cause, OSError):
        if cause.errno:
            return f"{os.strerror(cause.errno)} (errno {cause.errno})"
        if cause.strerror:
            return cause.strerror
    return str(exc) or type(exc).__name__
