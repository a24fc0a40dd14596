"""A killed HDR run continues where it stopped: no finished attempt runs again, none is lost."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from tests.conftest import kill_cli_when, run_cli
from tests.hdr.world import ALL_TASKS, SCRIPTS, Turn, build_world, scripted
from tests.openai_server import FakeOpenAI

COUNT = 6


def tasks() -> list[dict[str, Any]]:
    return [{"id": f"sql2s_r{i}", "final_question": f"Resume case {i}: where is Acme based?",
             "hint": "", "db": "shop", "final_answer": "Springfield"} for i in range(COUNT)]


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_resume_after_sigkill(tmp_path: Path) -> None:
    created = tasks()
    world = build_world(tmp_path, created)
    ALL_TASKS.extend(created)
    script: dict[str, list[Turn]] = {t["id"]: SCRIPTS["sql2s_001"] for t in created}
    out = tmp_path / "run"
    args = ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--corpus", world.corpus, "--model", "openai/agent", "--judge-model", "judge",
            "--output-dir", out, "--cache-dir", tmp_path / "cache", "--no-progress",
            "--concurrency", "2", "--resamples", "0"]
    try:
        with FakeOpenAI(body_responder=scripted(script), latency=0.15) as server:
            args += ["--base-url", server.base_url, "--judge-base-url", server.base_url]
            samples = out / "samples.jsonl"
            kill_cli_when(*args, watched=samples, lines=2, wait_s=120)
            done_before = {r["instance_id"] for r in rows(samples)}
            assert 2 <= len(done_before) < COUNT
            with samples.open("ab") as handle:  # and a row torn by the crash
                handle.write(b'{"run_key": "torn", "instance_id": "sql2s_r5", "sta')
            agent_before = sum("tools" in entry.body for entry in server.log)
            result = run_cli(*args)
            assert result.returncode == 0, result.stderr
            assert "cut a torn last line" in result.stderr
            turns = Counter(
                (next(t["id"] for t in created if t["final_question"] in e.body["messages"][1][
                    "content"]), sum(m["role"] == "assistant" for m in e.body["messages"]))
                for e in server.log if "tools" in e.body)
    finally:
        del ALL_TASKS[-len(created):]
    final = rows(out / "samples.jsonl")
    assert [r["instance_id"] for r in final] == [t["id"] for t in created]
    assert all(r["status"] == "final_answer" for r in final)
    for task_id in done_before:  # finished attempts are never asked again
        assert [turns[(task_id, turn)] for turn in range(4)] == [1, 1, 1, 1]
    # the attempts in flight at the kill replay their cached turns: at most the requests that
    # were on the wire at that moment are sent twice
    assert sum(turns.values()) <= COUNT * 4 + 2
    assert sum(turns.values()) - agent_before <= (COUNT - len(done_before)) * 4
    grades = rows(out / "grades.jsonl")
    assert [g["correct"] for g in grades] == [True] * COUNT
