"""Gold examples by id, for context in error analysis and the report (loaded once per file)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Example


@lru_cache(maxsize=4)
def _load(benchmark: str, path: Path) -> dict[str, Example]:
    from hopscore import benchmarks

    return {example.id: example for example in benchmarks.get(benchmark).load_gold(path)}


def gold_index(benchmark: str | None, path: Path | None) -> dict[str, Any]:
    """``{id: Example}`` of a registered benchmark's gold file; empty without a path or for a
    benchmark hopscore does not know."""
    from hopscore import benchmarks

    if path is None or not benchmark or benchmark.lower() not in benchmarks.registry():
        return {}
    from hopscore.hub import official_gold

    official = official_gold(benchmark.lower(), path).path
    return _load(benchmark.lower(), Path(official).resolve())
