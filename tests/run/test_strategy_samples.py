"""Every chain strategy on the built-in sample of every MCR dataset, against a loopback model
scripted per prompt whose chains and meta-reasoner give the gold answer: each run ends, each
row shows its chains, and every method scores what MCR's evaluator gives the gold answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.base import PromptInputs
from hopscore.run.mcr import evaluator_of
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI
from tests.run.chain_script import Plan, scripted_chains
from tests.run.helpers import MODEL, load, rows
from tests.run.test_strategies import sample_gold

DATASETS = ["strategyqa", "fermi", "quartz", "hotpotqa", "2wikimultihopqa", "bamboogle",
            "feverous"]


def gold_by_question(name: str) -> dict[str, str]:
    bench = benchmarks.get(name)
    return {bench.prompt_variables(e, PromptInputs())["mcr_question"].strip(): bench.mcr_gold(e)
            for e in bench.load_gold(sample_gold(name))}


@pytest.mark.parametrize("name", DATASETS)
def test_mcr_strategy_on_every_sample(tmp_path: Path, name: str) -> None:
    golds = gold_by_question(name)

    def plans(question: str, seed: int | None) -> Plan:
        return [("What is the first thing to know?", "the first thing")], golds[question.strip()]

    def meta(question: str, facts: list[str]) -> str:
        assert "What is the first thing to know? " in "\n".join(facts)
        return f"The facts agree. So the answer is: {golds[question.strip()]}."

    out = tmp_path / name
    with FakeOpenAI(body_responder=scripted_chains(plans, meta)) as server:
        result = run_cli("run", name, "--gold", sample_gold(name), "--model", MODEL,
                         "--base-url", server.base_url, "-o", out, "--cache-dir",
                         tmp_path / "cache", "--no-progress", "--resamples", "0", "--seed", "7",
                         "--strategy", "mcr", "--chains", "2", "--protocol", "mcr")
    assert result.returncode == 0, result.stderr
    table = rows(out / "samples.jsonl")
    assert len(table) == len(golds)
    for row in table:
        (round0,) = row["rounds"]
        assert [c["temperature"] for c in round0["chains"]] == [0.0, 0.7]
        assert all(c["answer"] == golds[row["asked"].strip()] for c in round0["chains"])
        assert round0["meta"]["output"].startswith("The facts agree.")
    evaluator = evaluator_of(benchmarks.get(name))
    expected = sum(float(evaluator(g, g) or 0.0) for g in golds.values()) / len(golds)
    methods = load(out / "metrics.json")["methods"]["methods"]
    for method in ("sa", "oracle", "mcr"):
        assert methods[method]["score_all"] == pytest.approx(expected), method
        assert methods[method]["answered"] == len(golds)
    if name != "quartz":  # MCR's SC scores the lower-cased winner: "a" is not QuaRTz's "A"
        assert methods["sc"]["score_all"] == pytest.approx(expected)
    else:
        assert methods["sc"]["score_all"] == 0.0
