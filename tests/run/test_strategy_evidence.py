"""What a chain strategy predicts besides its answer on HotpotQA and 2WikiMultihopQA: the
sentences its contexts came from (the example's own paragraphs) are the predicted supporting
facts, so the official sp and joint metrics mean something."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks.hotpotqa.reply_facts import evidence_facts
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI
from tests.run.chain_script import Plan, scripted_chains
from tests.run.helpers import MODEL, load, rows
from tests.run.test_strategies import sample_gold

QUESTION = "Which lake is next to the town where the clockmaker Ilse Varga was born?"


def plans(question: str, seed: int | None) -> Plan:
    if question == QUESTION:
        return [("Where was the clockmaker Ilse Varga born?", "Tollin"),
                ("Which lake does Tollin lie on the shore of?", "Lake Miren")], "Lake Miren"
    return [], "no idea"


def meta(question: str, facts: list[str]) -> str:
    return "So the answer is: Lake Miren." if question == QUESTION else "So the answer is: no."


def test_evidence_facts_read_only_sentence_sources_of_known_titles() -> None:
    sources = ["Tollin [1]", "Ilse Varga [0]", "Tollin [1]", "doc-17", "https://x.test/a [2]",
               "Unknown [0]", "Tollin [x]"]
    assert evidence_facts(sources, ["Ilse Varga", "Tollin"]) == (("Tollin", 1), ("Ilse Varga", 0))
    assert evidence_facts(None, ["Tollin"]) == ()


@pytest.mark.parametrize("strategy", ["self-ask", "mcr"])
def test_chain_contexts_become_supporting_facts(tmp_path: Path, strategy: str) -> None:
    out = tmp_path / "run"
    extra = ["--chains", "2", "--num-retries", "0"] if strategy == "mcr" else []
    with FakeOpenAI(body_responder=scripted_chains(plans, meta)) as server:
        result = run_cli("run", "hotpotqa", "--gold", sample_gold("hotpotqa"), "--model", MODEL,
                         "--base-url", server.base_url, "-o", out, "--cache-dir",
                         tmp_path / "cache", "--no-progress", "--resamples", "0", "--seed", "1",
                         "--strategy", strategy, "--limit", "1", *extra)
    assert result.returncode == 0, result.stderr
    (row,) = rows(out / "samples.jsonl")
    contexts = row["rounds"][0]["chains"][0]["contexts"]
    # Context1 for the question, one per follow-up: each the best sentence of the paragraphs
    assert [c["source"] for c in contexts] == ["Ilse Varga [0]", "Ilse Varga [0]", "Tollin [1]"]
    assert row["prediction"]["sp"] == [["Ilse Varga", 0], ["Tollin", 1]]
    predictions: Any = load(out / "predictions.json")
    assert predictions["sp"]["sample-hp-1"] == [["Ilse Varga", 0], ["Tollin", 1]]
    metrics = load(out / "metrics.json")["metrics"]
    assert metrics["em"] == 1.0 and metrics["sp_em"] == 1.0 and metrics["joint_em"] == 1.0
