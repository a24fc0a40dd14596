"""The agent machinery reaches its benchmark through the registry and what the benchmark
declares (``runner``, ``load_agent_tasks``, ``task_example``, ``agent_world``), never by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.agent import world
from hopscore.agent.benchmark import agent_benchmark
from hopscore.benchmarks import agent_tasks
from hopscore.benchmarks.base import Benchmark
from hopscore.errors import HopscoreError


def test_the_agent_benchmark_is_the_registrys_one_that_runs_an_agent() -> None:
    agents = [name for name in benchmarks.names() if benchmarks.get(name).runner == "agent"]
    bench = agent_benchmark()
    assert bench.runner == "agent" and bench.name == agents[0]
    assert agent_benchmark(bench.name).name == bench.name
    assert agent_benchmark() is not bench  # a fresh instance: scoring state is not shared
    qa = next(name for name in benchmarks.names() if benchmarks.get(name).runner == "qa")
    with pytest.raises(HopscoreError, match="does not run an agent"):
        agent_benchmark(qa)


def test_the_declared_task_loader_and_gold_examples(tmp_path: Path) -> None:
    bench = agent_benchmark()
    built = world.materialize(tmp_path)
    tasks, merged = bench.load_agent_tasks(built.tasks)
    assert merged is None
    assert tasks == agent_tasks.load_tasks(built.tasks)[0]
    gold = bench.load_gold(built.tasks)
    assert [bench.task_example(task) for task in tasks] == gold


class _AgentToy(Benchmark[Any, Any]):
    """A third-party agent benchmark: only what it declares."""

    name = "agent-toy"
    title = "AgentToy"
    metrics = ("accuracy",)
    runner = "agent"
    agent_world = "world"
    where: Path

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[Any]:
        return []

    def load_predictions(self, path: Path) -> Any:
        raise NotImplementedError

    def score(self, example: Any, prediction: Any) -> dict[str, float]:
        return {}

    @classmethod
    def resource(cls, name: str) -> Any:
        return cls.where / name


def test_the_world_is_the_folder_the_benchmark_declares(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    shipped = agent_benchmark()
    assert shipped.agent_world is not None
    source = Path(str(shipped.resource(shipped.agent_world)))
    package = tmp_path / "toy"
    shutil.copytree(source, package / "world")
    first = json.loads((package / "world" / world.TASKS_FILE).read_text(encoding="utf-8")
                       .splitlines()[0])
    (package / "world" / world.TASKS_FILE).write_text(json.dumps(first) + "\n",
                                                      encoding="utf-8")
    _AgentToy.where = package
    monkeypatch.setattr(world, "agent_benchmark", _AgentToy)
    built = world.materialize(tmp_path / "cache")
    assert [t.id for t in agent_tasks.load_tasks(built.tasks)[0]] == [first["id"]]
    assert world.databases() == tuple(sorted(p.name for p in (source / "dbs").iterdir()))
    # the default task loader is the agent task format
    assert _AgentToy().load_agent_tasks(built.tasks)[0][0].id == first["id"]
    with pytest.raises(HopscoreError, match="cannot score an agent's tasks"):
        _AgentToy().task_example(agent_tasks.load_tasks(built.tasks)[0][0])
    monkeypatch.setattr(_AgentToy, "agent_world", None)
    with pytest.raises(HopscoreError, match="bundles no world"):
        world.materialize(tmp_path / "cache")


def test_the_outputs_key_and_short_title_are_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """metrics.json's block, the cache tags and the messages use the declared ``agent_key`` and
    ``short_title``; a benchmark declaring neither gets its name and its title."""
    from hopscore.agent import benchmark

    shipped = agent_benchmark()
    assert benchmark.agent_key() == (shipped.agent_key or shipped.name)
    assert benchmark.short_title() == (shipped.short_title or shipped.title)
    monkeypatch.setattr(benchmark, "agent_benchmark", _AgentToy)
    assert (benchmark.agent_key(), benchmark.short_title()) == ("agent-toy", "AgentToy")
