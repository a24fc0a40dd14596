"""The agent fills a server that declares more slots than --concurrency (llama.cpp's /props
total_slots) when --concurrency is not given, as ``hopscore run`` does, and says how many
attempts it runs at once; a --concurrency given is kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.hdr.world import ALL_TASKS, SCRIPTS, Turn, build_world, scripted
from tests.openai_server import FakeOpenAI

SLOTS = 16
COUNT = 16


@pytest.mark.slow
@pytest.mark.parametrize("given", [None, "4"])
def test_the_agent_follows_the_declared_slots_unless_concurrency_is_given(
        given: str | None, tmp_path: Path) -> None:
    created = [{"id": f"sql2s_s{i}", "final_question": f"Slots case {i}: where is Acme based?",
                "hint": "", "db": "shop", "final_answer": "Springfield"} for i in range(COUNT)]
    world = build_world(tmp_path, created)
    ALL_TASKS.extend(created)
    script: dict[str, list[Turn]] = {t["id"]: SCRIPTS["sql2s_001"] for t in created}
    out = tmp_path / "run"
    try:
        with FakeOpenAI(body_responder=scripted(script), latency=0.3, slots=SLOTS,
                        props={"total_slots": SLOTS}) as server:
            result = run_cli("run", "hybrid-deep-research", "--tasks", world.tasks,
                             "--db-root", world.db_root, "--corpus", world.corpus, "--model",
                             "openai/agent", "--base-url", server.base_url, "--no-grade",
                             "--output-dir", out, "--no-cache", "--no-progress",
                             *(["--concurrency", given] if given else []))
            peak = server.max_in_flight
    finally:
        del ALL_TASKS[-len(created):]
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == COUNT and all(r["status"] == "final_answer" for r in rows)
    if given:
        assert "attempts at once" not in result.stderr
        assert peak <= int(given)
    else:
        assert (f"the server has {SLOTS} slots ({server.base_url.removesuffix('/v1')}/props): "
                f"{SLOTS + SLOTS // 8} attempts at once") in result.stderr
        assert peak > 8  # more than the default --concurrency 8: every slot was filled
