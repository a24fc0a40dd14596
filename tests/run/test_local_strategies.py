"""The real local model (SmolLM2-135M) through the chain strategies: one SC and one MCR run on
3 questions complete, every chain and the meta-reasoner's input and output are kept. Slow;
skipped only without the local extra."""

from __future__ import annotations

import pytest

from hopscore.engine.local import missing_requirements
from tests.conftest import run_cli
from tests.run.helpers import load, rows
from tests.run.test_strategies import sample_gold

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_requirements()),
                       reason=f"local extra not installed: {missing_requirements()}"),
]


@pytest.mark.parametrize("strategy", ["sc", "mcr"])
def test_local_model_completes_sc_and_mcr_runs(tmp_path_factory: pytest.TempPathFactory,
                                               strategy: str) -> None:
    cache = tmp_path_factory.getbasetemp() / "shared-cache"  # MCR reuses SC's chain calls
    out = tmp_path_factory.mktemp(strategy) / "run"
    result = run_cli("run", "strategyqa", "--gold", sample_gold("strategyqa"), "--model",
                     "local/smollm2", "--strategy", strategy, "--chains", "2", "--limit", "3",
                     "--shots", "1", "--max-tokens", "40", "--chain-calls", "3",
                     "--num-retries", "0", "--seed", "1", "-o", out, "--cache-dir", cache,
                     "--no-progress", "--resamples", "0", timeout=1500)
    assert result.returncode == 0, result.stderr
    table = rows(out / "samples.jsonl")
    assert len(table) == 3 and all(r["error"] is None for r in table)
    for row in table:
        chains = row["rounds"][-1]["chains"]
        assert len(chains) == 2 and all(c["calls"] for c in chains)
        assert [c["temperature"] for c in chains] == [0.0, 0.7]
        if strategy == "mcr":
            meta = row["rounds"][-1]["meta"]
            assert meta["input"] and isinstance(meta["output"], str)
    methods = load(out / "metrics.json")["methods"]["methods"]
    assert set(methods) == ({"sa", "sc", "oracle", "mcr"} if strategy == "mcr"
                            else {"sa", "sc", "oracle"})
    assert "over answered" in result.stdout
