"""The report's sample view shows a chain strategy's rounds: every chain with its steps and
evidence, the methods' answers and the meta-reasoner's input and output (real browser)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hopscore.report.build import chains_view
from tests.conftest import run_cli
from tests.report.test_browser import chromium, open_report  # noqa: F401 - the fixture
from tests.run.helpers import rows
from tests.run.test_strategies import QUESTIONS, run_strategy


def strategy_run(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in [
        {"id": "d1", "title": "Balloon records",
         "text": "Hot-air balloons have flown above Mount Everest; the first fact is asked."},
        {"id": "d2", "title": "Sequels", "text": "What follows the first is the second fact."},
    ]))
    result, out, _ = run_strategy(tmp_path, "mcr", "--chains", "2", "--num-retries", "0",
                                  "--corpus", str(corpus))
    assert result.returncode == 0, result.stderr
    return out


def test_chains_view_of_a_row(tmp_path: Path) -> None:
    out = strategy_run(tmp_path)
    row = next(r for r in rows(out / "samples.jsonl") if r["question"] == QUESTIONS[0])
    (view,) = chains_view(row, 4000) or []
    assert [c["i"] for c in view["chains"]] == [0, 1]
    first = view["chains"][0]["steps"][0]["e"]
    assert first.startswith(("Balloon records: ", "Sequels: "))  # titled, as MCR's contexts
    assert view["methods"]["mcr"]["answer"] == "Yes" and "Derived facts:" in view["meta_in"]
    assert chains_view({"raw_output": "x"}, 100) is None


def test_report_sample_view_shows_chains(tmp_path: Path, chromium: Any) -> None:  # noqa: F811
    out = strategy_run(tmp_path)
    html = tmp_path / "report.html"
    result = run_cli("report", out, "-o", html)
    assert result.returncode == 0, result.stderr
    page, errors, _ = open_report(chromium, html)
    page.fill("#filter-search", "hot-air balloon")
    page.wait_for_timeout(500)
    page.click("#sample-rows tr")
    text = page.locator("#detail").inner_text()
    assert "chains (2 per round, 1 round)" in text and "round 0: Yes" in text
    assert "chain 0 (temperature 0" in text and "chain 1 (temperature 0.7" in text
    assert "MCR: Yes" in text and "SC:" in text
    page.locator("#detail summary", has_text="chain 0 (").first.click()
    assert "evidence: " in page.locator("#detail").inner_text()
    page.locator("#detail summary", has_text="meta-reasoner input").first.click()
    assert "Derived facts:" in page.locator("#detail").inner_text()
    assert errors == []
