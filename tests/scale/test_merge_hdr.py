"""The HDR agent on a toy world, split into 4 shards and merged, equals the unsharded run:
attempts, trajectories, grades (execution match and the scripted judge), scores, metrics."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.hdr.world import ALL_TASKS, SCRIPTS, TASKS, build_world, scripted
from tests.openai_server import FakeOpenAI
from tests.scale.helpers import jsonl, load, same_bytes, same_json, same_rows, strip

FILES = ("samples.jsonl", "grades.jsonl", "judge.jsonl", "sql_match.jsonl", "s2sql_input.jsonl")


def copies() -> list[dict[str, Any]]:
    """Eight more tasks: the world's four under other ids (the script of a copy is its
    original's: the scripted model finds a task by its question)."""
    out = []
    for n in range(1, 3):
        for task in TASKS:
            prefix, number = task["id"].rsplit("_", 1)
            out.append({**task, "id": f"{prefix}_{100 * n + int(number)}",
                        "final_question": f"Copy {n}. {task['final_question']}"})
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[Path], Path]]:
    extra = copies()
    world = build_world(tmp_path_factory.mktemp("hdr-shards"), [*TASKS, *extra])
    ALL_TASKS.extend(extra)
    root = world.root
    outs = [root / f"shard{i}" for i in range(4)]
    try:
        with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
            base = ["run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                    world.db_root, "--corpus", world.corpus, "--model", "openai/agent",
                    "--base-url", server.base_url, "--judge-model", "judge", "--judge-base-url",
                    server.base_url, "--no-cache", "--no-progress", "--concurrency", "2",
                    "--repeats", "2", "--resamples", "200"]
            whole = run_cli(*base, "--output-dir", root / "whole")
            assert whole.returncode == 0, whole.stderr
            for index, out in enumerate(outs):
                shard = run_cli(*base, "--output-dir", out, "--shard", f"{index}/4")
                assert shard.returncode == 0, shard.stderr
            requests = len(server.log)
            merged = run_cli("merge", *outs, "-o", root / "merged")
            assert merged.returncode == 0, merged.stderr
            assert len(server.log) == requests  # the judge's verdicts are reused, not asked
            assert "overall" in merged.stdout
    finally:
        del ALL_TASKS[-len(extra):]
    yield root / "whole", outs, root / "merged"


def test_hdr_shards_merge_into_the_unsharded_run(runs: tuple[Path, list[Path], Path]) -> None:
    whole, outs, merged = runs
    tasks = [[r["instance_id"] for r in jsonl(out / "samples.jsonl")] for out in outs]
    assert all(tasks) and sum(len(t) for t in tasks) == 24  # 12 tasks, 2 attempts each
    for shard in tasks:  # a task's attempts stay together
        assert all(shard.count(task) == 2 for task in shard)
    for name in FILES:
        same_rows(whole / name, merged / name)
    for name in ("predictions.jsonl", "predictions.attempt-1.jsonl", "scores.jsonl"):
        same_bytes(whole / name, merged / name)
    same_json(whole / "metrics.json", merged / "metrics.json")
    assert load(merged / "metrics.json")["hdr"]["k"] == 2
    trajectories = sorted(p.name for p in (whole / "trajectories").iterdir())
    assert trajectories == sorted(p.name for p in (merged / "trajectories").iterdir())
    for name in trajectories:
        same_json(whole / "trajectories" / name, merged / "trajectories" / name)
    config = load(merged / "config.json")
    assert strip(config) == strip(load(whole / "config.json"))
    assert len(config["merged_from"]) == 4


def test_hdr_merge_refuses_missing_attempts(runs: tuple[Path, list[Path], Path],
                                            tmp_path: Path) -> None:
    _, outs, _ = runs
    cut = tmp_path / "cut"
    cut.mkdir()
    for item in outs[1].iterdir():
        if item.is_file():
            (cut / item.name).write_bytes(item.read_bytes())
    rows = (cut / "samples.jsonl").read_text().splitlines()
    (cut / "samples.jsonl").write_text("\n".join(rows[:-1]) + "\n")
    gone = json.loads(rows[-1])
    result = run_cli("merge", outs[0], cut, outs[2], outs[3], "-o", tmp_path / "m")
    assert result.returncode == 2
    assert f"shard 1/4 ({cut}): 1 attempts missing ({gone['instance_id']}#{gone['attempt']})" \
        in result.stderr
