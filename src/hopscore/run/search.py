"""Search backends for the agent's ``web_search`` and ``web_fetch`` tools and for the chain
strategies' web evidence.

A backend is anything with a ``label``, ``search(query, count) -> list[SearchHit]``,
``fetch(url) -> str`` and ``describe()`` (:class:`SearchBackend`). Both calls are synchronous
and may raise any exception: the tools turn it into an ``Error: ...`` observation.

* :class:`Bm25Search` (default, offline, reproducible): BM25 over a JSON Lines corpus of
  ``{"url", "title", "text"}`` documents, built once per run; ``fetch`` returns a document's
  text by its URL (exact, else with scheme, ``www.``, fragment and trailing slash ignored).
* :class:`HttpSearch`: a generic JSON-over-HTTP client for a real search service. Search is a
  POST of ``{"query": ..., "count": ...}`` to ``search_url``; the reply is a JSON list of hits,
  or an object holding one under ``results``, ``hits``, ``items``, ``data`` or
  ``organic_results``; a hit has ``title``, ``url`` (or ``link``/``href``) and ``snippet`` (or
  ``content``/``description``/``text``). Fetch is a POST of ``{"url": ...}`` to ``fetch_url``
  answered by JSON (``text``/``content``/``markdown``) or plain text; or, with
  ``direct_fetch``, a plain GET of the page itself (http/https only; loopback, private and
  link-local addresses refused unless ``allow_private``; HTML reduced to text). Every call has
  a timeout and a cap on the bytes read; an API key is sent as a bearer header, never in the
  body.
"""

from __future__ import annotations

import html.parser
import ipaddress
import json
import re
import socket
import threading
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from email.message import Message
from pathlib import Path
from typing import Any, Protocol

from hopscore.files.digest import file_sha256
from hopscore.run.deadline import DeadlineExceeded as DeadlineExceeded
from hopscore.run.deadline import open_within
from hopscore.run.retrieval import Corpus

SNIPPET_CHARS = 300
HIT_LIST_KEYS = ("results", "hits", "items", "data", "organic_results")
URL_KEYS = ("url", "link", "href")
SNIPPET_KEYS = ("snippet", "content", "description", "text")
TEXT_KEYS = ("text", "content", "markdown")
USER_AGENT = "hopscore-hdr-agent/1.0"


@dataclass(frozen=True, slots=True)
class SearchHit:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    label: str

    def search(self, query: str, count: int) -> list[SearchHit]: ...

    def fetch(self, url: str) -> str: ...

    def describe(self) -> dict[str, Any]: ...


_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """The passage of ``text`` (about ``width`` characters) holding most query words."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    terms = {w.lower() for w in _WORD.findall(query)}
    windows: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(flat):
        if current and len(current) + 1 + len(sentence) > width:
            windows.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}".strip()
    if current:
        windows.append(current)
    best = max(windows, key=lambda w: len(terms & {t.lower() for t in _WORD.findall(w)}))
    return best if len(best) <= width else best[: width - 3].rstrip() + "..."


def url_key(url: str) -> str:
    """A URL with scheme, ``www.``, fragment and trailing slash ignored (for lookups)."""
    parts = urllib.parse.urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{path}{query}" if host else url.strip().rstrip("/")


class Bm25Search:
    """BM25 over a local JSONL corpus of ``{url, title, text}`` documents."""

    label = "bm25"

    def __init__(self, path: Path) -> None:
        self.corpus = Corpus(path, ("url",), require_id=True)
        self.path = path
        self._by_url = {doc.id: doc for doc in self.corpus.documents}
        self._by_key: dict[str, str] = {}
        for doc in self.corpus.documents:
            self._by_key.setdefault(url_key(doc.id), doc.id)
        self._lock = threading.Lock()

    def search(self, query: str, count: int) -> list[SearchHit]:
        with self._lock:
            documents = self.corpus.search(query, count)
        return [SearchHit(d.title, d.id, snippet(d.text, query)) for d in documents]

    def fetch(self, url: str) -> str:
        doc = self._by_url.get(url.strip()) or self._by_url.get(self._by_key.get(url_key(url), ""))
        if doc is None:
            raise LookupError(f"{url} is not a page of the local corpus")
        return doc.text

    def describe(self) -> dict[str, Any]:
        return {"backend": "bm25", "corpus": str(self.path), "sha256": self.corpus.sha256,
                "documents": len(self.corpus.documents)}


class _TextExtractor(html.parser.HTMLParser):
    SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    BLOCK = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table",
                       "section", "article", "header", "footer", "ul", "ol", "pre", "blockquote",
                       "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skipping += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(lines)


def _check_public(url: str) -> None:
    """Refuse non-HTTP schemes and hosts that resolve to loopback/private/link-local addresses."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"only http and https URLs can be fetched, not {url!r}")
    for info in socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP):
        address = ipaddress.ip_address(info[4][0])
        if address.is_private or address.is_loopback or address.is_link_local \
                or address.is_reserved or address.is_multicast or address.is_unspecified:
            raise ValueError(f"{parts.hostname} resolves to the non-public address {address}")


class _GuardedRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> urllib.request.Request | None:
        _check_public(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _charset(headers: Message) -> str:
    charset = headers.get_content_charset() or "utf-8"
    try:
        "".encode(charset)
    except LookupError:
        return "utf-8"
    return charset


class HttpSearch:
    """A generic JSON-over-HTTP search (and fetch) service; see the module docstring."""

    label = "http"

    def __init__(self, search_url: str, *, fetch_url: str | None = None,
                 direct_fetch: bool = False, timeout: float = 30.0,
                 max_bytes: int = 2_000_000, api_key: str | None = None,
                 allow_private: bool = False) -> None:
        for url in (search_url, fetch_url):
            if url is not None and urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                raise ValueError(f"not an http(s) URL: {url!r}")
        self.search_url = search_url
        self.fetch_url = fetch_url
        self.direct_fetch = direct_fetch
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.allow_private = allow_private
        self._headers = {"User-Agent": USER_AGENT, "Accept": "application/json, text/*;q=0.9"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"

    def _open(self, request: urllib.request.Request, what: str, *, page: bool = False
              ) -> tuple[bytes, Message, bool]:
        """The body (at most ``max_bytes``), headers and whether the body was longer, all read
        within the call's total deadline (``timeout``)."""
        guard = [_GuardedRedirects()] if page and not self.allow_private else []
        return open_within(request, self.timeout, what, self.max_bytes, guard)

    def _post(self, url: str, body: dict[str, Any], what: str) -> tuple[bytes, Message]:
        request = urllib.request.Request(
            url, data=json.dumps(body).encode("utf-8"), method="POST",
            headers={**self._headers, "Content-Type": "application/json"})
        data, headers, over = self._open(request, what)
        if over:
            raise ValueError(f"the service's reply is larger than {self.max_bytes} bytes")
        return data, headers

    def search(self, query: str, count: int) -> list[SearchHit]:
        data, headers = self._post(self.search_url, {"query": query, "count": count},
                                   "search service")
        try:
            body = json.loads(data.decode(_charset(headers), errors="replace"))
        except ValueError:
            raise ValueError("the search service did not answer with JSON") from None
        return parse_hits(body)[:count]

    def fetch(self, url: str) -> str:
        if self.fetch_url is not None:
            data, headers = self._post(self.fetch_url, {"url": url}, "fetch service")
            text = data.decode(_charset(headers), errors="replace")
            if "json" in (headers.get_content_type() or ""):
                body = json.loads(text)
                found = next((body[k] for k in TEXT_KEYS
                              if isinstance(body, dict) and isinstance(body.get(k), str)), None)
                if found is None:
                    raise ValueError("the fetch service's JSON reply has no text field")
                return str(found)
            return text
        if not self.direct_fetch:
            raise ValueError("this search backend has no fetch service")
        if not self.allow_private:
            _check_public(url)
        elif urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ValueError(f"only http and https URLs can be fetched, not {url!r}")
        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        data, headers, _ = self._open(request, f"page {url}", page=True)
        text = data.decode(_charset(headers), errors="replace")
        if "html" in (headers.get_content_type() or "") or "<html" in text[:400].lower():
            text = html_to_text(text)
        return text

    def describe(self) -> dict[str, Any]:
        return {"backend": "http", "search_url": self.search_url, "fetch_url": self.fetch_url,
                "direct_fetch": self.direct_fetch, "timeout_s": self.timeout,
                "max_bytes": self.max_bytes}


def parse_hits(body: Any) -> list[SearchHit]:
    """Hits from a search service's JSON reply (see the module docstring for the shapes)."""
    items = body
    if isinstance(body, dict):
        items = next((body[k] for k in HIT_LIST_KEYS if isinstance(body.get(k), list)), None)
        web = body.get("web")
        if items is None and isinstance(web, dict) and isinstance(web.get("results"), list):
            items = web["results"]
    if not isinstance(items, list):
        raise ValueError("the search reply holds no list of results")
    hits = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = next((str(item[k]) for k in URL_KEYS if isinstance(item.get(k), str)), "")
        if not url:
            continue
        text = next((str(item[k]) for k in SNIPPET_KEYS if isinstance(item.get(k), str)), "")
        hits.append(SearchHit(str(item.get("title") or ""), url, " ".join(text.split())))
    return hits


def corpus_sha256(path: Path) -> str:
    return file_sha256(path)
