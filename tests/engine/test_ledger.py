"""The usage ledger (:mod:`hopscore.engine.ledger`): every output's ledger equals the sum of
what the stand-in server reported, by role, reasoning and cached tokens included."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hopscore.engine import ledger
from hopscore.engine.anthropic import completion_of
from hopscore.engine.types import ChatResponse, Usage
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply
from tests.run.helpers import asked, gold_replies, load, rows, run_args


def reported_sum(server: FakeOpenAI) -> dict[str, int]:
    """What the server reported over its completions, as a tally's token counts."""
    out = dict.fromkeys(ledger.TOKENS, 0)
    for usage in server.reported:
        out["prompt_tokens"] += usage["prompt_tokens"]
        out["completion_tokens"] += usage["completion_tokens"]
        out["reasoning_tokens"] += (usage.get("completion_tokens_details") or {}).get(
            "reasoning_tokens", 0)
        out["cached_tokens"] += (usage.get("prompt_tokens_details") or {}).get(
            "cached_tokens", 0)
    return out


def tokens(tally: dict[str, int]) -> dict[str, int]:
    return {name: tally[name] for name in ledger.TOKENS}


def test_usage_reads_openai_details_and_anthropic_cache_reads() -> None:
    body = {"choices": [{"message": {"content": "x"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 40,
                      "completion_tokens_details": {"reasoning_tokens": 30},
                      "prompt_tokens_details": {"cached_tokens": 64}}}
    assert ChatResponse.from_body(body).usage == Usage(100, 40, 30, 64)
    odd = {"choices": [{"message": {"content": "x"}}],
           "usage": {"prompt_tokens": 5, "completion_tokens_details": None,
                     "prompt_tokens_details": {"cached_tokens": -1}}}
    assert ChatResponse.from_body(odd).usage == Usage(5, 0, 0, 0)
    message = {"content": [{"type": "text", "text": "hi"}],
               "usage": {"input_tokens": 10, "cache_read_input_tokens": 90,
                         "cache_creation_input_tokens": 5, "output_tokens": 7}}
    usage = ChatResponse.from_body(completion_of(message)).usage
    assert usage == Usage(prompt_tokens=105, completion_tokens=7, cached_tokens=90)


def test_tallies_sum_calls_and_rows_by_role() -> None:
    calls = [{"prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 3,
              "cached_tokens": 2, "attempts": [{}, {}], "cached": False},
             {"prompt_tokens": 7, "completion_tokens": 1, "attempts": [], "cached": True}]
    row = {"usage": ledger.block(ledger.MODEL, calls)}
    assert row["usage"]["model"] == {"prompt_tokens": 17, "completion_tokens": 6,
                                     "reasoning_tokens": 3, "cached_tokens": 2,
                                     "requests": 2, "retries": 1, "cache_hits": 1}
    other = {"usage": {"model": {"prompt_tokens": 1, "requests": 1},
                       "tool:sql": {"requests": 4}}}
    total = ledger.rows_total([row, other, None, {"no": "usage"}])
    assert list(total) == ["model", "tool:sql", "total"]
    assert total["model"]["prompt_tokens"] == 18 and total["model"]["requests"] == 3
    assert total["total"]["requests"] == 7
    assert ledger.rows_total([]) == {}
    assert ledger.table_rows(total) == [
        ("model tokens (prompt + completion)", "18 + 6"),
        ("model tokens reasoning / cached", "3 / 2"),
        ("model requests / retries / cache hits", "3 / 1 / 1"),
        ("tool:sql requests / retries / cache hits", "4 / 0 / 0")]


def _thinking(prompt: str, attempt: int, answers: dict[str, str]) -> Reply:
    question = asked(prompt)
    if question.startswith("Who") and attempt == 0:  # one failed attempt each: a retry
        return Reply(status=500)
    size = len(question)
    return Reply(f"<think>hm</think>\nAnswer: {answers[question]}",
                 reasoning_tokens=size % 7 + 1, cached_tokens=size % 5 * 3)


def test_run_and_judge_ledgers_equal_what_the_server_reported(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: _thinking(p, a, answers)) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, out, tmp_path / "cache",
                                   "--backoff", "0.01"))
        assert result.returncode == 0, result.stderr
        reported = reported_sum(server)
        sent = len(server.log)
    assert reported["reasoning_tokens"] > 0 and reported["cached_tokens"] > 0
    samples = rows(out / "samples.jsonl")
    retried = sum(row["usage"]["model"]["retries"] for row in samples)
    assert retried == sent - len(samples) > 0
    summed = ledger.rows_total(samples)
    for where in (load(out / "metrics.json")["run"], load(out / "config.json")["summary"]):
        usage = where["usage"]
        assert list(usage) == ["model", "total"]
        assert tokens(usage["model"]) == reported
        assert usage["model"]["requests"] == sent
        assert usage["model"]["retries"] == retried
        assert usage == summed
        # the stand-in's model is in no price table: its cost is unknown, never 0
        assert where["cost"]["roles"] == {"model": "unknown"}
        assert where["cost"]["total"] == "unknown"
    assert "model tokens reasoning / cached" in result.stdout

    # the judge over the run's rows: its ledger is the judge's role, apart from the model's
    judge_in = tmp_path / "judge-in.jsonl"
    judge_in.write_text("".join(json.dumps({
        "instance_id": row["id"], "question": row["question"],
        "response": row["raw_output"], "correct_answer": "x"}) + "\n" for row in samples))

    def judge(prompt: str, attempt: int) -> Reply:
        reply = judge_reply(True)
        return Reply(reply.content, reasoning_tokens=len(prompt) % 11,
                     cached_tokens=len(prompt) % 13)

    judged = tmp_path / "judged.jsonl"
    summary_file = tmp_path / "judge-summary.json"
    with FakeOpenAI(judge) as server:
        result = run_cli("judge", "-i", judge_in, "-o", judged, "--model", "judge-m",
                         "--base-url", server.base_url, "--no-progress",
                         "--summary-json", summary_file,
                         env={"HOPSCORE_CACHE_DIR": str(tmp_path / "jcache")})
        assert result.returncode == 0, result.stderr
        reported = reported_sum(server)
        sent = len(server.log)
    judge_rows = rows(judged)
    assert all(list(row["judge"]["usage"]) == ["judge"] for row in judge_rows)
    usage: dict[str, Any] = load(summary_file)["usage"]
    assert tokens(usage["judge"]) == reported and usage["judge"]["requests"] == sent
    assert usage == ledger.rows_total(row["judge"] for row in judge_rows)
    assert "judge tokens reasoning / cached" in result.stdout


def test_prices_shipped_overridden_and_unknown(tmp_path: Path, monkeypatch: Any) -> None:

    from hopscore.engine import prices
    from hopscore.errors import InputError

    table = prices.shipped()
    mini = table["gpt-4o-mini"]
    assert mini.as_of and mini.source.startswith("https://")
    tally = ledger.Tally(prompt_tokens=1_000_000, completion_tokens=2_000_000,
                         reasoning_tokens=500_000, cached_tokens=400_000)
    # 600k uncached at 0.15, 400k cached at 0.075, 2M completion (reasoning in it) at 0.60
    assert mini.cost(tally) == pytest.approx(0.09 + 0.03 + 1.2)
    assert mini.cost(tally, batch=True) == pytest.approx((0.09 + 0.03 + 1.2) / 2)
    usage = {"model": tally, "judge": ledger.Tally(prompt_tokens=10), "tool:sql":
             ledger.Tally(requests=3)}
    cost = prices.ledger_cost(usage, {"model": "openai/gpt-4o-mini", "judge": "my-judge"},
                              table)
    assert cost["roles"] == {"model": pytest.approx(1.32), "judge": "unknown"}
    assert cost["total"] == "unknown" and "gpt-4o-mini" in cost["prices"]
    mine = tmp_path / "prices.json"
    mine.write_text(json.dumps({"models": {"my-judge": {"input": 1.0, "output": 2.0}}}))
    monkeypatch.setenv(prices.PRICES_ENV, str(mine))
    cost = prices.ledger_cost(usage, {"model": "openai/gpt-4o-mini", "judge": "my-judge"},
                              prices.load())
    assert cost["total"] == pytest.approx(1.32 + 10 / 1_000_000)
    assert prices.per(cost["total"], 4) == pytest.approx(cost["total"] / 4)
    assert prices.per("unknown", 4) == "unknown" and prices.per(1.0, 0) is None
    mine.write_text(json.dumps({"models": {"x": {"input": -1, "output": 2}}}))
    with pytest.raises(InputError, match=r"models\.x\.input"):
        prices.load(mine)


def test_compare_prices_judge_files_per_correct_answer(tmp_path: Path) -> None:
    rows_in = [{"instance_id": f"t{i}", "question": f"Q{i:03d}?", "response": f"A{i}",
                "correct_answer": f"A{i}"} for i in range(6)]
    judge_in = tmp_path / "in.jsonl"
    judge_in.write_text("".join(json.dumps(r) + "\n" for r in rows_in))

    def judge(prompt: str, attempt: int) -> Reply:
        found = re.search(r"Q(\d{3})\?", prompt)
        assert found, prompt
        number = int(found.group(1))
        reply = judge_reply(number % 3 != 0)
        return Reply(reply.content, reasoning_tokens=number, cached_tokens=2)

    prices_file = tmp_path / "prices.json"
    prices_file.write_text(json.dumps({"models": {"judge-m": {
        "input": 2.0, "cached_input": 1.0, "output": 10.0, "as_of": "2026-01-01"}}}))
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "HOPSCORE_PRICES": str(prices_file)}
    with FakeOpenAI(judge) as server:
        for name in ("a.jsonl", "b.jsonl"):
            result = run_cli("judge", "-i", judge_in, "-o", tmp_path / name, "--model",
                             "judge-m", "--base-url", server.base_url, "--no-progress",
                             "--no-cache", env=env)
            assert result.returncode == 0, result.stderr
        reported = reported_sum(server)
    half = {k: v // 2 for k, v in reported.items()}  # each file got the same replies
    expected = ((half["prompt_tokens"] - half["cached_tokens"]) * 2.0
                + half["cached_tokens"] * 1.0 + half["completion_tokens"] * 10.0) / 1e6
    result = run_cli("compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--json",
                     "--resamples", "200", "--prices", prices_file,
                     env={"HOPSCORE_PRICES": ""})
    assert result.returncode == 0, result.stderr
    costs = json.loads(result.stdout)["costs"]
    assert [c["correct"] for c in costs] == [4, 4]
    for c in costs:
        assert c["cost_usd"] == pytest.approx(expected)
        assert c["per_correct_usd"] == pytest.approx(expected / 4)
        assert c["per_point_usd"] == pytest.approx(expected / c["points"])
    shown = run_cli("compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--resamples", "200",
                    env={"HOPSCORE_PRICES": ""})
    assert shown.returncode == 0, shown.stderr
    assert "Cost in USD" in shown.stdout and "unknown" in shown.stdout
    report = tmp_path / "report.html"
    made = run_cli("report", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "--output", report,
                   "--resamples", "200", env=env)
    assert made.returncode == 0, made.stderr
    html = report.read_text(encoding="utf-8")
    assert 'id="run-costs"' in html
    assert f"${expected:.4f}" in html and f"${expected / 4:.4f}" in html
    assert "judge reasoning / cached tokens" in html


def test_dry_run_estimates_from_the_rendered_prompts_and_sends_nothing(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}")) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache",
                        "--max-tokens", "50")
        args[args.index("--model") + 1] = "openai/gpt-4o-mini"
        dry = run_cli(*args, "--dry-run", "--json")
        assert dry.returncode == 0, dry.stderr
        assert server.log == [] and not out.exists()
        found = json.loads(dry.stdout)
        shown = run_cli(*args, "--dry-run")
        assert shown.returncode == 0 and "nothing sent" in shown.stdout
        assert "characters / 4" in shown.stderr and server.log == []
        done = run_cli(*args)
        assert done.returncode == 0, done.stderr
    samples = rows(out / "samples.jsonl")
    chars = [len("\n".join(m["content"] for m in row["prompt"])) for row in samples]
    assert found["requests"] == len(samples)
    assert found["prompt_tokens"] == sum(-(-n // 4) for n in chars)
    assert found["completion_tokens"] == 50 * len(samples)
    price = found["price"]
    expected = (found["prompt_tokens"] * price["input"]
                + found["completion_tokens"] * price["output"]) / 1e6
    assert found["cost_usd"] == pytest.approx(expected, abs=1e-6)


def test_export_has_each_examples_usage(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}", reasoning_tokens=5,
                                       cached_tokens=4)) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, out, tmp_path / "cache"))
        assert result.returncode == 0, result.stderr
    table = tmp_path / "table.jsonl"
    exported = run_cli("export", out, "-o", table)
    assert exported.returncode == 0, exported.stderr
    by_id = {r["id"]: r for r in rows(out / "samples.jsonl")}
    for line in rows(table):
        usage = by_id[line["id"]]["usage"]["model"]
        assert {k: line[k] for k in (*ledger.TOKENS, "requests")} == \
            {k: usage[k] for k in (*ledger.TOKENS, "requests")}
        assert line["reasoning_tokens"] == 5 and line["cached_tokens"] == 4


def test_tally_fields_are_written_out_in_order() -> None:
    """from_json and add name the seven counts one by one: they must be FIELDS, in order."""
    import dataclasses

    from hopscore.engine.ledger import FIELDS, Tally

    assert tuple(f.name for f in dataclasses.fields(Tally)) == FIELDS
    counts = {name: index + 1 for index, name in enumerate(FIELDS)}
    tally = Tally.from_json({**counts, "retries": True, "cache_hits": -1, "extra": 5})
    assert tally.to_json() == {**counts, "retries": 0, "cache_hits": 0}
    assert Tally.from_json(counts).add(Tally.from_json(counts)).to_json() == {
        name: 2 * value for name, value in counts.items()}
