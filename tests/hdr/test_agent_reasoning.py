"""The agent's reasoning settings: ``--reasoning-effort`` on every request of the agent's
loop (not the judge's), and in the run's settings."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hdr.test_agent_run import agent_requests, judge_requests, run_agent
from tests.hdr.world import SCRIPTS, build_world, scripted
from tests.openai_server import FakeOpenAI


def test_the_agent_sends_its_reasoning_effort(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        result = run_agent(world, server, tmp_path / "run", "--reasoning-effort", "medium")
    assert result.returncode == 0, result.stderr
    assert agent_requests(server)
    assert {body.get("reasoning_effort") for body in agent_requests(server)} == {"medium"}
    assert all("reasoning_effort" not in body for body in judge_requests(server))
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["settings"]["reasoning"] == {"effort": "medium"}
