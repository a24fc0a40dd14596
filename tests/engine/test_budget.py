"""Budgets (:mod:`hopscore.engine.budget`): a run stops sending when one is reached, keeps every
finished row, exits 4 naming the budget, and a rerun with a larger budget completes it with no
request sent twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from hopscore.engine import ledger
from hopscore.engine.budget import Budget
from hopscore.engine.prices import Price
from hopscore.engine.types import Usage
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, gold_replies, rows, run_args

#: dollars per million tokens of the stand-in's model in these tests
PRICE = {"input": 100.0, "output": 1000.0}


def test_budget_counts_replies_and_says_which_ended_it() -> None:
    budget = Budget(max_cost=1.0, price=Price(input=1e5, output=1e6))
    assert budget.reached() is None
    budget.charge(Usage(prompt_tokens=5, completion_tokens=0))  # $0.50
    assert budget.reached() is None
    budget.charge(Usage(prompt_tokens=0, completion_tokens=1))  # $1.50
    assert "--max-cost" in (budget.reached() or "") and budget.reached_by == "--max-cost"
    tokens = Budget(max_tokens=10)
    tokens.charge(Usage(6, 4))
    assert tokens.reached_by is None and tokens.reached() is not None
    assert tokens.reached_by == "--max-tokens-total"
    assert Budget(max_time=0.0).reached() is not None


def _cost(row: dict[str, object]) -> float:
    usage = ledger.row_usage(row)["model"]
    return (usage.prompt_tokens * PRICE["input"] + usage.completion_tokens * PRICE["output"]) / 1e6


def test_max_cost_stops_within_one_request_and_a_rerun_completes(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"test-model": PRICE}}))
    env = {"HOPSCORE_PRICES": str(prices)}
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}")) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache",
                        "--concurrency", "1", "--fixed-concurrency")
        budget = 0.05
        first = run_cli(*args, "--max-cost", str(budget), env=env)
        assert first.returncode == 4, first.stderr
        assert "--max-cost" in first.stderr and "larger budget" in first.stderr
        kept = rows(out / "samples.jsonl")
        done = [r for r in kept if r.get("error") is None]
        refused = [r for r in kept if r.get("error") is not None]
        assert done and len(done) < len(answers)
        assert all(r["error"]["kind"] == "budget" for r in refused)
        spent = sum(_cost(r) for r in done)
        # the budget was passed by the last request sent, by less than its cost
        assert budget <= spent < budget + max(_cost(r) for r in done)
        assert len(server.log) == len(done)  # a refused row sent nothing
        second = run_cli(*args, "--max-cost", "100", "--prices", prices,
                         env={"HOPSCORE_PRICES": ""})
        assert second.returncode == 0, second.stderr
        sent = Counter(entry.prompt for entry in server.log)
    assert len(sent) == len(answers) and set(sent.values()) == {1}  # none sent twice
    assert all(r.get("error") is None for r in rows(out / "samples.jsonl"))


def test_max_tokens_total_and_an_unpriced_max_cost(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}")) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache",
                        "--concurrency", "1", "--fixed-concurrency")
        unpriced = run_cli(*args, "--max-cost", "1", env={"HOPSCORE_PRICES": ""})
        assert unpriced.returncode == 2 and "no list price" in unpriced.stderr
        assert server.log == []
        first = run_cli(*args, "--max-tokens-total", "1")
        assert first.returncode == 4 and "--max-tokens-total" in first.stderr
        assert len(server.log) == 1
    assert len([r for r in rows(out / "samples.jsonl") if r.get("error") is None]) == 1


@pytest.mark.parametrize("option", ["--max-cost", "--max-tokens-total", "--max-time"])
def test_run_help_lists_the_budgets(option: str) -> None:
    shown = run_cli("run", "--help", env={"COLUMNS": "80"})
    assert option in shown.stdout


def test_judge_max_tokens_total_then_resume(tmp_path: Path) -> None:
    from tests.openai_server import judge_reply

    judge_in = tmp_path / "in.jsonl"
    judge_in.write_text("".join(json.dumps({
        "instance_id": f"t{i}", "question": f"Q{i:03d}?", "response": f"A{i}",
        "correct_answer": f"A{i}"}) + "\n" for i in range(8)))
    out = tmp_path / "judged.jsonl"
    with FakeOpenAI(lambda p, a: judge_reply(True)) as server:
        args = ["judge", "-i", judge_in, "-o", out, "--model", "judge-m", "--base-url",
                server.base_url, "--no-progress", "--concurrency", "1", "--no-cache"]
        first = run_cli(*args, "--max-tokens-total", "500")
        assert first.returncode == 4, first.stderr
        assert "--max-tokens-total" in first.stderr
        sent = len(server.log)
        assert 0 < sent < 8
        tokens = sum(u["total_tokens"] for u in server.reported)
        assert tokens >= 500 and tokens - server.reported[-1]["total_tokens"] < 500
        second = run_cli(*args)
        assert second.returncode == 0, second.stderr
        prompts = Counter(entry.prompt for entry in server.log)
    assert len(prompts) == 8 and set(prompts.values()) == {1}
    assert all(json.loads(line)["judge"]["status"] == "judged"
               for line in out.read_text().splitlines())


@pytest.mark.parametrize("on_budget", ["finish", "abandon"])
def test_on_budget_finishes_or_abandons_the_requests_in_flight(on_budget: str,
                                                               tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}"), latency=3.0) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache",
                        "--concurrency", "4", "--fixed-concurrency")
        result = run_cli(*args, "--max-time", "0.5", "--on-budget", on_budget)
    assert result.returncode == 4, result.stderr
    assert "--max-time" in result.stderr
    kept = rows(out / "samples.jsonl")
    done = [r for r in kept if r.get("error") is None]
    assert all(r["error"]["kind"] == "budget" for r in kept if r.get("error") is not None)
    if on_budget == "finish":  # the four requests in flight were answered and kept
        assert len(done) == 4
    else:  # given up at the budget, not waited for
        assert not done
        assert any("given up in flight" in r["error"]["message"] for r in kept)
