"""The search agent (``hopscore agent BENCH --agent search``): a scripted stand-in server searches
the bundled toy corpus with <search> tags and with native tool calls, answers, and the run is
scored by the benchmark, with the searches, the retrieved ids and the recall of the gold
paragraphs in its rows and metrics; a killed run resumes without losing or repeating a row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks import sample_files
from hopscore.benchmarks.hotpotqa.example import HotpotExample
from hopscore.run.gold_corpus import corpus_records
from hopscore.run.retrieval import read_corpus, split_title
from hopscore.run.search_agent import answer_in, format_passages, query_in
from hopscore.run.search_recall import search_block
from tests.conftest import kill_cli_when, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import load, rows

MODEL = "openai/test-model"
#: the QA benchmarks whose samples ship a toy corpus
WITH_CORPUS = [name for name in benchmarks.names()
               if (s := sample_files.sample_of(name)) is not None and s.corpus is not None]


def sample_paths(name: str) -> tuple[Path, Path]:
    sample = sample_files.require(name)
    assert sample.corpus is not None
    return Path(str(sample.folder / sample.gold)), Path(str(sample.folder / sample.corpus))


def script(name: str, *, native: bool) -> Any:
    """A body responder playing a good agent on ``name``'s sample: it searches the titles of
    the gold paragraphs, one per turn, then answers with the gold answer."""
    gold, _ = sample_paths(name)
    plans = {}
    for example in benchmarks.get(name).load_gold(gold):
        titles = list(example.gold_titles() or ())
        plans[example.question.strip()] = (titles, example.gold_answers()[0])

    def reply(body: dict[str, Any], attempt: int) -> Reply:
        messages = body["messages"]
        question = messages[1]["content"].removeprefix("Question: ").strip()
        titles, answer = plans[question]
        done = sum(m["role"] == "assistant" for m in messages)
        if done >= len(titles):
            return Reply(f"I have what I need. <answer>{answer}</answer>")
        if native:
            assert [t["function"]["name"] for t in body["tools"]] == ["search"]
            assert body["tool_choice"] == "auto"  # the model may answer instead of searching
            call = {"id": f"call_{done}", "type": "function",
                    "function": {"name": "search", "arguments": json.dumps(
                        {"query": titles[done]})}}
            return Reply("", tool_calls=[call])
        assert body["stop"] == ["</search>"]
        # a server that ignores the stop string: what follows the query is dropped
        return Reply(f"First {titles[done]}. <search>{titles[done]}</search>\n"
                     "<information>invented</information>")

    return reply


def agent_args(name: str, base_url: str, out: Path, *extra: Any) -> list[Any]:
    gold, corpus = sample_paths(name)
    return ["agent", name, "--agent", "search", "--gold", gold, "--corpus", corpus, "--model",
            MODEL, "--base-url", base_url, "-o", out, "--cache-dir", out.parent / "cache",
            "--no-progress", "--resamples", "0", *extra]


@pytest.mark.parametrize("name", WITH_CORPUS)
@pytest.mark.parametrize("protocol", ["tags", "native"])
def test_search_agent_answers_from_the_toy_corpus(tmp_path: Path, name: str,
                                                  protocol: str) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=script(name, native=protocol == "native")) as server:
        result = run_cli(*agent_args(name, server.base_url, out, "--search-protocol", protocol,
                                     "--top-k", "2"))
    assert result.returncode == 0, result.stderr
    table = rows(out / "samples.jsonl")
    examples = benchmarks.get(name).load_gold(sample_paths(name)[0])
    assert sorted(r["id"] for r in table) == sorted(e.id for e in examples)
    metrics = load(out / "metrics.json")
    search = metrics["search"]
    assert search["questions"] == len(examples)
    assert search["statuses"] == {"answered": len(examples)}
    searched = sum(len(e.gold_titles() or ()) for e in examples)
    assert search["search_calls"] == searched
    assert search["search_calls_per_question"] == pytest.approx(searched / len(examples))
    # every gold title was searched for by name in a corpus holding it: all found
    assert search["retrieval_recall"] == pytest.approx(1.0)
    for row in table:
        assert row["agent_status"] == "answered" and row["error"] is None
        assert len(row["searches"]) == row["search_calls"]
        assert row["retrieved"] and len(row["retrieved"]) == len(set(row["retrieved"]))
        assert all(len(s["ids"]) <= 2 for s in row["searches"])
        roles = [m["role"] for m in row["messages"]]
        shown = "tool" if protocol == "native" else "user"
        assert roles[:2] == ["system", "user"] and roles.count(shown) >= row["search_calls"]
        if protocol == "tags":
            said = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
            assert all("invented" not in text for text in said)
            assert "<information>" in row["messages"][3]["content"]
    bench = benchmarks.get(name)
    answer_metric = bench.answer_metric or bench.metrics[0]
    # the benchmark's own metrics on the answers (the gold answer every time)
    assert metrics["metrics"][answer_metric] == 1.0
    config = load(out / "config.json")
    assert config["agent"]["protocol"] == protocol and config["agent"]["top_k"] == 2
    assert "search calls per question" in result.stdout


@pytest.mark.parametrize("name", [n for n in ("hotpotqa", "musique") if n in WITH_CORPUS])
def test_search_agent_resumes_after_a_kill(tmp_path: Path, name: str) -> None:
    out = tmp_path / "run"
    count = len(benchmarks.get(name).load_gold(sample_paths(name)[0]))
    with FakeOpenAI(body_responder=script(name, native=False), latency=0.05) as server:
        args = agent_args(name, server.base_url, out, "--concurrency", "1",
                          "--fixed-concurrency")
        kill_cli_when(*args, watched=out / "samples.jsonl", lines=2)
        kept = {r["id"] for r in rows(out / "samples.jsonl")}
        assert 2 <= len(kept) < count
        asked_before = len(server.log)
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        # the questions finished before the kill were not asked again
        again = [e.body["messages"][1]["content"] for e in server.log[asked_before:]]
    table = rows(out / "samples.jsonl")
    assert len(table) == count and len({r["id"] for r in table}) == count
    questions = {r["id"]: r["question"].strip() for r in table}
    assert again and not any(f"Question: {questions[i]}" == text for i in kept
                             for text in again)
    metrics = load(out / "metrics.json")["search"]
    assert metrics["questions"] == count and metrics["retrieval_recall"] == pytest.approx(1.0)


def test_search_agent_turn_limit_and_reminder(tmp_path: Path) -> None:
    """A model that never searches nor answers is reminded and stops at --max-turns, with no
    answer (scored 0); --max-turns is the agent's turn limit."""
    out = tmp_path / "run"
    with FakeOpenAI(lambda prompt, attempt: Reply("Let me think about it.")) as server:
        result = run_cli(*agent_args("hotpotqa", server.base_url, out, "--max-turns", "3",
                                     "--limit", "1"))
        assert server.count("<answer>answer</answer>") == 2  # the reminder, twice
    assert result.returncode == 0, result.stderr
    (row,) = rows(out / "samples.jsonl")
    assert row["agent_status"] == "max_turns" and row["turns"] == 3 and row["answer"] is None
    assert row["search_calls"] == 0
    search = load(out / "metrics.json")["search"]
    assert search["retrieval_recall"] == 0.0 and search["statuses"] == {"max_turns": 1}


def test_tags_are_read_as_the_protocol_says() -> None:
    assert query_in("x <search> who </search> y") == ("who", "x <search> who </search>")
    assert query_in("<search>cut at the end") == ("cut at the end", "<search>cut at the end"
                                                  "</search>")
    assert query_in("<answer>Paris</answer> <search>more</search>") is None
    assert query_in("no tags") is None
    assert answer_in("<answer> a </answer> then <answer>b</answer>") == "b"
    assert answer_in("<answer>open at the end") == "open at the end"
    assert answer_in("none") is None


def test_flashrag_contents_split_into_title_and_text(tmp_path: Path) -> None:
    assert split_title('"Evan Morris"\nEvan Morris was') == ("Evan Morris", "Evan Morris was")
    assert split_title("one line") == ("", "one line")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "7", "contents": '"A B"\ntext'}) + "\n"
                      + json.dumps({"id": "8", "title": "T", "text": "plain"}) + "\n")
    docs = read_corpus(corpus)
    assert [(d.id, d.title, d.text) for d in docs] == [("7", "A B", "text"), ("8", "T", "plain")]
    shown = format_passages(docs, 3)
    assert shown == '[1] "A B" tex ...\n[2] "T" pla ...'


def test_shared_flashrag_corpus_reads_when_present() -> None:
    import os

    root = os.environ.get("HOPSCORE_SHARED_DATA")
    path = Path(root or "/nonexistent") / "flashrag" / "search-r1-example" / "corpus.jsonl"
    if not path.is_file():
        pytest.skip("HOPSCORE_SHARED_DATA with flashrag/ not available")
    docs = read_corpus(path)
    assert len(docs) == 10 and docs[0].title == "Evan Morris"
    assert not docs[0].text.startswith('"')


def test_bundled_corpora_are_the_builders_output() -> None:
    for name in WITH_CORPUS:
        gold, corpus = sample_paths(name)
        made = corpus_records(benchmarks.get(name).load_gold(gold))
        assert [json.loads(line) for line in corpus.read_text().splitlines()] == made


def test_recall_is_over_gold_titles() -> None:
    def example(i: str, titles: list[str]) -> HotpotExample:
        return HotpotExample(id=i, answer="x", supporting_facts=tuple((t, 0) for t in titles))

    examples = [example("a", ["A", "B"]), example("b", ["C"]), example("c", [])]
    found = {"a": {"retrieved_titles": ["a ", "Z"], "search_calls": 2, "turns": 3,
                   "retrieved": ["1", "9"], "agent_status": "answered", "error": None},
             "b": {"retrieved_titles": ["C"], "search_calls": 1, "turns": 2,
                   "retrieved": ["3"], "agent_status": "answered", "error": None},
             "c": {"retrieved_titles": [], "search_calls": 0, "turns": 8,
                   "retrieved": [], "agent_status": "max_turns", "error": None}}
    block = search_block(examples, found)
    assert block["gold_questions"] == 2  # "c" has no gold paragraphs
    assert block["retrieval_recall"] == pytest.approx((0.5 + 1.0) / 2)
    assert block["all_gold_retrieved"] == pytest.approx(0.5)
    assert block["search_calls_per_question"] == pytest.approx(1.0)
    assert block["statuses"] == {"answered": 2, "max_turns": 1}


def test_report_shows_the_searches_and_the_conversation(tmp_path: Path) -> None:
    from hopscore.report.build import search_view
    from hopscore.report.turns import conversation

    out = tmp_path / "run"
    with FakeOpenAI(body_responder=script("hotpotqa", native=False)) as server:
        assert run_cli(*agent_args("hotpotqa", server.base_url, out)).returncode == 0
    row = rows(out / "samples.jsonl")[0]
    view = search_view(row)
    assert view["search calls"] == str(row["search_calls"])
    assert view["queries"] == " | ".join(s["query"] for s in row["searches"])
    assert row["retrieved_titles"][0] in view["retrieved documents"]
    turns = conversation(row, out, 10_000) or []
    assert [t["role"] for t in turns] == [m["role"] for m in row["messages"]]
    assert any("<information>" in t["text"] for t in turns)
    html = tmp_path / "report.html"
    result = run_cli("report", out, "-o", html)
    assert result.returncode == 0, result.stderr
    page = html.read_text(encoding="utf-8")
    assert "retrieved documents" in page and row["searches"][0]["query"] in page


def test_search_agent_repeats_are_avg_at_k(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=script("hotpotqa", native=False)) as server:
        result = run_cli(*agent_args("hotpotqa", server.base_url, out, "--repeats", "2",
                                     "--temperature", "0.5", "--limit", "2"))
    assert result.returncode == 0, result.stderr
    table = rows(out / "samples.jsonl")
    assert sorted((r["id"], r["attempt"]) for r in table) == sorted(
        (i, j) for i in {r["id"] for r in table} for j in (0, 1))
    metrics = load(out / "metrics.json")
    assert metrics["repeats"] and metrics["search"]["questions"] == 2


def test_a_benchmark_without_gold_paragraphs_has_no_recall(tmp_path: Path) -> None:
    name = "bamboogle"  # questions alone, no paragraphs
    sample = sample_files.require(name)
    gold = Path(str(sample.folder / sample.gold))
    _, corpus = sample_paths("hotpotqa")
    out = tmp_path / "run"
    with FakeOpenAI(lambda prompt, attempt: Reply("<answer>Paris</answer>")) as server:
        result = run_cli("agent", name, "--gold", gold, "--corpus", corpus, "--model", MODEL,
                         "--base-url", server.base_url, "-o", out, "--no-progress",
                         "--resamples", "0", "--limit", "2")
    assert result.returncode == 0, result.stderr
    search = load(out / "metrics.json")["search"]
    assert search["gold_questions"] == 0 and search["retrieval_recall"] is None
    assert "no gold paragraphs" in result.stdout


def test_search_agent_refusals() -> None:
    result = run_cli("agent", "hotpotqa", "--agent", "search", "--gold", "x.json",
                     "--model", MODEL)
    assert result.returncode == 2 and "--corpus" in result.stderr
    bad = run_cli("agent", "hotpotqa", "--search-protocol", "smoke", "--model", MODEL,
                  "--base-url", "http://127.0.0.1:9/v1")
    assert bad.returncode == 2 and "--search-protocol" in bad.stderr


class Embeddings:
    """A loopback ``/v1/embeddings`` stand-in: hashed bag-of-words vectors (64 dimensions), so
    a text and a query sharing words are close; every input is logged."""

    def __init__(self) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.inputs: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.inputs.extend(body["input"])
                data = [{"index": i, "embedding": owner.vector(text)}
                        for i, text in enumerate(body["input"])]
                raw = json.dumps({"data": data, "model": body["model"]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @staticmethod
    def vector(text: str) -> list[float]:
        import hashlib
        import re

        out = [0.0] * 64
        for word in re.findall(r"\w+", text.lower()):
            out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 64] += 1.0
        return out

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Embeddings:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_dense_retriever_through_an_embeddings_endpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _, corpus = sample_paths("hotpotqa")
    documents = len(read_corpus(corpus))
    with Embeddings() as embeddings, \
            FakeOpenAI(body_responder=script("hotpotqa", native=False)) as server:
        args = agent_args("hotpotqa", server.base_url, out, "--retriever", "dense",
                          "--embed-model", "e5-test", "--embed-base-url", embeddings.base_url,
                          "--query-prefix", "query: ", "--passage-prefix", "passage: ")
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        passages = [t for t in embeddings.inputs if t.startswith("passage: ")]
        queries = [t for t in embeddings.inputs if t.startswith("query: ")]
        assert len(passages) == documents  # the corpus, embedded once
        table = rows(out / "samples.jsonl")
        assert len(queries) == sum(r["search_calls"] for r in table)
        search = load(out / "metrics.json")["search"]
        assert search["retrieval_recall"] == pytest.approx(1.0)
        config = load(out / "config.json")["agent"]
        assert config["retriever"] == "dense" and config["index"]["dimensions"] == 64
        # a new run of the same corpus embeds no document again (the cache dir keeps them)
        embeddings.inputs.clear()
        again = run_cli(*agent_args("hotpotqa", server.base_url, tmp_path / "run2",
                                    "--retriever", "dense", "--embed-model", "e5-test",
                                    "--embed-base-url", embeddings.base_url,
                                    "--query-prefix", "query: ", "--passage-prefix",
                                    "passage: "))
        assert again.returncode == 0, again.stderr
        assert not [t for t in embeddings.inputs if t.startswith("passage: ")]


def test_dense_retriever_needs_a_model_and_an_endpoint(tmp_path: Path) -> None:
    gold, corpus = sample_paths("hotpotqa")
    base = ["agent", "hotpotqa", "--gold", gold, "--corpus", corpus, "-o", tmp_path / "r",
            "--no-progress"]
    result = run_cli(*base, "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1",
                     "--retriever", "dense")
    assert result.returncode == 2 and "--embed-model" in result.stderr
    down = run_cli(*base, "--model", MODEL, "--base-url", "http://127.0.0.1:9/v1",
                   "--retriever", "dense", "--embed-model", "m")
    assert down.returncode == 2 and "embeddings endpoint" in down.stderr
