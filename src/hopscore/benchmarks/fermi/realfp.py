"""The realFP release as ``hopscore suite mcr`` reads it: train and val joined, as MCR's reader
does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.io import load_json

#: the joined file the suite reads, written in the suite directory
REALFP_JOINED = "fermi_realfp.json"


def join_realfp(train: Path, val: Path, target: Path) -> Path:
    """realFP train + val, first occurrence of each question kept (MCR: 292 questions)."""
    seen: set[str] = set()
    joined: list[Any] = []
    for path in (train, val):
        data = load_json(path)
        if not isinstance(data, list):
            raise HopscoreError(f"{path}: expected a JSON list of Fermi problems")
        for item in data:
            question = item.get("question") if isinstance(item, dict) else None
            if isinstance(question, str) and question in seen:
                continue
            if isinstance(question, str):
                seen.add(question)
            joined.append(item)
    write_json_atomic(target, joined)
    return target
