"""A run's files and the analysis of them say the same thing: an answer of "unknown" is an
answer in the run's table and in ``analyze`` (abstention counted one way), and StrategyQA's
samples.jsonl holds the answer as it was scored ("true", not the "yes" it was read as), so a
judge file made from the samples binds to the run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import gold_replies, run_args


def _run(tmp_path: Path, name: str, reply: dict[str, str]) -> Path:
    with FakeOpenAI(lambda prompt, attempt: Reply(
            f"Answer: {next(v for k, v in reply.items() if k in prompt)}")) as server:
        result = run_cli(*run_args(name, server.base_url, tmp_path / name, tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    return tmp_path / name


def test_an_unknown_answer_is_counted_alike_by_the_run_and_analyze(tmp_path: Path) -> None:
    replies = gold_replies("bamboogle")
    first = next(iter(replies))
    run = _run(tmp_path, "bamboogle", {**replies, first: "unknown"})
    summary = json.loads((run / "metrics.json").read_text())["run"]
    result = run_cli("analyze", run, "-o", tmp_path / "a.json")
    assert result.returncode == 0, result.stderr
    dimensions = json.loads((tmp_path / "a.json").read_text())["dimensions"]
    extraction = {c["name"]: c["count"] for d in dimensions if d["name"] == "answer extraction"
                  for c in d["categories"]}
    assert summary["abstained"] == extraction.get("abstained (unknown)", 0) == 0
    assert summary["answered"] == extraction["strict extraction ok"]
    assert summary["no_answer"] == extraction.get("no answer extracted", 0)


def test_strategyqa_samples_hold_the_scored_answer_and_a_judge_file_binds(
        tmp_path: Path) -> None:
    run = _run(tmp_path, "strategyqa", gold_replies("strategyqa"))
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    scores = {json.loads(line)["id"]: json.loads(line)
              for line in (run / "scores.jsonl").read_text().splitlines()}
    assert samples and all(s["answer"] == scores[s["id"]]["prediction"] for s in samples)
    assert {s["answer"] for s in samples} <= {"true", "false"}
    judged = tmp_path / "judged.jsonl"
    judged.write_text("".join(json.dumps({
        "id": s["id"], "question": s["question"], "response": s["answer"],
        "correct_answer": scores[s["id"]]["gold"][0], "correct": True, "parse_ok": True,
    }) + "\n" for s in samples))
    result = run_cli("analyze", run, "--judge", judged)
    assert result.returncode == 0, result.stderr
    assert "did not judge the predictions" not in result.stderr
