"""The benchmark registry: name -> module, imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

from hopscore.benchmarks.base import Benchmark
from hopscore.errors import HopscoreError

#: name -> "module:ClassName"; adding a benchmark is one module plus one line here.
REGISTRY: dict[str, str] = {
    "hotpotqa": "hopscore.benchmarks.hotpotqa:HotpotQA",
    "hybridqa": "hopscore.benchmarks.hybridqa:HybridQA",
    "2wikimultihopqa": "hopscore.benchmarks.twowiki:TwoWikiMultihopQA",
    "strategyqa": "hopscore.benchmarks.strategyqa:StrategyQA",
    "fermi": "hopscore.benchmarks.fermi:Fermi",
    "feverous": "hopscore.benchmarks.feverous:FEVEROUS",
    "quartz": "hopscore.benchmarks.quartz:QuaRTz",
    "bamboogle": "hopscore.benchmarks.bamboogle:Bamboogle",
    "hybrid-deep-research": "hopscore.benchmarks.hybrid_deep_research:HybridDeepResearch",
}


def names() -> list[str]:
    return list(REGISTRY)


def get(name: str) -> Benchmark[Any, Any]:
    """Instantiate a benchmark by name (case-insensitive)."""
    key = name.lower()
    if key not in REGISTRY:
        raise HopscoreError(f"unknown benchmark {name!r}; choose one of: {', '.join(REGISTRY)}")
    module_name, class_name = REGISTRY[key].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    instance: Benchmark[Any, Any] = cls()
    return instance
