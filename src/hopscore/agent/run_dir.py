"""The directory of an agent run (``hopscore agent``): the names in it, what a run writes there,
where it is by default, the conversations written to ``trajectories/`` by the one process that
writes the output, and an attempt of other settings set aside with its trajectory."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from hopscore.agent.benchmark import agent_benchmark
from hopscore.agent.trajectory import write_trajectory
from hopscore.engine import RowResult, sha256_text
from hopscore.files.reruns import SIDE

SAMPLES_FILE = "samples.jsonl"
TRAJECTORIES = "trajectories"

#: The field of an attempt's row that carries its conversation until it is written.
CONVERSATION = "_trajectory"
#: What of an attempt's row may be replaced by a note of its size when the row is over the
#: caps of a sample row (:mod:`hopscore.run.caps`; the rest is only cut a text at a time).
DROPPABLE = ("tool_calls", "request_attempts", "tools_used")


def writing_trajectories(out: Path, work: Callable[[Any, str], Awaitable[RowResult]]
                         ) -> Callable[[Any, str], Awaitable[RowResult]]:
    """``work`` whose rows' conversations are written to their trajectory files here (by the
    one process that writes the run's output) before the row is logged."""

    async def write(item: Any, key: str) -> RowResult:
        result = await work(item, key)
        record = result.row.pop(CONVERSATION, None)
        if record is not None:
            write_trajectory(out / str(result.row["trajectory_file"]), record)
        return result

    return write


def previous_protocol(out: Path) -> dict[str, Any] | None:
    """The tool_protocol block of the config.json an earlier run left here, if readable."""
    import json

    try:
        block = json.loads((out / "config.json").read_text(encoding="utf-8")).get("tool_protocol")
    except (OSError, ValueError, AttributeError):
        return None
    return block if isinstance(block, dict) else None


def run_writes(repeats: int) -> tuple[str, ...]:
    """What an agent run writes in its directory."""
    from hopscore.agent.grade import GRADES, JUDGE_OUTPUT, S2SQL_INPUT, SQL_MATCH
    from hopscore.agent.report import predictions_name
    from hopscore.files.reruns import side_path

    return ("config.json", SAMPLES_FILE, side_path(Path(SAMPLES_FILE)).name, f"{TRAJECTORIES}/",
            f"{TRAJECTORIES}{SIDE}/", *(predictions_name(i) for i in range(repeats)), GRADES,
            S2SQL_INPUT, SQL_MATCH, JUDGE_OUTPUT, side_path(Path(JUDGE_OUTPUT)).name,
            "metrics.json", "scores.jsonl")


def set_trajectory_aside(out: Path, row: dict[str, Any]) -> dict[str, Any]:
    """An attempt of other settings moves to ``samples.other-settings.jsonl`` (--resume-any)
    with its trajectory, into ``trajectories.other-settings/`` (this run's attempt of the same
    task and number writes the same trajectory name)."""
    relative = row.get("trajectory_file")
    key = row.get("run_key")
    if not isinstance(relative, str) or not isinstance(key, str) or \
            not relative.startswith(TRAJECTORIES + "/"):
        return row
    target = f"{TRAJECTORIES}{SIDE}/{sha256_text(key)[:12]}__{Path(relative).name}"
    source = out / relative
    if source.is_file():
        (out / target).parent.mkdir(exist_ok=True)
        os.replace(source, out / target)
    elif not (out / target).is_file():
        return row
    return {**row, "trajectory_file": target}


def default_output_dir(model: str) -> Path:
    import re

    return Path("runs") / f"{agent_benchmark().name}__{re.sub(r'[^A-Za-z0-9._-]+', '-', model)}"
