"""``hopscore judge --batch`` against a loopback server with the providers' batch APIs."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.batch_server import BatchServer, Plan
from tests.conftest import _cli_env, run_cli
from tests.procs import default_sigint

NUMBER = re.compile(r"Q(\d+):")


def answer(prompt: str) -> str:
    """A judge that says yes exactly for even-numbered questions."""
    found = NUMBER.search(prompt)
    assert found, prompt
    verdict = "yes" if int(found.group(1)) % 2 == 0 else "no"
    return (f"extracted_final_answer: x\nreasoning: r\ncorrect: {verdict}\n"
            f"confidence: 90%")


def write_rows(path: Path, n: int) -> Path:
    rows = [{"id": f"r{i}", "question": f"Q{i}: which city?", "response": f"City {i}",
             "correct_answer": "City"} for i in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def check_all_mapped(out: Path, n: int) -> None:
    rows = read_rows(out)
    assert [r["id"] for r in rows] == [f"r{i}" for i in range(n)]
    assert [r["correct"] for r in rows] == [i % 2 == 0 for i in range(n)]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "JUDGE_API_KEY": "sk-test",
            "ANTHROPIC_API_KEY": "sk-ant-test"}


def args(url: str, inp: Path, out: Path, *extra: str, model: str = "judge-m") -> list[str]:
    return ["judge", "-i", str(inp), "-o", str(out), "--model", model, "--base-url", url,
            "--no-progress", "--backoff", "0.01", "--batch", "--batch-poll", "0.02", *extra]


@pytest.fixture
def server() -> Iterator[BatchServer]:
    with BatchServer(answer) as running:
        yield running


def test_a_thousand_rows_go_in_one_batch_and_every_row_is_mapped_back(
        server: BatchServer, tmp_path: Path, env: dict[str, str]) -> None:
    inp, out = write_rows(tmp_path / "in.jsonl", 1000), tmp_path / "out.jsonl"
    result = run_cli(*args(server.base_url, inp, out), env=env)
    assert result.returncode == 0, result.stderr
    assert server.submissions == 1
    assert server.chat_requests == 0
    check_all_mapped(out, 1000)
    ledger = json.loads((tmp_path / "out.jsonl.batches.json").read_text())
    assert [b["id"] for b in ledger["batches"]] == ["batch_0001"]
    assert ledger["batches"][0]["status"] == "completed"
    assert "submitted batch batch_0001 (1000 requests)" in result.stderr
    assert re.search(r"answered by batch\s*│\s*1000 \(batch_0001\)", result.stdout)
    # a rerun has nothing left to ask
    again = run_cli(*args(server.base_url, inp, out), env=env)
    assert again.returncode == 0, again.stderr
    assert server.submissions == 1 and server.chat_requests == 0


def test_sigkill_while_polling_then_rerun_collects_the_same_batch(
        server: BatchServer, tmp_path: Path, env: dict[str, str]) -> None:
    inp, out = write_rows(tmp_path / "in.jsonl", 200), tmp_path / "out.jsonl"
    ledger = tmp_path / "out.jsonl.batches.json"
    server.hold()
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *args(server.base_url, inp, out)],
                            env=_cli_env(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not ledger.exists() or server.polls < 3):
            assert proc.poll() is None, "the judge ended before it was killed"
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert server.submissions == 1
    server.release()
    result = run_cli(*args(server.base_url, inp, out), env=env)
    assert result.returncode == 0, result.stderr
    assert server.submissions == 1, "the rerun submitted the requests again"
    assert server.chat_requests == 0
    assert "collected batch_0001 (submitted by an earlier run)" in result.stderr
    check_all_mapped(out, 200)


def test_requests_a_batch_failed_go_the_normal_way(tmp_path: Path, env: dict[str, str]) -> None:
    with BatchServer(answer, Plan(fail_marker="Q7:")) as server:
        inp, out = write_rows(tmp_path / "in.jsonl", 20), tmp_path / "out.jsonl"
        result = run_cli(*args(server.base_url, inp, out), env=env)
        assert result.returncode == 0, result.stderr
        assert server.submissions == 1
        assert server.chat_requests == 1  # Q7 only
        assert "1 not answered (1 HTTP 500)" in result.stderr
        check_all_mapped(out, 20)


@pytest.mark.parametrize("end", ["expired", "cancelled"])
def test_an_expired_or_cancelled_batch_keeps_what_it_answered(
        end: str, tmp_path: Path, env: dict[str, str]) -> None:
    with BatchServer(answer, Plan(end=end, answered_before_end=12)) as server:
        inp, out = write_rows(tmp_path / "in.jsonl", 30), tmp_path / "out.jsonl"
        result = run_cli(*args(server.base_url, inp, out), env=env)
        assert result.returncode == 0, result.stderr
        assert server.submissions == 1
        assert server.chat_requests == 18
        check_all_mapped(out, 30)
        assert f"batch batch_0001: {end}" in result.stderr


def test_a_batch_that_failed_validation_sends_every_request_the_normal_way(
        tmp_path: Path, env: dict[str, str]) -> None:
    with BatchServer(answer, Plan(end="failed")) as server:
        inp, out = write_rows(tmp_path / "in.jsonl", 10), tmp_path / "out.jsonl"
        result = run_cli(*args(server.base_url, inp, out), env=env)
        assert result.returncode == 0, result.stderr
        assert server.chat_requests == 10
        check_all_mapped(out, 10)


def test_anthropic_message_batches(server: BatchServer, tmp_path: Path,
                                   env: dict[str, str]) -> None:
    pytest.importorskip("anthropic")
    server.plan = Plan(fail_marker="Q3:")
    inp, out = write_rows(tmp_path / "in.jsonl", 40), tmp_path / "out.jsonl"
    result = run_cli(*args(server.root_url, inp, out, "--api-key-env", "ANTHROPIC_API_KEY",
                           model="anthropic/claude-test"), env=env)
    assert result.returncode == 0, result.stderr
    assert server.submissions == 1
    assert server.chat_requests == 1  # the errored request, through the Messages API
    check_all_mapped(out, 40)
    assert server.batches["batch_0001"].provider == "anthropic"


def test_cached_requests_are_not_batched(server: BatchServer, tmp_path: Path,
                                         env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", 30)
    first = run_cli(*args(server.base_url, inp, tmp_path / "a.jsonl"), env=env)
    assert first.returncode == 0, first.stderr
    second = run_cli(*args(server.base_url, inp, tmp_path / "b.jsonl"), env=env)
    assert second.returncode == 0, second.stderr
    assert server.submissions == 1  # the second output's rows all came from the cache
    check_all_mapped(tmp_path / "b.jsonl", 30)


def test_an_endpoint_without_a_batch_api_says_so(tmp_path: Path, env: dict[str, str]) -> None:
    from tests.openai_server import FakeOpenAI, judge_reply

    with FakeOpenAI(lambda prompt, attempt: judge_reply(True)) as plain:
        inp, out = write_rows(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
        result = run_cli(*args(plain.base_url, inp, out), env=env)
    assert result.returncode == 2, result.stderr
    assert "uploading the requests: POST" in result.stderr
    assert "HTTP 404" in result.stderr
    assert "Traceback" not in result.stderr


def test_batch_and_ray_do_not_go_together(server: BatchServer, tmp_path: Path,
                                          env: dict[str, str]) -> None:
    inp, out = write_rows(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    result = run_cli(*args(server.base_url, inp, out, "--executor", "ray"), env=env)
    assert result.returncode == 2
    assert "--batch and --executor ray" in result.stderr
    assert server.submissions == 0


def test_a_cost_budget_cannot_stop_a_batch_so_it_is_refused(
        server: BatchServer, tmp_path: Path, env: dict[str, str]) -> None:
    inp, out = write_rows(tmp_path / "in.jsonl", 3), tmp_path / "out.jsonl"
    result = run_cli(*args(server.base_url, inp, out, "--max-cost", "1"), env=env)
    assert result.returncode == 2
    assert "--batch does not go with --max-cost" in result.stderr
    assert server.submissions == 0


def test_batch_answers_are_counted_apart_and_priced_at_the_batch_discount(
        tmp_path: Path, env: dict[str, str]) -> None:
    with BatchServer(answer, Plan(fail_marker="Q3:")) as server:
        inp, out = write_rows(tmp_path / "in.jsonl", 10), tmp_path / "out.jsonl"
        summary = tmp_path / "summary.json"
        result = run_cli(*args(server.base_url, inp, out, "--summary-json", str(summary),
                               model="gpt-4o"), env=env)
        assert result.returncode == 0, result.stderr
    rows = read_rows(out)
    batched = [r for r in rows if list(r["judge"]["usage"]) == ["judge:batch"]]
    assert len(batched) == 9 and list(rows[3]["judge"]["usage"]) == ["judge"]
    document = json.loads(summary.read_text())
    usage, cost = document["usage"], document["cost"]
    # the stand-in reports 10 prompt and 5 completion tokens per reply
    assert usage["judge:batch"]["prompt_tokens"] == 90
    assert usage["judge"]["prompt_tokens"] == 10
    full = (10 * 2.5 + 5 * 10.0) / 1e6  # gpt-4o's list price per million tokens
    assert cost["roles"]["judge"] == pytest.approx(full, abs=1e-6)
    assert cost["roles"]["judge:batch"] == pytest.approx(9 * full * 0.5, abs=1e-6)
    assert cost["total"] == pytest.approx(full + 9 * full * 0.5, abs=1e-6)


def test_a_failed_look_at_the_batch_is_tried_again_and_too_many_say_how_to_go_on(
        tmp_path: Path, env: dict[str, str]) -> None:
    with BatchServer(answer, Plan(failed_polls=2)) as server:
        inp, out = write_rows(tmp_path / "in.jsonl", 5), tmp_path / "out.jsonl"
        result = run_cli(*args(server.base_url, inp, out), env=env)
        assert result.returncode == 0, result.stderr
        assert "answered HTTP 503" in result.stderr and "looking again" in result.stderr
        check_all_mapped(out, 5)
    with BatchServer(answer, Plan(failed_polls=5)) as server:
        inp, out = write_rows(tmp_path / "in2.jsonl", 5), tmp_path / "out2.jsonl"
        result = run_cli(*args(server.base_url, inp, out), env=env)
        assert result.returncode == 2, result.stderr
        assert "5 looks in a row failed" in result.stderr
        assert "Traceback" not in result.stderr
        server.plan.failed_polls = 0
        again = run_cli(*args(server.base_url, inp, out), env=env)
        assert again.returncode == 0, again.stderr
        assert server.submissions == 1
        check_all_mapped(out, 5)


def test_ctrl_c_while_polling_says_the_batch_goes_on_and_a_rerun_collects_it(
        server: BatchServer, tmp_path: Path, env: dict[str, str]) -> None:
    inp, out = write_rows(tmp_path / "in.jsonl", 20), tmp_path / "out.jsonl"
    server.hold()
    # Ctrl-C at its default in the child (a suite started in the background has it ignored)
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *args(server.base_url, inp, out)],
                            env=_cli_env(env), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and server.polls < 3:
            assert proc.poll() is None, "the judge ended before Ctrl-C"
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        stderr = proc.communicate(timeout=30)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "it goes on at the provider; rerun the same command to collect it" in stderr
    assert "Traceback" not in stderr
    server.release()
    result = run_cli(*args(server.base_url, inp, out), env=env)
    assert result.returncode == 0, result.stderr
    assert server.submissions == 1 and server.chat_requests == 0
    check_all_mapped(out, 20)
