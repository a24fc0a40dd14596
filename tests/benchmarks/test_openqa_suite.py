"""``hopscore suite preset``: the Search-R1 seven and the R1-Searcher four in one command each,
declared by the openqa benchmark (:mod:`hopscore.benchmarks.openqa.presets`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.errors import HopscoreError
from hopscore.run import suite_presets
from tests.benchmarks.helpers import write_jsonl
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, asked

SEVEN = ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")


def flashrag_folder(root: Path, leave_out: str = "musique") -> dict[str, str]:
    """Two invented questions per dataset in FlashRAG's layout; one dataset left out.
    Returns question -> the reply the stand-in model gives (right for the first question of
    each dataset, verbose for the second)."""
    replies = {}
    for name in SEVEN:
        if name == leave_out:
            continue
        split = "test" if name in ("nq", "triviaqa", "popqa", "bamboogle") else "dev"
        rows = [{"id": f"{split}_{i}", "question": f"What is {name} item {i}",
                 "golden_answers": [f"{name} answer {i}"]} for i in range(2)]
        (root / name).mkdir(parents=True)
        write_jsonl(root / name / f"{split}.jsonl", rows)
        replies[f"What is {name} item 0?"] = f"Answer: {name} answer 0"
        replies[f"What is {name} item 1?"] = f"Answer: it is {name} answer 1, I think"
    return replies


def test_presets_are_declared() -> None:
    found = suite_presets.presets()
    assert found["search-r1"][0] == "openqa" and found["r1-searcher"][0] == "openqa"
    assert [d.label for d in found["search-r1"][1].datasets] == list(SEVEN)
    assert len(found["r1-searcher"][1].datasets) == 4
    with pytest.raises(HopscoreError, match="search-r1, r1-searcher"):
        suite_presets.preset("search-r2")


def test_search_r1_seven_in_one_command(tmp_path: Path) -> None:
    data = tmp_path / "FlashRAG_datasets"
    replies = flashrag_folder(data)
    with FakeOpenAI(lambda p, a: Reply(replies[asked(p)])) as server:
        result = run_cli("suite", "preset", "search-r1", "--data-dir", data, "--model", MODEL,
                         "--base-url", server.base_url, "-o", tmp_path / "suite",
                         "--no-cache", "--no-progress", env={"COLUMNS": "200"})
    assert result.returncode == 1, result.stderr  # MuSiQue is missing
    assert "musique" in result.stdout and "missing: looked for" in result.stdout
    assert "average" in result.stdout
    suite = json.loads((tmp_path / "suite" / "suite.json").read_text(encoding="utf-8"))
    rows = {row["dataset"]: row for row in suite["datasets"]}
    assert list(rows) == list(SEVEN)
    for name, row in rows.items():
        if name == "musique":
            assert row["status"] == "missing"
            continue
        assert row["status"] == "ok" and row["n"] == 2, row
        assert row["metrics"]["em"] == 0.5 and row["metrics"]["cover_em"] == 1.0, row
        scored = json.loads((tmp_path / "suite" / name / "metrics.json").read_text())
        assert list(scored["groups"]) == [name]  # the dataset read from the folder's name
    assert suite["average"]["em"] == 0.5 and suite["average"]["sub_em"] == 1.0


def test_r1_searcher_four_from_real_eval_set(tmp_path: Path) -> None:
    from tests.conftest import shared_file

    folder = shared_file("r1-searcher/eval_set/bamboogle.jsonl").parent
    with FakeOpenAI(lambda p, a: Reply("Answer: james madison")) as server:
        result = run_cli("suite", "preset", "r1-searcher", "--data-dir", folder, "--model",
                         MODEL, "--base-url", server.base_url, "-o", tmp_path / "suite",
                         "--no-cache", "--no-progress", "--limit", "2", "--json")
    # only bamboogle.jsonl is whole in the shared folder (the others are *.first200.jsonl)
    assert result.returncode == 1, result.stderr
    suite = json.loads(result.stdout)
    rows = {row["dataset"]: row for row in suite["datasets"]}
    assert rows["bamboogle"]["status"] == "ok" and rows["bamboogle"]["n"] == 2
    assert rows["bamboogle"]["metrics"]["em"] == 0.5  # the first gold is "james madison"
    assert rows["hotpotqa"]["status"] == "missing"
