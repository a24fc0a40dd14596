"""Comparing a merged output with an unsharded one, timing and host fields aside."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Fields that say when, where or how fast something ran, not what it computed.
TIMING = frozenset({"latency_s", "elapsed_s", "wall_s", "updated", "command", "platform",
                    "output_dir", "output", "argv", "path", "merged_from", "batch",
                    "requests", "started", "finished", "mean_latency_s"})


def strip(value: Any) -> Any:
    """``value`` without timing and host fields, at any depth."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def same_rows(a: Path, b: Path) -> None:
    left, right = strip(jsonl(a)), strip(jsonl(b))
    assert len(left) == len(right), (a, b)
    for x, y in zip(left, right, strict=True):
        assert x == y


def same_json(a: Path, b: Path) -> None:
    assert strip(load(a)) == strip(load(b))


def same_bytes(a: Path, b: Path) -> None:
    assert a.read_bytes() == b.read_bytes(), (a, b)
