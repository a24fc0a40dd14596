"""An agent attempt's row in samples.jsonl is capped like a run's sample rows: a model that
sends megabytes of tool arguments makes a row of at most MAX_ROW_BYTES, marked
``row_truncated``; its final answer and status stay, and the trajectory keeps the calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.run.caps import MAX_CELL_CHARS, MAX_ROW_BYTES
from tests.conftest import run_cli
from tests.hdr.world import ALL_TASKS, build_world, scripted
from tests.openai_server import FakeOpenAI

#: a query of 1.2 million characters: refused by the SQL guard, and logged with its arguments
HUGE_SQL = "SELECT 1 -- " + "x" * 1_200_000


@pytest.mark.slow
def test_an_attempt_with_huge_tool_arguments_is_capped(tmp_path: Path) -> None:
    tasks: list[dict[str, Any]] = [{
        "id": "sql2s_0_bulky", "final_question": "Which city hosts the maker?", "hint": "",
        "db": "shop", "final_answer": "Springfield"}]
    world = build_world(tmp_path, tasks)
    ALL_TASKS.extend(tasks)
    respond = scripted({"sql2s_0_bulky": [
        [("run_sql", {"sql": HUGE_SQL}) for _ in range(4)],
        [("final_answer", {"answer": "Springfield"})]]},
        default=lambda turn: [("final_answer", {"answer": "Springfield"})])
    try:
        with FakeOpenAI(body_responder=respond) as server:
            result = run_cli(
                "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                world.db_root, "--corpus", world.corpus, "--model", "openai/bulky",
                "--base-url", server.base_url, "--judge-model", "judge", "--judge-base-url",
                server.base_url, "-o", tmp_path / "run", "--no-cache", "--no-progress",
                "--max-turns", "4", "--resamples", "0", timeout=240)
    finally:
        del ALL_TASKS[-len(tasks):]
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (tmp_path / "run" / "samples.jsonl").read_bytes().splitlines()
    assert len(lines) == 1
    assert len(lines[0]) < 2 * 1024 * 1024 <= MAX_ROW_BYTES  # before: 4.8 MB
    row = json.loads(lines[0])
    assert row["row_truncated"] is True
    assert [f"tool_calls.{i}.arguments" for i in range(4)] == row["truncated_fields"]
    assert all(len(c["arguments"]) < MAX_CELL_CHARS + 40 for c in row["tool_calls"])
    assert row["status"] == "final_answer" and row["final_answer"] == "Springfield"
    trajectory = json.loads((tmp_path / "run" / row["trajectory_file"]).read_text())
    calls = [c for m in trajectory["messages"] for c in m.get("tool_calls") or []]
    assert len(calls[0]["function"]["arguments"]) > 1_200_000  # the conversation is whole
