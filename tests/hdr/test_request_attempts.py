"""HDR samples record why a model request was retried: the turn and every attempt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.hdr.test_agent_run import jsonl, run_agent
from tests.hdr.world import SCRIPTS, build_world, scripted, task_of
from tests.openai_server import FakeOpenAI, Reply


def test_a_retried_agent_request_is_recorded_in_its_sample(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    inner = scripted(SCRIPTS)

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        turns = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        if "tools" in body and task_of(body) == "sql2s_001" and turns == 1 and attempt < 2:
            return Reply(status=503 if attempt == 0 else 500, body=b"")
        return inner(body, attempt)

    with FakeOpenAI(body_responder=respond) as server:
        result = run_agent(world, server, tmp_path / "run")
    assert result.returncode == 0, result.stderr
    samples = {s["instance_id"]: s for s in jsonl(tmp_path / "run" / "samples.jsonl")}
    [record] = samples["sql2s_001"]["request_attempts"]
    assert record["turn"] == 2
    assert [a["status"] for a in record["attempts"]] == [503, 500, 200]
    assert record["attempts"][0]["error"] == "server_error: HTTP 503 with an empty body"
    assert all(s["request_attempts"] == [] for k, s in samples.items() if k != "sql2s_001")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["requests"]["retried_by_kind"] == {"server_error": 2}
