"""The real local model (SmolLM2-135M) as a search agent on the bundled HotpotQA and MuSiQue
toy corpora, with both protocols: two questions complete, resumably, with the searches and the
retrieval recall in the metrics. Slow; skipped only without the local extra."""

from __future__ import annotations

import pytest

from hopscore.engine.local import missing_requirements
from tests.conftest import run_cli
from tests.run.helpers import load, rows

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_requirements()),
                       reason=f"local extra not installed: {missing_requirements()}"),
]


@pytest.mark.parametrize(("name", "protocol"), [("hotpotqa", "tags"), ("hotpotqa", "native"),
                                              ("musique", "tags")])
def test_local_model_runs_the_search_agent(tmp_path_factory: pytest.TempPathFactory,
                                           name: str, protocol: str) -> None:
    out = tmp_path_factory.mktemp(f"{name}-{protocol}") / "run"
    args = ["agent", name, "--agent", "search", "--model", "local/smollm2",
            "--search-protocol", protocol, "--limit", "2", "--max-turns", "3",
            "--max-tokens", "48", "--seed", "1", "-o", out, "--no-progress",
            "--resamples", "0"]
    result = run_cli(*args, timeout=1500)
    assert result.returncode == 0, result.stderr
    table = rows(out / "samples.jsonl")
    assert len(table) == 2 and all(r["error"] is None for r in table)
    for row in table:
        assert row["agent_status"] in ("answered", "max_turns")
        assert 1 <= row["turns"] <= 3 and len(row["searches"]) == row["search_calls"]
        assert row["messages"][0]["role"] == "system"
    search = load(out / "metrics.json")["search"]
    assert search["questions"] == 2 and search["gold_questions"] == 2
    assert 0.0 <= search["retrieval_recall"] <= 1.0
    # the same command again: every question is already done, nothing is asked
    again = run_cli(*args, timeout=600)
    assert again.returncode == 0, again.stderr
    assert len(rows(out / "samples.jsonl")) == 2
