"""Chain strategies with their contexts from an HTTP search service (``--search-backend http
--search-url``, the HybridDeepResearch agent's client): one lookup per question and per
follow-up, MCR's snippet form, the hits' URLs as the retrieved sources, and a service that
fails fails the question, which a re-run retries."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI
from tests.run.chain_script import parse_call, scripted_chains
from tests.run.helpers import MODEL, load, rows
from tests.run.test_strategies import QUESTIONS, SEED, meta, plans, sample_gold


class SearchService:
    """A loopback search service: POST /search {query, count} -> {"results": [hits]}."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.down = False
        service = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                query = body["query"]
                service.queries.append(query)
                status, payload = 200, {"results": [{
                    "title": f"{query.split()[0]} page - Wikipedia",
                    "url": f"https://search.test/{len(query)}",
                    "snippet": f"About {query} ... the answer is here.",
                }]}
                if service.down and query == QUESTIONS[2]:
                    status, payload = 503, {"error": "unavailable"}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        host, port = self.server.server_address[:2]
        self.url = f"http://{host!s}:{port}/search"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def search(monkeypatch: pytest.MonkeyPatch) -> Iterator[SearchService]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    running = SearchService()
    yield running
    running.close()


def test_chains_read_contexts_from_an_http_search_service(tmp_path: Path,
                                                          search: SearchService) -> None:
    out = tmp_path / "run"
    args = ["run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model", MODEL,
            "-o", out, "--cache-dir", tmp_path / "cache", "--no-progress", "--resamples", "0",
            "--seed", str(SEED), "--strategy", "mcr", "--chains", "2", "--num-retries", "0",
            "--max-retries", "0", "--search-backend", "http", "--search-url", search.url]
    log: list[Any] = []
    search.down = True
    with FakeOpenAI(body_responder=scripted_chains(plans, meta, log=log)) as server:
        first = run_cli(*args, "--base-url", server.base_url)
        assert first.returncode == 1, first.stderr
        failed = [r for r in rows(out / "samples.jsonl") if r["error"] is not None]
        assert [r["question"] for r in failed] == [QUESTIONS[2]]
        assert "lookup" in json.dumps(failed[0]["error"])
        search.down = False
        before = len(server.log)
        second = run_cli(*args, "--base-url", server.base_url)
        assert second.returncode == 0, second.stderr
        asked = {parse_call(e.body).question for e in server.log[before:]}
        assert asked == {QUESTIONS[2]}  # only the failed question is asked again
    row = next(r for r in rows(out / "samples.jsonl") if r["question"] == QUESTIONS[0])
    chain = row["rounds"][0]["chains"][0]
    # Context1 is the question's own lookup, then one per follow-up, in MCR's snippet form
    assert [c["title"] for c in chain["contexts"]] == ["Could page", "What page", "What page"]
    assert chain["contexts"][0]["text"] == f"About {QUESTIONS[0]}  the answer is here."
    assert all(c["source"].startswith("https://search.test/") for c in chain["contexts"])
    assert row["retrieved"] == list(dict.fromkeys(c["source"] for ch in row["rounds"][0]["chains"]
                                                  for c in ch["contexts"]))
    assert {QUESTIONS[0], "What is asked first?", "What follows?"} <= set(search.queries)
    last = [c for c in log if c.kind == "chain" and c.question == QUESTIONS[0]][-1]
    assert last.block.startswith(f"Context1: Could page: About {QUESTIONS[0]}")
    meta_input = row["rounds"][0]["meta"]["input"][-1]["content"]
    assert "What is asked first? | What page: About What is asked first?" in meta_input
    config = load(out / "config.json")
    assert config["strategy"]["retrieval"]["search_url"] == search.url
