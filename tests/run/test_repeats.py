"""``--repeats k``: k attempts per question, Avg@k and pass@1..k, against a loopback server."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.hybrid_deep_research import HybridDeepResearch
from hopscore.errors import HopscoreError
from hopscore.inference.passk import pass_at_k, pass_curve, right_wrong_metric
from hopscore.run.tasks import prepare
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import asked, gold_replies, load, rows, run_args
from tests.run.test_prompts import GOLDS, settings

SEED = 10


def test_pass_at_k_is_the_unbiased_estimator_for_every_n_up_to_10() -> None:
    for n in range(1, 11):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
                assert pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-12), (n, c, k)
            assert pass_curve(n, c)[0] == pytest.approx(c / n)  # pass@1 is the mean
    assert pass_at_k(100, 1, 50) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def test_the_right_wrong_metric_is_the_first_binary_headline_metric() -> None:
    values = {"em": [0.0, 1.0], "f1": [0.5, 1.0], "feverous_score": [1.0, 0.0]}
    assert right_wrong_metric(("f1", "em"), ("em", "f1"), values) == "em"
    assert right_wrong_metric(("feverous_score",), ("em", "feverous_score"), values) \
        == "feverous_score"
    assert right_wrong_metric(("f1",), ("f1",), values) is None


def _right_counts(questions: list[str], k: int) -> dict[str, int]:
    """Question i is answered right in (i mod (k + 1)) of its k attempts."""
    return {q: i % (k + 1) for i, q in enumerate(questions)}


def _responder(answers: dict[str, str], right: dict[str, int], failing: set[str] | None = None
               ) -> Any:
    def reply(body: dict[str, Any], attempt: int) -> Reply:
        question = asked(body["messages"][-1]["content"])
        index = int(body["seed"]) - SEED  # which of the repeats this is
        if failing and question in failing and index == 1:
            return Reply(status=400)
        text = answers[question] if index < right[question] else "certainly not this"
        return Reply(f"Answer: {text}")
    return reply


def test_repeats_score_avg_at_k_and_pass_at_every_k(tmp_path: Path) -> None:
    k = 3
    answers = gold_replies("bamboogle")
    questions = list(answers)
    right = _right_counts(questions, k)
    out, cache = tmp_path / "run", tmp_path / "cache"
    args = run_args("bamboogle", "", out, cache, "--repeats", k, "--temperature", "0.7",
                    "--seed", SEED)
    with FakeOpenAI(body_responder=_responder(answers, right)) as server:
        args[args.index("--base-url") + 1] = server.base_url
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert len(server.log) == len(questions) * k
        seeds = sorted(int(entry.body["seed"]) for entry in server.log)
        assert seeds == sorted([SEED, SEED + 1, SEED + 2] * len(questions))
        # every attempt is resumed: the same command asks nothing more
        assert run_cli(*args).returncode == 0
        assert len(server.log) == len(questions) * k
    samples = rows(out / "samples.jsonl")
    assert len(samples) == len(questions) * k
    assert sorted(s["attempt"] for s in samples) == sorted(list(range(k)) * len(questions))
    metrics = load(out / "metrics.json")
    gold = {e.id: e for e in benchmarks.get("bamboogle").load_gold(GOLDS["bamboogle"][0])}
    ids = list(gold)
    counts = dict.fromkeys(ids, 0)  # right attempts per question, from the samples
    for sample in samples:
        counts[sample["id"]] += int(sample["scores"]["em"])
    for i in ids:
        if gold[i].gold_answers()[0]:  # (an empty gold answer is matched by an empty answer)
            assert counts[i] == right[gold[i].question.strip()]
    assert metrics["n_gold"] == len(questions)
    assert metrics["metrics"]["em"] == pytest.approx(sum(counts.values()) / (k * len(ids)))
    for j in range(1, k + 1):
        expected = sum(pass_at_k(k, c, j) for c in counts.values()) / len(ids)
        assert metrics["metrics"][f"pass@{j}"] == pytest.approx(expected)
    assert metrics["metrics"]["pass@1"] == pytest.approx(metrics["metrics"]["em"])
    block = metrics["repeats"]
    assert block["k"] == k and block["pass_metric"] == "em"
    assert block["pass_at"] == ["pass@1", "pass@2", "pass@3"]
    # pass@k intervals are over questions (n = 16), by the default methods
    assert metrics["ci"]["pass@2"]["n"] == len(ids) and metrics["ci"]["pass@2"]["method"] == "bca"
    assert metrics["ci"]["pass@3"]["method"] == "wilson"  # 0/1 per question: any attempt right
    assert metrics["run"]["samples"] == len(ids) * k and metrics["run"]["repeats"] == k
    # each attempt's official file scores as its block says, with hopscore score
    for j, entry in enumerate(block["attempts"]):
        name = "predictions.json" if j == 0 else f"predictions.attempt-{j}.json"
        assert entry["predictions"] == name
        scored = run_cli("score", "bamboogle", "--gold", GOLDS["bamboogle"][0],
                         "--predictions", out / name, "--ci", "none", "--json")
        assert scored.returncode == 0, scored.stderr
        import json

        assert json.loads(scored.stdout)["metrics"] == pytest.approx(entry["metrics"])
        assert entry["metrics"]["em"] == pytest.approx(sum(
            s["scores"]["em"] for s in samples if s["attempt"] == j) / len(ids))
    scores = rows(out / "scores.jsonl")
    assert [s["id"] for s in scores] == ids
    first = scores[5]
    assert first["metrics"]["em"] == pytest.approx(counts[first["id"]] / k)
    assert "attempts per example" in result.stdout and "pass@3" in result.stdout
    # two runs with repeats compare row by row, pass@k included
    compare = run_cli("compare", out, out, "--json")
    assert compare.returncode == 0, compare.stderr
    assert "pass@2" in compare.stdout


def test_more_repeats_keep_the_attempts_made(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    right = _right_counts(list(answers), 4)
    out, cache = tmp_path / "run", tmp_path / "cache"
    with FakeOpenAI(body_responder=_responder(answers, right)) as server:
        base = run_args("bamboogle", server.base_url, out, cache, "--temperature", "0.7",
                        "--seed", SEED)
        assert run_cli(*base).returncode == 0
        assert len(server.log) == len(answers)
        more = run_cli(*base, "--repeats", "2")
        assert more.returncode == 0, more.stderr
        assert len(server.log) == 2 * len(answers)  # attempt 0 kept, attempt 1 asked
        assert {int(e.body["seed"]) for e in server.log[len(answers):]} == {SEED + 1}
    assert load(out / "metrics.json")["repeats"]["k"] == 2


def test_a_failed_attempt_scores_zero_and_is_retried(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    questions = list(answers)
    right = dict.fromkeys(questions, 2)
    failing = {questions[2]}
    out, cache = tmp_path / "run", tmp_path / "cache"
    args = run_args("bamboogle", "", out, cache, "--repeats", "2", "--temperature", "0.7",
                    "--seed", SEED, "--max-retries", "0")
    with FakeOpenAI(body_responder=_responder(answers, right, failing)) as server:
        args[args.index("--base-url") + 1] = server.base_url
        first = run_cli(*args)
        assert first.returncode == 1, first.stderr
        metrics = load(out / "metrics.json")
        assert metrics["run"]["errors"] == 1 and metrics["run"]["error_ids"] == ["2#1"]
        assert "1 attempt's request failed" in first.stderr
        example = next(s for s in rows(out / "scores.jsonl") if s["id"] == "2")
        assert example["metrics"]["em"] == 0.5 and example["metrics"]["pass@2"] == 1.0
        failing.clear()
        second = run_cli(*args)
        assert second.returncode == 0, second.stderr
        assert len(server.log) == 2 * len(questions) + 1
    example = next(s for s in rows(out / "scores.jsonl") if s["id"] == "2")
    assert example["metrics"]["em"] == 1.0


def test_a_graded_metric_gets_avg_at_k_without_pass_at_k(tmp_path: Path) -> None:
    answers = gold_replies("fermi")
    out, cache = tmp_path / "run", tmp_path / "cache"

    def reply(prompt: str, attempt: int) -> Reply:
        gold = answers[asked(prompt)]
        if attempt == 1 and gold == "160 km":  # ten times too much: fp_score 2/3
            gold = "1600 km"
        return Reply(f"Answer: {gold}")

    with FakeOpenAI(reply) as server:
        result = run_cli(*run_args("fermi", server.base_url, out, cache, "--repeats", "2",
                                   "--temperature", "0.5"))
    assert result.returncode == 0, result.stderr
    metrics = load(out / "metrics.json")
    assert metrics["repeats"]["pass_metric"] is None and "note" in metrics["repeats"]
    assert not any(name.startswith("pass@") for name in metrics["metrics"])
    n = metrics["n_gold"]
    assert metrics["metrics"]["fp_score"] == pytest.approx((n - 1 + (1 + 2 / 3) / 2) / n)


def test_repeats_tasks_and_settings() -> None:
    prepared = prepare(settings("bamboogle", repeats=3, seed=5))
    assert [t.attempt for t in prepared.tasks] == [0, 1, 2, 0, 1, 2]
    first, second, third = prepared.tasks[:3]
    assert len({first.key, second.key, third.key}) == 3
    assert [t.request.seed for t in prepared.tasks[:3]] == [5, 6, 7]
    assert [t.request.cache_tag for t in prepared.tasks[:3]] == ["", "repeat=1", "repeat=2"]
    assert first.key == prepare(settings("bamboogle", seed=5)).tasks[0].key
    with pytest.raises(HopscoreError, match="--repeats is for --strategy cot"):
        prepare(settings("bamboogle", repeats=2, strategy="sc"))


def test_hdr_reports_pass_at_every_k(tmp_path: Path) -> None:
    import json

    from hopscore.benchmarks.hybrid_deep_research import HdrExample

    grades = tmp_path / "grades.jsonl"
    verdicts = {"t0": [True, False, False, False], "t1": [True, True, False, True],
                "t2": [False] * 4}
    grades.write_text("".join(
        json.dumps({"instance_id": t, "attempt": j, "repeats": 4, "correct": v}) + "\n"
        for t, vs in verdicts.items() for j, v in enumerate(vs)))
    bench = HybridDeepResearch()
    predictions = bench.load_predictions(grades)
    names = bench.active_metrics(predictions)
    assert names == ("accuracy", "pass_at_k", "pass@1", "pass@2", "pass@3", "pass@4")
    scores = {t: bench.score(HdrExample(id=t, family="SQL2S"), predictions.by_id.get(t))
              for t in [*verdicts, "absent"]}
    assert scores["t0"]["pass@2"] == pytest.approx(pass_at_k(4, 1, 2)) == pytest.approx(0.5)
    assert scores["t1"]["pass@1"] == scores["t1"]["accuracy"] == 0.75
    assert scores["t2"]["pass@4"] == scores["t2"]["pass_at_k"] == 0.0
    assert scores["t1"]["pass@4"] == 1.0
    assert set(scores["absent"]) == set(names) and not any(scores["absent"].values())
