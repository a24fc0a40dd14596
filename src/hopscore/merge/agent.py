"""Merging the shards of an agent run (the agent command, ``hopscore agent``).

The run is prepared again without a shard (tasks, knowledge, search), so every attempt's key is
known. The merged directory gets the shards' attempt rows (byte for byte, in task order) and
their trajectory files; then the run's own finishing code (:func:`hopscore.agent.agent_job.finish`)
writes the submission files, grades and scores from the merged attempts, as after an unsharded
run. Grading resumes from the shards' verdicts where they can be reused: the judge's rows of
every shard are pooled into ``judge.jsonl`` (keyed by content, so no judge request is made for
them); S2SQL answers are executed again here, so the databases must be on the merging machine
(execution match is deterministic: the verdicts are those of the shards).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hopscore.engine import run_key_of
from hopscore.files.atomic import write_json_atomic, write_text_atomic
from hopscore.files.io import load_json
from hopscore.files.shard import differences, shard_of
from hopscore.merge.common import (
    ShardOutput,
    check_output,
    check_set,
    collect,
    join_lines,
    read_rows,
    reading,
    refuse_missing,
    settings_from_json,
)
from hopscore.merge.runs import add_merged_from, batch_totals

if TYPE_CHECKING:
    from hopscore.agent.agent_job import HdrRunResult
    from hopscore.agent.protocol import ToolProtocol
    from hopscore.judge.judge_summary import JudgeSummary


def settings_differences(a: ShardOutput, b: ShardOutput) -> list[str]:
    from hopscore.agent.settings import EXECUTION_FIELDS

    names = differences(a.record.get("settings") or {}, b.record.get("settings") or {},
                        EXECUTION_FIELDS)
    if (a.record.get("agent") or {}).get("fingerprint") != \
            (b.record.get("agent") or {}).get("fingerprint"):
        names.append("agent (model, prompt, tools or search)")
    return names


def merge_agent(outputs: Sequence[ShardOutput], out: Path, warn: Callable[[str], None], *,
              ready: Callable[[], None] = lambda: None) -> HdrRunResult:
    """Join the shards of one agent run into ``out`` (see the module docstring)."""
    from hopscore.agent.agent_job import finish, prepare
    from hopscore.agent.grade import JUDGE_OUTPUT
    from hopscore.agent.prepared import attempt_key
    from hopscore.agent.settings import HdrSettings
    from hopscore.judge.rows import key_of as judge_key_of
    from hopscore.sql.sandbox import SqlExecutor

    count = check_set(outputs, settings_differences)
    check_output(out, outputs)
    settings = settings_from_json(HdrSettings, outputs[0].record.get("settings") or {},
                                  output_dir=out, shard=None)
    prepared = prepare(settings)
    items = [(task, i) for task in prepared.tasks for i in range(settings.repeats)]
    keys = [attempt_key(prepared, task, i) for task, i in items]
    owner = {key: shard_of(task.id, count) for key, (task, _) in zip(keys, items, strict=True)}
    found = collect(outputs, lambda o: o.path / "samples.jsonl", run_key_of, owner, warn)
    missing: dict[int, list[str]] = {}
    for key, (task, attempt) in zip(keys, items, strict=True):
        if key not in found.rows:
            missing.setdefault(owner[key], []).append(f"{task.id}#{attempt}")
    refuse_missing(missing, count, outputs, "attempts")
    ready()
    holder = {key: output for output in outputs for key in found.rows
              if owner[key] == output.index}
    out.mkdir(parents=True, exist_ok=True)
    for key in keys:  # each attempt's conversation, from the shard that ran it
        relative = str(found.rows[key].get("trajectory_file") or "")
        source = holder[key].path / relative
        if relative and source.is_file():
            (out / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, out / relative)
    write_text_atomic(out / "samples.jsonl", join_lines(found.raw[key] for key in keys))
    if settings.grade:  # the shards' judge verdicts, reused (the judge resumes from them)
        pooled: dict[str, bytes] = {}
        for output in outputs:
            with reading(output):
                pooled.update(read_rows(output.path / JUDGE_OUTPUT, judge_key_of).raw)
        write_text_atomic(out / JUDGE_OUTPUT, join_lines(pooled.values()))
    rows = {key: found.rows[key] for key in keys}
    outcome, stats = batch_totals(outputs)
    _protocol(prepared.protocol, outputs)

    async def finished() -> HdrRunResult:
        with SqlExecutor(workers=min(2, max(1, os.cpu_count() or 1))) as executor:
            return await finish(prepared, rows, outcome, stats, executor)

    result = asyncio.run(finished())
    if result.grades is not None and result.grades.judge is not None:
        _judge_activity(result.grades.judge, outputs, out)
    add_merged_from(out / "config.json", outputs)
    return result


def _protocol(protocol: ToolProtocol, outputs: Sequence[ShardOutput]) -> None:
    """The tool protocol the shards used, with their counts summed."""
    blocks = [o.record.get("tool_protocol") or {} for o in outputs]
    protocol.native_calls = sum(int(b.get("native_tool_calls") or 0) for b in blocks)
    protocol.text_calls = sum(int(b.get("text_tool_calls") or 0) for b in blocks)
    protocol.replies = sum(int(b.get("replies") or 0) for b in blocks)
    used = {str(b.get("used")) for b in blocks if b.get("used")}
    if len(used) == 1:
        protocol.mode = used.pop()
    elif used:
        protocol.mode = "text"  # some shards switched: the merged run is not of one protocol
        protocol.notes.append("the shards used different tool protocols: "
                              + ", ".join(f"{o.shard}: {b.get('used')}"
                                          for o, b in zip(outputs, blocks, strict=True)))
    protocol.switch = next((b["switch"] for b in blocks if b.get("switch")), None)
    for block in blocks:
        protocol.notes.extend(n for n in block.get("notes") or [] if n not in protocol.notes)


#: What a judge run did (not what it found): the merge reports the shards' sums.
ACTIVITY = ("already_done", "processed", "requests_sent", "retries", "cache_hits",
            "prompt_tokens", "completion_tokens")


def _judge_activity(summary: JudgeSummary, outputs: Sequence[ShardOutput], out: Path) -> None:
    """The judge's counts of work in metrics.json and config.json: the shards' (the merge
    itself reuses their verdicts), as the unsharded run would count them."""
    from hopscore.agent.benchmark import agent_key

    blocks = [((o.record.get("grades") or {}).get("judge") or {}) for o in outputs]
    for name in ACTIVITY:
        setattr(summary, name, sum(int(block.get(name) or 0) for block in blocks))
    summary.wall_s = max([float(block.get("wall_s") or 0.0) for block in blocks] or [0.0])
    block = summary.to_json()
    metrics = load_json(out / "metrics.json")
    metrics[agent_key()]["grades"]["judge"] = block
    write_json_atomic(out / "metrics.json", metrics)
    config = load_json(out / "config.json")
    config["grades"]["judge"] = block
    write_json_atomic(out / "config.json", config)
