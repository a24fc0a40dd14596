"""A two-run HotpotQA report with hostile text in it, shared by the report tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.analysis.builders import add_run_files, scored_dir, write_hotpot_gold
from tests.conftest import run_cli

XSS_QUESTION = 'What is <img src=x onerror="alert(1)"> and </script><script>alert(2)</script>?'
XSS_ANSWER = "</script><script>alert(1)</script>"


@dataclass
class ReportCase:
    html: Path
    base: Path
    new: Path
    gold: Path


@pytest.fixture(scope="module")
def report_case(tmp_path_factory: pytest.TempPathFactory) -> ReportCase:
    tmp = tmp_path_factory.mktemp("report")
    gold = tmp / "gold.json"
    records = write_hotpot_gold(gold, 120)
    records[3]["question"] = XSS_QUESTION
    records[3]["context"][0][1][0] = "Context with <b>bold</b> & <script>alert(3)</script>."
    gold.write_text(json.dumps(records), encoding="utf-8")
    base = scored_dir(tmp, "base", gold, records, wrong=set(range(0, 120, 4)) | {3},
                      wrong_answer=XSS_ANSWER)
    new = scored_dir(tmp, "new", gold, records, wrong=set(range(0, 120, 6)), wrong_sp={5, 7})
    add_run_files(base, records, q005={"extracted": {"strict": None, "flexible": "x"}})
    html = tmp / "report.html"
    result = run_cli("report", base, new, "--gold", gold, "-o", html, "--resamples", "300")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr
    return ReportCase(html, base, new, gold)
