"""hopscore against llama.cpp's own C++ ``llama-server`` (issue 23), the server most people
run models with: SmolLM2-135M-Instruct, one thread, 4 slots (``--parallel 4``), its Jinja
chat template. A QA run, a strategy (self-consistency), the judge, the HybridDeepResearch
agent, Ctrl-C, a server killed mid-run (back within --max-outage, and not), and the request
limit keeping the 4 slots busy (read from the server's own ``/slots``).

Slow (minutes); skipped cleanly when the binary is absent (``HOPSCORE_LLAMA_SERVER`` unset:
``.ci/llama-server.sh`` builds it and ``.ci/run`` sets it, so CI always runs these).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.cpp_server import CppServer, SlotWatch, missing
from tests.conformance.data import judge_input, write_gold
from tests.conftest import run_cli
from tests.fsfaults import interrupt_cli_when
from tests.hdr.world import TASKS, build_world

pytestmark = [pytest.mark.slow, pytest.mark.skipif(missing() is not None,
                                                    reason=str(missing()))]


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CppServer]:
    with CppServer(tmp_path_factory.mktemp("llama-server") / "server.log") as running:
        yield running


def qa_args(gold: Path, base_url: str, out: Path, *extra: str | Path) -> list[str | Path]:
    return ["run", "hotpotqa", "--gold", gold, "--model", "openai/smollm2", "--base-url",
            base_url, "-o", out, "--no-cache", "--no-progress", "--max-tokens", "32",
            "--timeout", "300", "--resamples", "0", *extra]


def test_qa_run(server: CppServer, tmp_path: Path) -> None:
    """8 HotpotQA prompts at the default --concurrency: the limit takes the server's 4 slots
    from /props, every request is computed once."""
    gold = write_gold(tmp_path / "gold.json", 8)
    since = server.mark()
    out = tmp_path / "run"
    result = run_cli(*qa_args(gold, server.base_url, out), timeout=1800)
    assert result.returncode == 0, result.stderr
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == 8 and all(s["error"] is None and s["raw_output"] for s in samples)
    config = json.loads((out / "config.json").read_text())
    requests = config["requests"]
    assert requests["sent"] == 8 and requests["retries"] == 0
    assert requests["concurrency"]["server_slots"] == 4
    assert requests["concurrency"]["lowest"] >= 4
    assert server.computations(since) == 8
    assert "requests in flight at the end" in result.stdout


def test_a_strategy(server: CppServer, tmp_path: Path) -> None:
    """Self-consistency: 3 chains a question, each a request the server computes once."""
    gold = write_gold(tmp_path / "gold.json", 4)
    since = server.mark()
    out = tmp_path / "run"
    result = run_cli(*qa_args(gold, server.base_url, out, "--strategy", "sc", "--chains", "3"),
                     timeout=1800)
    assert result.returncode == 0, result.stderr
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == 4 and all(s["error"] is None for s in samples)
    config = json.loads((out / "config.json").read_text())
    assert config["requests"]["retries"] == 0
    assert server.computations(since) == config["requests"]["sent"] >= 12


def test_judge(server: CppServer, tmp_path: Path) -> None:
    rows = judge_input(tmp_path / "rows.jsonl", 8)
    out = tmp_path / "judged.jsonl"
    since = server.mark()
    result = run_cli("judge", "--input", rows, "--output", out, "--model", "smollm2",
                     "--base-url", server.base_url, "--no-cache", "--no-progress",
                     "--max-tokens", "64", "--timeout", "300", timeout=1800)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    judged = jsonl(out)
    assert len(judged) == 8
    assert all(row.get("raw_judge_output") and not row.get("error") for row in judged)
    assert server.computations(since) == 8


def test_agent(server: CppServer, tmp_path: Path) -> None:
    """The agent with the model's own (Jinja) template: tools offered natively; whichever
    protocol it ends in, no request fails and the transcript's tool calls pair up. (A slot
    has 16384 / 4 tokens of context: the agent keeps its prompts under 3500.)"""
    world = build_world(tmp_path, [TASKS[0], TASKS[2]])
    out = tmp_path / "run"
    result = run_cli(
        "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
        "--corpus", world.corpus, "--model", "openai/smollm2", "--base-url", server.base_url,
        "--judge-model", "smollm2", "--judge-base-url", server.base_url, "-o", out,
        "--no-cache", "--no-progress", "--max-tokens", "128", "--max-context-tokens", "3500",
        "--timeout", "600", "--max-turns", "3", timeout=2400)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == 2
    assert all(s["status"] != "model_error" for s in samples), [s["error"] for s in samples]
    for sample in samples:
        trajectory = json.loads((out / sample["trajectory_file"]).read_text())
        ids = [c["id"] for m in trajectory["messages"] for c in m.get("tool_calls") or []]
        assert ids == [m["tool_call_id"] for m in trajectory["messages"] if m["role"] == "tool"]
    assert (out / "metrics.json").exists()


def test_ctrl_c_keeps_the_finished_rows_and_a_rerun_resumes(server: CppServer,
                                                           tmp_path: Path) -> None:
    gold = write_gold(tmp_path / "gold.json", 12)
    out = tmp_path / "run"
    args = qa_args(gold, server.base_url, out)
    stopped = interrupt_cli_when(*args, watched=out / "samples.jsonl", lines=3, wait_s=900)
    assert stopped.returncode == 130, stopped.stderr
    assert "Traceback" not in stopped.stderr
    assert json.loads((out / "config.json").read_text())["status"] == "interrupted"
    kept = {s["id"] for s in jsonl(out / "samples.jsonl") if s["error"] is None}
    assert len(kept) >= 3
    again = run_cli(*args, timeout=1800)
    assert again.returncode == 0, again.stderr
    samples = jsonl(out / "samples.jsonl")
    assert sorted(s["id"] for s in samples) == sorted({s["id"] for s in samples})
    assert len(samples) == 12 and all(s["error"] is None for s in samples)
    config = json.loads((out / "config.json").read_text())
    assert config["requests"]["sent"] == 12 - len(kept)  # the kept rows were not asked again


def kill_when(server: CppServer, watched: Path, lines: int, back_after: float | None) -> None:
    """SIGKILL the server once ``watched`` holds ``lines`` rows; start it again on the same
    port ``back_after`` seconds later (None: never)."""
    def go() -> None:
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            if watched.exists() and watched.read_bytes().count(b"\n") >= lines:
                break
            time.sleep(0.05)
        server.kill()
        if back_after is not None:
            time.sleep(back_after)
            server.start()

    threading.Thread(target=go, daemon=True).start()


def test_a_killed_server_back_within_max_outage_loses_and_duplicates_nothing(
        tmp_path: Path) -> None:
    gold = write_gold(tmp_path / "gold.json", 16)
    out = tmp_path / "run"
    own = CppServer(tmp_path / "server.log").start()
    try:
        kill_when(own, out / "samples.jsonl", 4, back_after=3.0)
        result = run_cli(*qa_args(gold, own.base_url, out, "--max-retries", "1"),
                         timeout=1800)
    finally:
        own.stop()
    assert result.returncode == 0, result.stderr
    assert f"{own.root}/v1 is not answering" in result.stderr
    samples = jsonl(out / "samples.jsonl")
    assert sorted(s["id"] for s in samples) == sorted({s["id"] for s in samples})
    assert len(samples) == 16 and all(s["error"] is None for s in samples)


def test_a_killed_server_that_stays_down_ends_the_run_resumable(tmp_path: Path) -> None:
    gold = write_gold(tmp_path / "gold.json", 12)
    out = tmp_path / "run"
    own = CppServer(tmp_path / "server.log").start()
    args = qa_args(gold, own.base_url, out, "--max-outage", "5")
    try:
        kill_when(own, out / "samples.jsonl", 3, back_after=None)
        result = run_cli(*args, timeout=1800)
        assert result.returncode == 2, result.stderr
        assert f"{own.base_url} has not answered for" in result.stderr
        assert "rerun the same command to resume" in result.stderr
        kept = [s for s in jsonl(out / "samples.jsonl") if s["error"] is None]
        assert len(kept) >= 3
        own.start()
        again = run_cli(*args, timeout=1800)
    finally:
        own.stop()
    assert again.returncode == 0, again.stderr
    samples = jsonl(out / "samples.jsonl")
    assert len(samples) == 12 and all(s["error"] is None for s in samples)


def test_the_limit_keeps_the_four_slots_busy(server: CppServer, tmp_path: Path) -> None:
    """40 QA prompts at the default --concurrency: the server's /slots, read 4 times a second,
    shows at least 3.5 of its 4 slots busy on average over the run's steady state (the first
    and last 15% of the samples left out: the ramp and the tail)."""
    gold = write_gold(tmp_path / "gold.json", 40)
    out = tmp_path / "run"
    with SlotWatch(server) as watch:
        result = run_cli(*qa_args(gold, server.base_url, out), timeout=2400)
    assert result.returncode == 0, result.stderr
    samples = watch.samples
    steady = samples[int(0.15 * len(samples)):int(0.85 * len(samples))]
    busy = statistics.fmean(steady)
    print(f"\n[conformance] llama-server --parallel 4: {busy:.2f} slots busy on average "
          f"({len(steady)} readings of /slots)")
    assert busy >= 3.5, (busy, samples)
