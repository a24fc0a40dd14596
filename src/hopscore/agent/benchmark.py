"""The benchmark the agent runs on, found through the registry: the one whose
:attr:`~hopscore.benchmarks.base.Benchmark.runner` is ``"agent"``. The agent machinery reads
what it declares (its name, its task loader, its tasks' gold examples, its bundled world) and
never names it."""

from __future__ import annotations

from functools import cache
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark
from hopscore.errors import HopscoreError


@cache
def _first_agent_benchmark() -> str:
    for name in benchmarks.names():
        if benchmarks.get(name).runner == "agent":
            return name
    raise HopscoreError("no benchmark runs an agent (none declares runner = 'agent')")


def agent_benchmark(name: str | None = None) -> Benchmark[Any, Any]:
    """A fresh instance of the benchmark ``name`` (it must run an agent), or without a name of
    the first in the registry that runs one (built-ins first, then plugins)."""
    bench = benchmarks.get(name if name is not None else _first_agent_benchmark())
    if bench.runner != "agent":
        raise HopscoreError(f"benchmark {bench.name!r} does not run an agent (its runner is "
                            f"{bench.runner!r}); the agent command runs a benchmark whose "
                            "runner is 'agent'")
    return bench


def agent_key() -> str:
    """The short key of the agent's runs (:attr:`~hopscore.benchmarks.base.Benchmark.agent_key`,
    else the benchmark's name): their block of ``metrics.json``, their cache tags."""
    bench = agent_benchmark()
    return bench.agent_key or bench.name


def short_title() -> str:
    """How messages abbreviate the agent's benchmark (its declared ``short_title``, else its
    title)."""
    bench = agent_benchmark()
    return bench.short_title or bench.title
