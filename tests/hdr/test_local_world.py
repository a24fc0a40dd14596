"""The real local model on the built-in world, as a fresh install runs it: ``hopscore run
hybrid-deep-research --model local/smollm2 --limit 2`` with no other file, and ``hopscore demo
--hdr``. Slow (model load plus CPU generations); skipped only without the local extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.engine.local import missing_requirements
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_requirements()),
                       reason=f"local extra not installed: {missing_requirements()}"),
]


def test_fresh_install_runs_the_builtin_world_with_the_local_model(tmp_path: Path) -> None:
    # a fresh cache (the world is built there) and an empty working folder: no other file
    result = run_cli("run", "hybrid-deep-research", "--model", "local/smollm2", "--limit", "2",
                     cwd=tmp_path, env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"),
                                        "JUDGE_MODEL": ""}, timeout=1500)
    assert result.returncode in (0, 1), result.stderr  # 1: the tiny model may fail a task
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert "built-in world" in result.stderr
    out = tmp_path / "runs" / "hybrid-deep-research__local-smollm2"
    samples = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [s["instance_id"] for s in samples] == ["s2sql_001", "s2sql_002"]
    assert all(s["model_calls"] >= 1 and s["error"] is None for s in samples)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_gold"] == 2 and "accuracy" in metrics["metrics"]
    assert "S2SQL" in result.stdout


def test_demo_hdr_shows_an_agent_run_end_to_end(tmp_path: Path) -> None:
    result = run_cli("demo", "--hdr", "--max-turns", "2", "-o", tmp_path / "demo",
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}, timeout=1500)
    assert result.returncode == 0, result.stderr
    for needed in ("attempts (tool calls in order)", "s2sql_001", "sql2s_001", "parallel_001",
                   "overall"):
        assert needed in result.stdout, needed
    assert (tmp_path / "demo" / "run" / "grades.jsonl").is_file()
