"""2WikiMultihopQA runs ask for (subject; relation; object) evidence triples in the gold's
relation vocabulary and parse them into ``evidence``, so the official evidence metrics mean
something."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.twowiki.evidence_text import cited_triples, split_evidence
from tests.conftest import FIXTURES, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, asked, load

GOLD = FIXTURES / "2wikimultihopqa" / "dev_small.json"


def test_triples_are_read_in_every_common_spelling():
    reply = ("Reasoning [Tam Ruiz, 0].\nEvidence: (Tam Ruiz; date of birth; 1955), "
             "[Washington, D.C., country, United States], (\"Nell Okafor\" | mother | Ana), "
             "(Quiet Harbor, director, Edward Marlow), (just words), (a; b)\n"
             "Supporting facts: [Tam Ruiz, 0]\nAnswer: Tam Ruiz")
    facts, evidence = split_evidence(reply)
    assert "Supporting facts: [Tam Ruiz, 0]" in facts and "Evidence" not in facts
    assert cited_triples(evidence, ("country", "date of birth", "director", "mother")) == (
        ("Tam Ruiz", "date of birth", "1955"), ("Washington, D.C.", "country", "United States"),
        ("Nell Okafor", "mother", "Ana"), ("Quiet Harbor", "director", "Edward Marlow"))
    assert split_evidence("no label here") == ("no label here", "")


def run(tmp_path: Path, cite: bool) -> tuple[dict[str, Any], list[str]]:
    examples = {e.question.strip(): e for e in benchmarks.get("2wikimultihopqa").load_gold(GOLD)}
    prompts: list[str] = []

    def reply(prompt: str, attempt: int) -> Reply:
        prompts.append(prompt)
        example: Any = examples[asked(prompt)]
        facts = ", ".join(f"[{t}, {n}]" for t, n in example.supporting_facts)
        triples = ", ".join(f"({s}; {r}; {o})" for s, r, o in example.evidences) if cite \
            else ""
        return Reply(f"Step by step.\nSupporting facts: {facts}\nEvidence: {triples}\n"
                     f"Answer: {example.answer}")

    out = tmp_path / ("cited" if cite else "uncited")
    with FakeOpenAI(reply) as server:
        result = run_cli("run", "2wikimultihopqa", "--gold", GOLD, "--model", MODEL,
                         "--base-url", server.base_url, "-o", out, "--no-cache",
                         "--no-progress", "--resamples", "0", "--shots", "1")
    assert result.returncode == 0, result.stderr
    metrics: dict[str, Any] = load(out / "metrics.json")["metrics"]
    return metrics, prompts


def test_cited_gold_triples_give_the_official_evidence_metrics(tmp_path: Path):
    cited, prompts = run(tmp_path, cite=True)
    # tw-10's gold repeats a triple: one distinct prediction cannot match it twice (official:
    # precision 1, recall 2/3), so that example alone misses evi_em
    assert cited["evi_em"] == pytest.approx(0.9)
    assert cited["evi_f1"] == pytest.approx((9 + 0.8) / 10)
    assert cited["joint_em"] == pytest.approx(0.9)
    # the prompt offers the gold's relations (beyond the built-in list) and shows an exemplar
    assert "founded by" in prompts[0] and "Evidence: (Ansel Vore; date of birth;" in prompts[0]
    uncited, _ = run(tmp_path, cite=False)
    assert uncited["evi_f1"] == 0.0 and uncited["sp_em"] == pytest.approx(1.0)
    # the official predictions file carries the triples, and hopscore score reads them back
    official = load(tmp_path / "cited" / "predictions.json")
    example = next(iter(official["evidence"].values()))
    assert example and all(len(t) == 3 for t in example)
