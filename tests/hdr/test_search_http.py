"""The generic JSON-over-HTTP search backend, against a loopback service the test starts."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from hopscore.agent.tools import ToolLimits, Toolset
from hopscore.run.search import HttpSearch, html_to_text, parse_hits
from hopscore.sql.sandbox import SqlExecutor

PAGE = ("<html><head><title>T</title><style>p {color: red}</style></head><body>"
        "<script>var secret = 1;</script><h1>Acme &amp; Co</h1><p>Headquartered in "
        "Springfield.</p><p>Second   paragraph.</p></body></html>")


class Service:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                service.requests.append({"path": self.path, "body": body,
                                         "auth": self.headers.get("Authorization")})
                if self.path == "/search":
                    hits = [{"title": "Acme", "link": "https://acme.example", "content": "HQ  x"},
                            {"title": "no url"},
                            {"title": "Globex", "url": "https://globex.example",
                             "snippet": "gizmos"}]
                    self._send(200, json.dumps({"results": hits}).encode(), "application/json")
                elif self.path == "/huge":
                    self._send(200, b'{"results": [' + b" " * 5000 + b"]}", "application/json")
                elif self.path == "/html-error":
                    self._send(200, b"<html>oops</html>", "text/html")
                elif self.path == "/slow":
                    time.sleep(1.5)
                    self._send(200, b"[]", "application/json")
                elif self.path == "/fetch-json":
                    self._send(200, json.dumps({"markdown": f"page of {body['url']}"}).encode(),
                               "application/json")
                elif self.path == "/fetch-text":
                    self._send(200, f"plain {body['url']}".encode(), "text/plain; charset=utf-8")
                else:
                    self._send(404, b"{}", "application/json")

            def do_GET(self) -> None:
                if self.path == "/page":
                    self._send(200, PAGE.encode("latin-1"), "text/html; charset=iso-8859-1")
                elif self.path == "/big":
                    self._send(200, b"z" * 10_000, "text/plain")
                else:
                    self._send(404, b"", "text/plain")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    running = Service()
    yield running
    running.close()


def observe(backend: HttpSearch, name: str, arguments: dict[str, Any],
            tmp_path: Path) -> str:
    with SqlExecutor(workers=1) as executor:
        tools = Toolset(db_path=None, knowledge=None, search=backend, executor=executor,
                        limits=ToolLimits(backend_timeout_s=5.0))
        return asyncio.run(tools.call(name, arguments)).text


def test_search(service: Service, tmp_path: Path) -> None:
    backend = HttpSearch(service.url("/search"), api_key="sekret")
    hits = backend.search("acme hq", 5)
    assert [(h.title, h.url, h.snippet) for h in hits] == [
        ("Acme", "https://acme.example", "HQ x"), ("Globex", "https://globex.example", "gizmos")]
    assert service.requests[0]["body"] == {"query": "acme hq", "count": 5}
    assert service.requests[0]["auth"] == "Bearer sekret"  # never in the body
    text = observe(backend, "web_search", {"query": "acme", "count": 1}, tmp_path)
    assert text == "source=http\n\n1. Acme\n   https://acme.example\n   HQ x"


def test_search_failures_are_observations(service: Service, tmp_path: Path) -> None:
    huge = HttpSearch(service.url("/huge"), max_bytes=1000)
    assert observe(huge, "web_search", {"query": "x"}, tmp_path) == (
        "Error: web search failed: the service's reply is larger than 1000 bytes")
    html = HttpSearch(service.url("/html-error"))
    assert observe(html, "web_search", {"query": "x"}, tmp_path) == (
        "Error: web search failed: the search service did not answer with JSON")
    slow = HttpSearch(service.url("/slow"), timeout=0.3)
    assert observe(slow, "web_search", {"query": "x"}, tmp_path).startswith(
        "Error: web search failed: ")
    gone = HttpSearch(service.url("/nothing"))
    assert "404" in observe(gone, "web_search", {"query": "x"}, tmp_path)


def test_fetch_service(service: Service, tmp_path: Path) -> None:
    as_json = HttpSearch(service.url("/search"), fetch_url=service.url("/fetch-json"))
    assert as_json.fetch("https://a.example/x") == "page of https://a.example/x"
    as_text = HttpSearch(service.url("/search"), fetch_url=service.url("/fetch-text"))
    assert observe(as_text, "web_fetch", {"url": "u"}, tmp_path) == "plain u"
    none = HttpSearch(service.url("/search"))
    assert observe(none, "web_fetch", {"url": "https://a.example"}, tmp_path) == (
        "Error: web_fetch failed: this search backend has no fetch service")


def test_direct_fetch(service: Service, tmp_path: Path) -> None:
    guarded = HttpSearch(service.url("/search"), direct_fetch=True)
    refused = observe(guarded, "web_fetch", {"url": service.url("/page")}, tmp_path)
    assert refused.startswith("Error: web_fetch failed: ") and "non-public address" in refused
    assert "only http and https" in observe(guarded, "web_fetch", {"url": "file:///etc/passwd"},
                                            tmp_path)
    local = HttpSearch(service.url("/search"), direct_fetch=True, allow_private=True,
                       max_bytes=2000)
    page = observe(local, "web_fetch", {"url": service.url("/page")}, tmp_path)
    assert "Acme & Co" in page and "Headquartered in Springfield." in page
    assert "secret" not in page and "color" not in page
    assert "Second paragraph." in page
    assert local.fetch(service.url("/big")) == "z" * 2000  # capped at max_bytes


def test_parse_hits_shapes() -> None:
    assert parse_hits([{"url": "u", "title": "t"}])[0].url == "u"
    assert parse_hits({"web": {"results": [{"href": "h"}]}})[0].url == "h"
    assert parse_hits({"organic_results": [{"link": "l", "description": "d"}]})[0].snippet == "d"
    with pytest.raises(ValueError):
        parse_hits({"answer": "no list"})
    assert html_to_text("<p>a<br>b &lt;c&gt;</p><template>x</template>").strip() == "a\nb <c>"
    with pytest.raises(ValueError):
        HttpSearch("ftp://x")
