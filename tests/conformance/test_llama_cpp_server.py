"""hopscore against a real OpenAI-compatible server nobody here wrote: llama-cpp-python's server
with SmolLM2-135M-Instruct (issue 12). A QA run, a judge run, and the HybridDeepResearch agent
on the toy world with native tools (``--chat_format chatml-function-calling``) and with a plain
chat template (``chatml``: the tools are dropped, ``auto`` goes over to the text protocol), all
at concurrency 8 against a server that answers one request at a time. Each run must finish with
no HTTP 500, the agent runs with at least one real tool call, and the server must have computed
every request exactly once: the requests it logged equal the requests hopscore made, none was
abandoned by a timed-out client, and (plain template: one completion per request) the model ran
once per request.

Slow (minutes: the model runs on one CPU thread); skipped cleanly when llama-cpp-python's
server or the SmolLM2 weights are not installed. ``.ci/run`` builds and installs both.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.data import hotpot_gold, judge_input, write_gold
from tests.conformance.llama_server import LlamaServer, missing
from tests.conftest import run_cli
from tests.hdr.world import TASKS, build_world

pytestmark = [pytest.mark.slow, pytest.mark.skipif(missing() is not None,
                                                    reason=str(missing()))]

SAMPLES = 8


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def chatml(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with LlamaServer("chatml", tmp_path_factory.mktemp("chatml") / "server.log") as server:
        yield server


@pytest.fixture(scope="module")
def function_calling(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    log = tmp_path_factory.mktemp("function-calling") / "server.log"
    with LlamaServer("chatml-function-calling", log) as server:
        yield server


def one_latency(server: LlamaServer) -> float:
    """Seconds the server takes for one QA-sized request (the same shape as the run's)."""
    example = hotpot_gold(SAMPLES + 1)[-1]
    context = "\n".join(f"{t}: {''.join(s)}" for t, s in example["context"])
    started = time.monotonic()
    status, _ = server.chat({"model": "smollm2", "max_tokens": 48, "temperature": 0,
                             "messages": [{"role": "user",
                                           "content": f"{context}\n\n{example['question']}"}]})
    assert status == 200
    return time.monotonic() - started


def no_duplicates(server: LlamaServer, since: int, requests: int, *, one_each: bool,
                  what: str = "", samples: int = 0) -> None:
    statuses = server.statuses(since)
    # the figures, for the record (pytest -s shows them)
    print(f"\n[conformance] {what}: {samples} samples, {requests} requests made, "
          f"{len(statuses)} answered in the server log, {server.abandoned(since)} abandoned, "
          f"{server.computations(since)} completions computed")
    assert 500 not in statuses, statuses
    assert len(statuses) == requests, (statuses, requests)
    assert server.abandoned(since) == 0
    if one_each:
        assert server.computations(since) == requests


def test_qa_run(chatml: LlamaServer, tmp_path: Path) -> None:
    """8 HotpotQA prompts of ~700 tokens at the default concurrency 8, with --timeout four
    times one request's latency: a client that sends all 8 at once times the last ones out
    while they wait in the server's queue and sends them again (issue 12: 10 requests for 8)."""
    gold = write_gold(tmp_path / "gold.json", SAMPLES)
    timeout = max(20.0, 4 * one_latency(chatml))
    since = chatml.mark()
    out = tmp_path / "run"
    result = run_cli("run", "hotpotqa", "--gold", gold, "--model", "openai/smollm2",
                     "--base-url", chatml.base_url, "-o", out, "--no-cache", "--no-progress",
                     "--max-tokens", "48", "--timeout", f"{timeout:.0f}", timeout=1800)
    assert result.returncode == 0, result.stderr
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == SAMPLES and all(s["error"] is None for s in samples)
    assert all(s["raw_output"] for s in samples)
    config = json.loads((out / "config.json").read_text())
    assert config["requests"]["sent"] == SAMPLES and config["requests"]["retries"] == 0
    no_duplicates(chatml, since, SAMPLES, one_each=True, what="QA run", samples=SAMPLES)


def test_judge_run(chatml: LlamaServer, tmp_path: Path) -> None:
    rows = judge_input(tmp_path / "rows.jsonl", SAMPLES)
    since = chatml.mark()
    out = tmp_path / "judged.jsonl"
    result = run_cli("judge", "--input", rows, "--output", out, "--model", "smollm2",
                     "--base-url", chatml.base_url, "--no-cache", "--no-progress",
                     "--max-tokens", "64", "--timeout", "300", timeout=1800)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    judged = jsonl(out)
    assert len(judged) == SAMPLES
    # every row carries the judge's raw reply, parsed or not; none is an API error
    assert all(row.get("raw_judge_output") for row in judged), judged[0]
    assert all(not row.get("error") for row in judged)
    no_duplicates(chatml, since, SAMPLES, one_each=True, what="judge run", samples=SAMPLES)


def run_agent(server: LlamaServer, root: Path, *extra: str) -> tuple[Path, Any]:
    world = build_world(root, [TASKS[0], TASKS[2]])  # S2SQL (execution match), SQL2S (judge)
    out = root / "run"
    result = run_cli(
        "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
        "--corpus", world.corpus, "--model", "openai/smollm2", "--base-url", server.base_url,
        "--judge-model", "smollm2", "--judge-base-url", server.base_url, "-o", out,
        "--no-cache", "--no-progress", "--concurrency", "8", "--max-tokens", "128",
        "--max-context-tokens", "4096", "--timeout", "600", *extra, timeout=2400)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return out, result


def agent_requests(out: Path) -> int:
    """Requests the agent and its judge made (no cache: every one was sent)."""
    samples = jsonl(out / "samples.jsonl")
    agent = sum(s["model_calls"] for s in samples)
    judged = out / "judge.jsonl"
    judge = sum(sent(r) for r in jsonl(judged)) if judged.exists() else 0
    return agent + judge


def sent(row: dict[str, Any]) -> int:
    """Requests behind one judge row: its attempt records when the engine writes them."""
    attempts = row.get("attempts")
    if isinstance(attempts, list):
        return max(1, len(attempts))
    return int(attempts) if isinstance(attempts, int) and attempts > 0 else 1


def check_agent(server: LlamaServer, since: int, out: Path, *, one_each: bool,
                what: str) -> list[dict]:
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == 2
    assert all(s["status"] != "model_error" for s in samples), [s["error"] for s in samples]
    calls = [c for s in samples for c in s["tool_calls"]]
    assert calls, "no tool call came back from the real server"
    assert all(c["latency_s"] is None or c["result_chars"] > 0 for c in calls)
    for sample in samples:
        trajectory = json.loads((out / sample["trajectory_file"]).read_text())
        ids = [c["id"] for m in trajectory["messages"] for c in m.get("tool_calls") or []]
        assert ids == [m["tool_call_id"] for m in trajectory["messages"] if m["role"] == "tool"]
    assert (out / "metrics.json").exists()
    no_duplicates(server, since, agent_requests(out), one_each=one_each, what=what,
                  samples=len(samples))
    return samples


def test_agent_native_tools(function_calling: LlamaServer, tmp_path: Path) -> None:
    """chatml-function-calling answers tool_calls; the follow-up requests carry the tool-call
    turns with "" content (null was HTTP 500 here) and every result, and no attempt fails."""
    since = function_calling.mark()
    out, _ = run_agent(function_calling, tmp_path, "--max-turns", "2")
    samples = check_agent(function_calling, since, out, one_each=False,
                          what="HDR agent, chatml-function-calling")
    assert {s["tool_protocol"] for s in samples} == {"native"}
    config = json.loads((out / "config.json").read_text())
    assert config["tool_protocol"]["used"] == "native"
    assert config["tool_protocol"]["native_tool_calls"] >= 1


def test_agent_plain_template_goes_to_text(chatml: LlamaServer, tmp_path: Path) -> None:
    """A plain chatml template drops the tools; ``auto`` notices, warns and goes on in the text
    protocol, where the model's calls flow through."""
    since = chatml.mark()
    out, result = run_agent(chatml, tmp_path, "--max-turns", "6")
    assert "does not take the offered tools natively" in result.stderr
    samples = check_agent(chatml, since, out, one_each=True, what="HDR agent, plain chatml")
    assert all(s["tool_protocol"] in ("native->text", "text") for s in samples)
    config = json.loads((out / "config.json").read_text())
    assert config["tool_protocol"]["used"] == "text"
    assert config["tool_protocol"]["text_tool_calls"] >= 1


def test_tool_choice_required_fails_with_a_named_error(function_calling: LlamaServer,
                                                      tmp_path: Path) -> None:
    """chatml-function-calling only knows tool_choice auto or a named function: "required" is
    HTTP 500 with an empty error message, which the attempt records with its status instead of
    as '' (issue 12)."""
    world = build_world(tmp_path, [TASKS[0]])
    result = run_cli(
        "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
        "--corpus", world.corpus, "--model", "openai/smollm2", "--base-url",
        function_calling.base_url, "--no-grade", "-o", tmp_path / "run", "--no-cache",
        "--no-progress", "--tool-choice", "required", "--max-retries", "0", timeout=600)
    assert result.returncode == 1, result.stderr
    [sample] = jsonl(tmp_path / "run" / "samples.jsonl")
    assert sample["status"] == "model_error"
    error = sample["error"]
    assert error["status"] == 500 and error["message"].strip()
    assert "500" in error["message"] or "empty" in error["message"].lower()
