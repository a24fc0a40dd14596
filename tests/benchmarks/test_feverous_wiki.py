"""Open-book FEVEROUS: the feverous_wikiv1.db reader, element retrieval, cited ids as
predicted evidence, and a run whose scripted model cites the right elements."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hopscore.benchmarks.feverous import cited_elements
from hopscore.benchmarks.feverous.wiki import (
    FeverousWiki,
    page_units,
    plain,
    render,
)
from hopscore.errors import HopscoreError
from tests.benchmarks.feverous_db import CLAIMS, PAGES, build_wiki_db, gold_subset
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply


@pytest.fixture
def wiki(tmp_path: Path) -> FeverousWiki:
    return FeverousWiki(build_wiki_db(tmp_path / "feverous_wikiv1.db"))


def test_page_units_carry_the_official_element_ids():
    units = page_units("Kestrel Line", {"title": "Kestrel Line", **PAGES["Kestrel Line"]})
    ids = [i for u in units for i in u.ids]
    assert ids[:3] == ["Kestrel Line_sentence_0", "Kestrel Line_sentence_1",
                       "Kestrel Line_section_2"]
    assert "Kestrel Line_table_caption_1" in ids and "Kestrel Line_item_0_0" in ids
    row = next(u for u in units if "Kestrel Line_cell_1_2_0" in u.ids)
    assert row.display == "[Kestrel Line_cell_1_2_0] Mill Lane | [Kestrel Line_cell_1_2_1] 1911"
    header = next(u for u in units if u.header)
    assert header.text == "[H] Station | [H] Opened"
    assert plain("in [[Westmarch|Westmarch county]] and [[Dover]]") == \
        "in Westmarch county and Dover"


def test_pages_are_found_by_title_and_elements_ranked(wiki: FeverousWiki):
    assert wiki.pages == len(PAGES)
    claim = "Aldermoor Abbey was founded in 1142 and rebuilt after a fire in 1390."
    assert wiki.title_matches(claim)[:2] == ["Aldermoor Abbey", "Abbey"]  # longest first
    units = wiki.retrieve(claim, pages=3, elements=3)
    assert {u.ids[0] for u in units} >= {"Aldermoor Abbey_sentence_0",
                                         "Aldermoor Abbey_sentence_3"}
    # titles are NFD in the database; a claim in NFC still finds the page
    assert wiki.find_pages("The Café Rouge opened in 1911.", 1) == ["Cafe\u0301 Rouge"]
    shown = render(wiki.retrieve("The Kestrel Line had four stations: Mill Lane", 3, 4), wiki)
    kestrel = next(p for p in shown if p["title"] == "Kestrel Line")
    # a table row brings the table's header row with it, in document order
    assert any(line.startswith("[Kestrel Line_header_cell_1_0_0]") for line in kestrel["lines"])


def test_cited_ids_become_predicted_evidence():
    shown = ("Kestrel Line_sentence_1", "Kestrel Line_cell_1_2_0")
    reply = ("The line opened in 1911 [Kestrel Line_sentence_1].\nEvidence: "
             "[kestrel line _ sentence_1], [Kestrel Line_cell_1_2_0, Other Page_cell_0_1_1], "
             "[not an id]\nAnswer: SUPPORTS")
    assert cited_elements(reply, shown) == ["Kestrel Line_sentence_1", "Kestrel Line_cell_1_2_0",
                                            "Other Page_cell_0_1_1"]
    assert cited_elements("Evidence: none\nAnswer: NOT ENOUGH INFO", shown) == []


def test_a_database_in_another_format_is_a_clear_error(tmp_path: Path):
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE documents (id, text)").connection.commit()
    with pytest.raises(HopscoreError, match="wiki"):
        FeverousWiki(other)
    with pytest.raises(HopscoreError, match="not found"):
        FeverousWiki(tmp_path / "missing.db")


def claim_of(prompt: str) -> str:
    return [line for line in prompt.splitlines() if line.startswith("Claim: ")][-1][7:]


def open_book_run(tmp_path: Path, cite: bool) -> dict[str, Any]:
    gold = gold_subset(tmp_path / "gold.jsonl")
    claims = {json.loads(line)["claim"]: json.loads(line)["id"]
              for line in gold.read_text().splitlines()[1:]}
    seen: list[str] = []

    def reply(prompt: str, attempt: int) -> Reply:
        evidence, label = CLAIMS[claims[claim_of(prompt)]]
        for element in evidence:  # retrieval put every needed element in the prompt
            assert f"[{element}]" in prompt, (element, prompt[-1500:])
        seen.append(prompt)
        cited = ", ".join(f"[{e}]" for e in evidence) if cite else "none"
        return Reply(f"The pages settle it.\nEvidence: {cited}\nAnswer: {label}")

    out = tmp_path / ("cited" if cite else "uncited")
    with FakeOpenAI(reply) as server:
        result = run_cli("run", "feverous", "--gold", gold, "--model", "openai/m",
                         "--base-url", server.base_url, "-o", out, "--no-cache", "--no-progress",
                         "--resamples", "20", "--wiki-db",
                         build_wiki_db(tmp_path / f"wiki-{cite}.db"), "--wiki-pages", "3",
                         "--wiki-elements", "12")
    assert result.returncode == 0, result.stderr
    assert len(seen) == 3 and "element" in seen[0]
    metrics: dict[str, Any] = json.loads((out / "metrics.json").read_text())
    return metrics


def test_open_book_run_scores_the_cited_evidence(tmp_path: Path):
    cited = open_book_run(tmp_path, cite=True)
    assert cited["metrics"]["feverous_score"] == 1.0
    assert cited["metrics"]["evidence_recall"] == 1.0
    uncited = open_book_run(tmp_path, cite=False)
    assert uncited["metrics"]["label_accuracy"] == 1.0
    assert uncited["metrics"]["feverous_score"] == 0.0  # no complete evidence set predicted
    predictions = [json.loads(line) for line in
                   (tmp_path / "cited" / "predictions.jsonl").read_text().splitlines()]
    assert predictions[0]["predicted_evidence"] == CLAIMS[101][0]


def test_chain_strategies_read_the_wiki_and_predict_the_evidence_they_used(tmp_path: Path):
    from tests.run.chain_script import scripted_chains

    gold = gold_subset(tmp_path / "gold.jsonl")

    def plans(question: str, seed: int | None) -> Any:
        return [("When was Aldermoor Abbey founded?", "In 1142."),
                ("When was the abbey rebuilt after a fire?", "After 1390.")], "Yes"

    with FakeOpenAI(body_responder=scripted_chains(plans)) as server:
        result = run_cli("run", "feverous", "--gold", gold, "--model", "openai/m", "--base-url",
                         server.base_url, "-o", tmp_path / "sa", "--no-cache", "--no-progress",
                         "--resamples", "0", "--strategy", "self-ask", "--limit", "1",
                         "--wiki-db", build_wiki_db(tmp_path / "wiki.db"))
    assert result.returncode == 0, result.stderr
    row = json.loads((tmp_path / "sa" / "samples.jsonl").read_text().splitlines()[0])
    sources = [c["source"] for c in row["rounds"][0]["chains"][0]["contexts"]]
    assert sources[1:] == ["Aldermoor Abbey_sentence_0", "Aldermoor Abbey_sentence_3"]
    assert all(re.match(r"^[^_]+_(sentence|cell|item)", s) for s in sources)
    assert row["prediction"]["answer"] == "SUPPORTS"
    assert set(CLAIMS[101][0]) <= set(row["prediction"]["evidence"])
    scores = json.loads((tmp_path / "sa" / "scores.jsonl").read_text().splitlines()[0])
    assert scores["metrics"]["feverous_score"] == 1.0


def test_a_cited_page_title_is_predicted_evidence(tmp_path: Path):
    """FEVEROUS has <page>_title elements (in evidence and contexts); a reply citing
    [Aldermoor Abbey_title] lost it (neither shown nor of a known id shape)."""
    lines = gold_subset(tmp_path / "subset.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines[1:]]
    first = next(r for r in records if r["id"] == 101)
    first["evidence"][0]["content"].insert(0, "Aldermoor Abbey_title")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join([lines[0], *map(json.dumps, records)]) + "\n")
    cited = {**{i: e for i, (e, _) in CLAIMS.items()},
             101: ["Aldermoor Abbey_title", *CLAIMS[101][0]]}
    claims = {r["claim"]: r["id"] for r in records}

    def reply(prompt: str, attempt: int) -> Reply:
        claim_id = claims[claim_of(prompt)]
        evidence = ", ".join(f"[{e}]" for e in cited[claim_id])
        return Reply(f"The pages settle it.\nEvidence: {evidence}\nAnswer: {CLAIMS[claim_id][1]}")

    with FakeOpenAI(reply) as server:
        result = run_cli("run", "feverous", "--gold", gold, "--model", "openai/m",
                         "--base-url", server.base_url, "-o", tmp_path / "out", "--no-cache",
                         "--no-progress", "--resamples", "0", "--wiki-db",
                         build_wiki_db(tmp_path / "wiki.db"), "--wiki-pages", "3",
                         "--wiki-elements", "12")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["metrics"]["feverous_score"] == 1.0
    predictions = [json.loads(line) for line in
                   (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()]
    assert next(p for p in predictions if str(p["id"]) == "101")["predicted_evidence"] == \
        cited[101]
    assert cited_elements("Evidence: [Other Page_title], [a_title page]") == ["Other Page_title"]
