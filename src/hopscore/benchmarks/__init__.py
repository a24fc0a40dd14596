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


#: other spellings people type, for "did you mean" (never accepted as names themselves)
_SPELLINGS = {"hotpot": "hotpotqa", "2wiki": "2wikimultihopqa", "twowiki": "2wikimultihopqa",
              "2wikimultihop": "2wikimultihopqa", "hybrid": "hybridqa", "strategy": "strategyqa",
              "fever": "feverous", "hdr": "hybrid-deep-research"}


def get(name: str) -> Benchmark[Any, Any]:
    """Instantiate a benchmark by name (case-insensitive)."""
    key = name.lower()
    if key not in REGISTRY:
        import difflib

        close = difflib.get_close_matches(key, [*REGISTRY, *_SPELLINGS], n=1, cutoff=0.6)
        hint = f"did you mean {_SPELLINGS.get(close[0], close[0])!r}? " if close else ""
        raise HopscoreError(f"unknown benchmark {name!r}; {hint}choose one of: "
                            f"{', '.join(REGISTRY)}")
    module_name, class_name = REGISTRY[key].split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    instance: Benchmark[Any, Any] = cls()
    return instance
