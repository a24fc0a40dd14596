"""An endpoint that stays down past --max-outage during ``hopscore judge``, ``score --judge`` and
the HDR agent (``hopscore run hybrid-deep-research``): --max-outage is taken, the command exits 2
naming the URL, keeps its finished rows (the agent's config.json says interrupted, as run's),
and a rerun against the endpoint back on the same port finishes without asking a finished row
again or writing one twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.engine.test_outage import restart_after
from tests.hdr.world import ALL_TASKS, SCRIPTS, Turn, build_world, scripted
from tests.openai_server import FakeOpenAI, Reply, judge_reply


def _port(server: FakeOpenAI) -> int:
    return int(server.base_url.rsplit(":", 1)[1].split("/")[0])


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def judged(prompt: str, attempt: int) -> Reply:
    return judge_reply(True)


@pytest.mark.slow
def test_judge_stops_at_max_outage_and_a_rerun_judges_only_the_rest(tmp_path: Path) -> None:
    rows = 30
    source = tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps({"id": i, "question": f"What is item {i}?",
                                          "response": str(i), "correct_answer": str(i)}) + "\n"
                              for i in range(rows)), encoding="utf-8")
    out = tmp_path / "judged.jsonl"
    server = FakeOpenAI(judged, latency=0.1).start()
    port = _port(server)
    restart_after(server, 10, None, [])
    args = ["judge", "-i", source, "-o", out, "--model", "j", "--base-url", server.base_url,
            "--no-cache", "--no-progress", "--max-outage", "3"]
    result = run_cli(*args)
    assert result.returncode == 2, result.stderr
    assert f"{server.base_url} has not answered for" in result.stderr
    assert "(--max-outage)" in result.stderr and "rerun the same command" in result.stderr
    kept = [r for r in _rows(out) if r.get("correct") is not None]
    assert 1 <= len(kept) < rows
    with FakeOpenAI(judged, port=port) as again:
        second = run_cli(*args)
        assert second.returncode == 0, second.stderr
        asked = again.prompts()
    final = _rows(out)
    assert [r["id"] for r in final] == list(range(rows))
    assert all(r["correct"] is True for r in final)
    assert len(asked) == rows - len(kept)  # the rows judged before were not asked again


SAMPLES = (Path(__file__).resolve().parents[2] / "src" / "hopscore" / "benchmarks" / "hotpotqa"
           / "samples")


def test_score_judge_takes_judge_max_outage(tmp_path: Path) -> None:
    server = FakeOpenAI(judged, latency=0.2).start()
    url = server.base_url
    restart_after(server, 2, None, [])  # dies after its second verdict, for good
    result = run_cli("score", "hotpotqa", "-g", SAMPLES / "gold.json", "-p",
                     SAMPLES / "predictions.json", "--judge", "--judge-model", "j",
                     "--judge-base-url", url, "--judge-max-outage", "1", "--judge-concurrency", "1",
                     "--output-dir", tmp_path / "scores",
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2, result.stderr
    assert f"{url} has not answered for 1 s (--max-outage)" in result.stderr


COUNT = 10


@pytest.mark.slow
def test_the_agent_stops_interrupted_at_max_outage_and_resumes(tmp_path: Path) -> None:
    created = [{"id": f"sql2s_o{i}", "final_question": f"Outage case {i}: where is Acme based?",
                "hint": "", "db": "shop", "final_answer": "Springfield"} for i in range(COUNT)]
    world = build_world(tmp_path, created)
    ALL_TASKS.extend(created)
    script: dict[str, list[Turn]] = {t["id"]: SCRIPTS["sql2s_001"] for t in created}
    out = tmp_path / "run"
    server = FakeOpenAI(body_responder=scripted(script), latency=0.1).start()
    port = _port(server)
    restart_after(server, 16, None, [])
    args = ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root", world.db_root,
            "--corpus", world.corpus, "--model", "openai/agent", "--base-url", server.base_url,
            "--no-grade", "--output-dir", out, "--no-cache", "--no-progress",
            "--concurrency", "2", "--max-outage", "3"]
    try:
        result = run_cli(*args)
        assert result.returncode == 2, result.stderr
        assert f"{server.base_url} has not answered for" in result.stderr
        assert "config.json says interrupted" in result.stderr
        config = json.loads((out / "config.json").read_text())
        assert config["status"] == "interrupted"
        assert config["settings"]["max_outage"] == 3
        done_before = {r["instance_id"] for r in _rows(out / "samples.jsonl")
                       if r["status"] == "final_answer"}
        assert 1 <= len(done_before) < COUNT
        with FakeOpenAI(body_responder=scripted(script), port=port) as again:
            second = run_cli(*args)
            assert second.returncode == 0, second.stderr
            asked = Counter(next(t["id"] for t in created
                                 if t["final_question"] in e.body["messages"][1]["content"])
                            for e in again.log)
    finally:
        del ALL_TASKS[-len(created):]
    final = _rows(out / "samples.jsonl")
    assert [r["instance_id"] for r in final] == [t["id"] for t in created]
    assert all(r["status"] == "final_answer" for r in final)
    assert not set(asked) & done_before  # a finished attempt is never run again
    assert json.loads((out / "config.json").read_text())["status"] == "ungraded"
