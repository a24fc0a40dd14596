"""Fail fast, say why: every command that asks a model checks its endpoint and credentials
before the first batch (a refused connection, a host that does not resolve, a refused key end
it with exit status 2 and one line naming the URL, the model and the cause), resolves models
the same way, and accounts for failed requests by class at the end, with the server's words.

All against real loopback servers (tests/openai_server.py, tests/anthropic_server.py); nothing
leaves the machine: a public endpoint is only named, never reached (the key check comes first).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine.providers import ModelSpec, make_backend, resolve
from hopscore.errors import HopscoreError
from hopscore.judge.judge_config import JudgeConfig, split_model
from tests.conftest import CliResult, run_cli
from tests.hdr.world import build_world
from tests.openai_server import FakeOpenAI, Reply, ServerBehaviour
from tests.run.helpers import run_args
from tests.run.test_prompts import GOLDS

#: what a command may take to give up on a dead endpoint (the interpreter's start included;
#: measured 1.2-1.7 s here, the limit is generous for a loaded machine)
WITHIN_S = 10.0
NO_KEYS = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "ANTHROPIC_API_KEY": "",
           "ANTHROPIC_BASE_URL": "", "JUDGE_API_KEY": "", "JUDGE_BASE_URL": "",
           "JUDGE_MODEL": ""}


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@contextlib.contextmanager
def unanswered_url() -> Iterator[str]:
    """A loopback port whose connections are never answered, as a host that drops packets:
    it listens with a backlog of 0 and never accepts, and its queue is filled first, so the
    kernel drops every further SYN (the client sends it again and again, then times out)."""
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(socket.socket())
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        for _ in range(3):
            filler = stack.enter_context(socket.socket())
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
        time.sleep(0.2)  # the queued handshakes complete
        yield f"http://127.0.0.1:{port}/v1"


def examples(run: Path) -> int:
    """How many examples a run asked about (its samples)."""
    return len((run / "samples.jsonl").read_text(encoding="utf-8").splitlines())


def judge_input(tmp_path: Path) -> Path:
    rows = [{"question": f"Q{i}?", "response": f"A{i}", "correct_answer": f"A{i}"}
            for i in range(3)]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def command(kind: str, url: str, tmp_path: Path, env: dict[str, str] | None = None
            ) -> CliResult:
    """``hopscore run``, ``judge`` or the agent against ``url``."""
    cache = tmp_path / "cache"
    if kind == "run":
        args = run_args("bamboogle", url, tmp_path / "run", cache)
    elif kind == "judge":
        args = ["judge", "-i", judge_input(tmp_path), "-o", tmp_path / "judged.jsonl",
                "--model", "judge-m", "--base-url", url, "--cache-dir", cache, "--no-progress"]
    else:
        world = build_world(tmp_path / "world")
        args = ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                world.db_root, "--corpus", world.corpus, "--model", "openai/agent",
                "--base-url", url, "--judge-model", "judge-m", "--judge-base-url", url,
                "--output-dir", tmp_path / "hdr", "--cache-dir", cache, "--no-progress"]
    return run_cli(*args, env={**NO_KEYS, **(env or {})}, timeout=120)


@pytest.mark.parametrize("kind", ["run", "judge", "agent"])
@pytest.mark.parametrize("where", ["closed port", "unresolvable host"])
def test_a_dead_endpoint_ends_the_command_within_seconds(tmp_path: Path, kind: str,
                                                         where: str) -> None:
    url = closed_port_url() if where == "closed port" else "http://hopscore-test.invalid/v1"
    started = time.monotonic()
    result = command(kind, url, tmp_path)
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert elapsed < WITHIN_S, elapsed
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    cause = "connection refused" if where == "closed port" else "does not resolve"
    assert url in lines[0] and cause in lines[0], lines[0]
    model = {"run": "openai/test-model", "judge": "judge-m", "agent": "openai/agent"}[kind]
    assert model in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_connection_never_answered_ends_the_command_after_the_check(tmp_path: Path) -> None:
    """A host that drops packets: the connection is not answered within the check's 5 s, and
    the command ends there (it used to go on, each request waiting out its timeouts)."""
    with unanswered_url() as url:
        started = time.monotonic()
        result = command("run", url, tmp_path)
        elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert 5.0 <= elapsed < 5.0 + WITHIN_S, elapsed  # measured 5.6 s here
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    assert url in lines[0] and "openai/test-model" in lines[0]
    assert "no answer to the connection within 5 s" in lines[0]
    assert "Traceback" not in result.stderr


def test_a_connect_timeout_is_fatal_and_a_slow_answer_is_not() -> None:
    """What the check tells apart, with a short timeout: a connection not answered (fatal)
    and a server that accepted it but answers after the timeout (left to the run)."""
    from hopscore.engine.preflight import check_endpoint
    from hopscore.engine.providers import EndpointUnusable

    with unanswered_url() as url, \
            pytest.raises(EndpointUnusable, match="no answer to the connection within 1 s"):
        asyncio.run(check_endpoint((f"{url}/models", None, {}), "m", timeout=1.0))
    with FakeOpenAI(lambda prompt, attempt: Reply("x"), models=["m"]) as server:
        server.listing_delay = 2.0
        info = asyncio.run(check_endpoint((f"{server.base_url}/models", None, {}), "m",
                                          timeout=1.0))
    assert info.model_entry is None  # no listing came: nothing known, nothing fatal


@pytest.mark.slow
def test_a_slow_but_alive_server_passes_the_check(tmp_path: Path) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), models=["test-model"]) as server:
        server.listing_delay = 3.0
        result = command("run", server.base_url, tmp_path)
        sent = len(server.log)
    assert result.returncode in (0, 1), result.stderr
    assert sent == examples(tmp_path / "run") > 0


def test_a_tls_failure_ends_the_command(tmp_path: Path) -> None:
    """https:// at a server that speaks plain HTTP: the handshake fails, no retry helps."""
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x")) as server:
        url = server.base_url.replace("http://", "https://")
        result = command("run", url, tmp_path)
        sent = len(server.log)
    assert result.returncode == 2 and sent == 0
    line = next(x for x in result.stderr.splitlines() if x.startswith("error:"))
    assert url in line and "TLS failure" in line and "plain HTTP" in line


@pytest.mark.parametrize("kind", ["run", "judge", "agent"])
def test_a_refused_key_ends_the_command_before_any_request(tmp_path: Path, kind: str) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), api_key="sk-right") as server:
        result = command(kind, server.base_url, tmp_path,
                         env={"OPENAI_API_KEY": "sk-wrong", "JUDGE_API_KEY": "sk-wrong"})
        sent = len(server.log)
    assert result.returncode == 2, result.stderr
    assert sent == 0  # the listing was asked, no chat request
    assert server.base_url in result.stderr and "HTTP 401" in result.stderr
    assert "Incorrect API key provided" in result.stderr  # the server's own words


def test_the_right_key_passes_and_the_run_goes_on(tmp_path: Path) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), api_key="sk-right",
                    models=["test-model"]) as server:
        result = command("run", server.base_url, tmp_path, env={"OPENAI_API_KEY": "sk-right"})
    assert result.returncode in (0, 1), result.stderr  # answered (scores are not the point)
    assert len(server.log) == examples(tmp_path / "run") > 0
    # the check before the first batch, then the engine asking how many requests the server
    # takes at once (engine/capacity.py: llama.cpp's /props and /slots, /metrics)
    assert server.gets[:2] == ["/v1/models", "/props"]
    assert set(server.gets[2:]) <= {"/props", "/slots", "/metrics"}, server.gets


def test_public_endpoints_need_a_key(tmp_path: Path) -> None:
    gold = GOLDS["bamboogle"][0]
    run = run_cli("run", "bamboogle", "--gold", gold, "--model", "openai/gpt-4o-mini", "-o",
                  tmp_path / "r", env=NO_KEYS)
    assert run.returncode == 2
    assert "https://api.openai.com/v1" in run.stderr and "OPENAI_API_KEY" in run.stderr
    claude = run_cli("run", "bamboogle", "--gold", gold, "--model", "anthropic/claude-x", "-o",
                     tmp_path / "c", env=NO_KEYS)
    assert claude.returncode == 2
    assert "https://api.anthropic.com" in claude.stderr and "ANTHROPIC_API_KEY" in claude.stderr
    judge = run_cli("judge", "-i", judge_input(tmp_path), "-o", tmp_path / "j.jsonl",
                    "--model", "gpt-4.1-mini", env=NO_KEYS)
    assert judge.returncode == 2 and "needs an API key" in judge.stderr
    assert "JUDGE_API_KEY or OPENAI_API_KEY" in judge.stderr


def test_a_key_variable_that_is_not_set_is_an_error(tmp_path: Path) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x")) as server:
        result = command("run", server.base_url, tmp_path)
        ok_gets = list(server.gets)
        named = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "run2",
                                  tmp_path / "cache", "--api-key-env", "MY_KEY"),
                        env={**NO_KEYS, "MY_KEY": ""})
        assert len(server.gets) == len(ok_gets)  # refused before asking anything
    # a server of your own needs no key: the default variable unset is fine
    assert result.returncode in (0, 1), result.stderr
    assert named.returncode == 2 and "--api-key-env MY_KEY" in named.stderr
    assert "not set" in named.stderr


def test_the_readme_tour_needs_no_key_with_a_base_url(tmp_path: Path) -> None:
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x")) as server:
        result = run_cli("run", "bamboogle", "--gold", GOLDS["bamboogle"][0], "--model",
                         "openai/gpt-4o-mini", "-o", tmp_path / "run", "--cache-dir",
                         tmp_path / "cache", "--no-progress",
                         env={**NO_KEYS, "OPENAI_BASE_URL": server.base_url})
        headers = server.log[0].headers
    assert result.returncode in (0, 1), result.stderr
    assert headers["authorization"] == "Bearer EMPTY"


def test_one_resolver_for_run_judge_and_agent() -> None:
    for text in ("Qwen/Qwen3-8B", "openai/Qwen/Qwen3-8B"):
        assert ModelSpec.parse(text) == ModelSpec("openai", "Qwen/Qwen3-8B")
        assert split_model(text) == ("openai", "Qwen/Qwen3-8B")
    assert split_model("anthropic/claude-x") == ("anthropic", "claude-x")
    assert split_model("local/smollm2") == ("local", "smollm2")
    with pytest.raises(HopscoreError, match="the local provider has smollm2"):
        ModelSpec.parse("local/llama")
    with pytest.raises(HopscoreError, match="give the model's name"):
        ModelSpec.parse("anthropic/")
    # the local model judges only where the command loads it: refused at once elsewhere
    config = JudgeConfig(model="local/smollm2")
    assert config.target().spec.is_local
    with pytest.raises(HopscoreError, match="runs in the process"):
        make_backend(config.target())
    target = resolve("local/smollm2", None, "JUDGE_API_KEY", default_key_env="JUDGE_API_KEY")
    assert target.api_key == "EMPTY" and target.key_env is None


def test_an_anthropic_key_is_checked_before_any_request(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    from tests.anthropic_server import FakeAnthropic, Message

    with FakeAnthropic(lambda body, attempt: Message("Answer: x"), api_key="sk-ant") as claude:
        result = run_cli("run", "bamboogle", "--gold", GOLDS["bamboogle"][0], "--model",
                         "anthropic/claude-test", "--base-url", claude.base_url, "-o",
                         tmp_path / "run", "--no-progress", "--cache-dir", tmp_path / "cache",
                         env={**NO_KEYS, "ANTHROPIC_API_KEY": "sk-wrong"})
        sent = len(claude.log)
    assert result.returncode == 2, result.stderr
    assert sent == 0 and claude.gets == ["/v1/models"]
    assert claude.base_url in result.stderr and "invalid x-api-key" in result.stderr


def test_a_context_overflow_is_said_with_the_servers_words(tmp_path: Path) -> None:
    behaviour = ServerBehaviour(context_limit=60)
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), behaviour=behaviour) as server:
        result = command("run", server.base_url, tmp_path)
        sent = len(server.log)
    n = examples(tmp_path / "run")
    assert result.returncode == 1
    assert sent == n  # not retried: a 400 fails the same way again
    lines = [line for line in result.stderr.splitlines() if "with context_overflow" in line]
    assert len(lines) == 1, result.stderr
    assert f"{n} samples failed with context_overflow" in lines[0]
    assert "This model's maximum context length is 60 tokens" in lines[0]
    assert "a re-run fails the same way" in lines[0]
    assert f"incomplete: {n} of {n} samples have no answer" in result.stderr
    assert "no score to show" in result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["run"]["failures"]["context_overflow"]["count"] == n
    text = json.dumps(metrics)
    assert "a re-run would fail them the same way" in text and "retry only" not in text


def test_judge_failures_are_counted_by_class(tmp_path: Path) -> None:
    def answer(prompt: str, attempt: int) -> Reply:
        if "Q0?" in prompt:
            return Reply(status=400, body=b'{"error": {"message": "request (5000 tokens) '
                                          b'exceeds the available context size (4096 tokens)"}}')
        return Reply("extracted_final_answer: A\nreasoning: r\ncorrect: yes\nconfidence: 90%")

    with FakeOpenAI(answer) as server:
        result = command("judge", server.base_url, tmp_path)
    assert result.returncode == 1
    assert "1 row failed with context_overflow" in result.stderr
    assert "exceeds the available context size (4096 tokens)" in result.stderr
    assert "re-run the same command to retry" not in result.stderr


def test_a_server_restarted_with_another_template_does_not_get_old_replies(
        tmp_path: Path) -> None:
    props: dict[str, Any] = {"model_path": "/models/m.gguf", "chat_template": "{{ A }}",
                             "chat_template_caps": {"supports_tools": False}}
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: x"), models=["m.gguf"],
                    props=props) as server:
        cache = tmp_path / "cache"
        first = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "a", cache))
        again = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "b", cache))
        counts = [len(server.log)]
        server.props = {**props, "chat_template": "{{ B }}"}  # restarted, same URL and name
        changed = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "c", cache))
        counts.append(len(server.log))
        settled = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "d", cache))
        counts.append(len(server.log))
    for result in (first, again, changed, settled):
        assert result.returncode == 0, result.stderr
    n = examples(tmp_path / "a")
    assert counts == [n, 2 * n, 2 * n]  # the second run came from the cache, the third not
    assert "not reused" in changed.stderr and server.base_url in changed.stderr
    assert "not reused" not in again.stderr + settled.stderr


def test_the_tool_call_advice_reads_the_servers_template() -> None:
    from hopscore.agent.endpoints import no_tool_call_hint

    without = no_tool_call_hint("native", {"chat_template": "x",
                                           "chat_template_caps": {"supports_tools": False}})
    assert "chat template has no tool support" in without
    with_tools = no_tool_call_hint("native", {"chat_template": "x", "chat_template_caps": {
        "supports_tools": True, "supports_tool_calls": True}})
    assert "--jinja" not in with_tools and "supports tools" in with_tools
    assert "--jinja" in no_tool_call_hint("native", None)


def test_the_agent_run_warns_from_props(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    props = {"model_path": "/m.gguf", "chat_template": "plain",
             "chat_template_caps": {"supports_tools": False, "supports_tool_calls": False}}
    with FakeOpenAI(lambda prompt, attempt: Reply("I cannot call tools."), models=["m"],
                    props=props) as server:
        result = run_cli("run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                         world.db_root, "--corpus", world.corpus, "--model", "openai/agent",
                         "--base-url", server.base_url, "--no-grade", "--max-turns", "2",
                         "--tool-protocol", "native", "--output-dir", tmp_path / "hdr",
                         "--cache-dir", tmp_path / "cache", "--no-progress",
                         "--max-text-turns", "1")
    assert "returned no tool call" in result.stderr, result.stderr
    assert "chat template has no tool support" in result.stderr
    assert "llama.cpp --jinja" not in result.stderr


@pytest.mark.slow
def test_the_local_model_judges_in_the_judge_command(tmp_path: Path) -> None:
    """``hopscore judge --model local/smollm2`` loads the local model (no endpoint, no key):
    it used to send "local/smollm2" to OpenAI's endpoint."""
    from hopscore.engine.local import missing_requirements

    if missing_requirements():
        pytest.skip(f"the local model needs {', '.join(missing_requirements())}")
    rows = tmp_path / "answers.jsonl"
    rows.write_text(json.dumps({"question": "Capital of France?", "response": "Paris",
                                "correct_answer": "Paris"}) + "\n", encoding="utf-8")
    out = tmp_path / "judged.jsonl"
    result = run_cli("judge", "-i", rows, "-o", out, "--model", "local/smollm2", "--max-tokens",
                     "8", "--cache-dir", tmp_path / "cache", "--no-progress", env=NO_KEYS,
                     timeout=900)
    assert result.returncode == 0, result.stderr
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["judge"]["status"] == "judged" and row["judge"]["model"] == "local/smollm2"
    assert row["judge"]["endpoint"].startswith("local:")


def test_the_server_identity_leaves_out_what_changes_at_every_listing() -> None:
    """vLLM makes a new permission id and time for every listing, and llama.cpp's server puts
    the current time in ``created``: neither may make cached replies look stale."""
    from hopscore.engine.preflight import EndpointInfo, listing_entry

    def vllm(permission: str, created: int) -> bytes:
        return json.dumps({"object": "list", "data": [{
            "id": "Qwen/Qwen3-8B", "object": "model", "created": created, "owned_by": "vllm",
            "root": "Qwen/Qwen3-8B", "parent": None, "max_model_len": 32768,
            "permission": [{"id": f"modelperm-{permission}", "created": created}]}]}).encode()

    first = EndpointInfo("u", listing_entry(vllm("a1", 1), "Qwen/Qwen3-8B"))
    second = EndpointInfo("u", listing_entry(vllm("b2", 2), "Qwen/Qwen3-8B"))
    assert first.identity is not None and first.identity == second.identity
    props = {"chat_template": "A", "model_path": "/m.gguf"}
    assert EndpointInfo("u", None, props).identity != \
        EndpointInfo("u", None, {**props, "chat_template": "B"}).identity
    assert EndpointInfo("u").identity is None  # the server said nothing: nothing to compare


def test_an_unknown_model_stops_at_its_first_reply_naming_endpoint_and_model(
        tmp_path: Path) -> None:
    not_found = Reply(status=404, body=b'{"error": {"message": "The model `test-model` does '
                                       b'not exist", "code": "model_not_found"}}')
    with FakeOpenAI(lambda prompt, attempt: not_found) as server:
        started = time.monotonic()
        result = command("run", server.base_url, tmp_path)
        elapsed = time.monotonic() - started
        sent = len(server.log)
    assert result.returncode == 2 and elapsed < WITHIN_S
    assert sent <= 9  # the first wave at most (--concurrency 8, one more ready), no retry
    line = next(x for x in result.stderr.splitlines() if x.startswith("error:"))
    assert f"{server.base_url} refused openai/test-model" in line
    assert "The model `test-model` does not exist" in line


def test_the_suite_stops_at_a_dead_endpoint_instead_of_failing_each_dataset(
        tmp_path: Path) -> None:
    from tests.run.test_suite import data_dir

    url = closed_port_url()
    result = run_cli("suite", "mcr", "--data-dir", data_dir(tmp_path / "data"), "--model",
                     "openai/test-model", "--base-url", url, "--output-dir", tmp_path / "suite",
                     "--cache-dir", tmp_path / "cache", "--no-progress", "--limit", "1",
                     env=NO_KEYS)
    assert result.returncode == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and url in errors[0] and "connection refused" in errors[0]
