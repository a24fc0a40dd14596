"""``hopscore demo --hdr``: the agent on the built-in world, end to end.

The local model (SmolLM2-135M on the CPU) drives the tool-calling loop on the first tasks of
each family of :mod:`hopscore.agent.world` (read-only SQL on the task's database, its knowledge
base, BM25 search over the world's corpus), its answers are graded as a real run grades them
(execution match for S2SQL; the same local model as judge for SQL2S and Parallel), and one
table lists every attempt's tool calls, final answer and grade. A 135M model answers badly;
the point is to see every piece work.
"""

from __future__ import annotations

import json
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from rich.table import Table

from hopscore.cli import console, err_console
from hopscore.errors import HopscoreError

DEMO_MAX_TOKENS = 128


def _subset(tasks_file: Path, per_family: int, target: Path) -> int:
    """The first ``per_family`` tasks of each family, in the release's order."""
    kept: list[str] = []
    seen: dict[str, int] = {}
    for line in tasks_file.read_text(encoding="utf-8").splitlines():
        family = json.loads(line)["hybrid_type"]
        if seen.get(family, 0) < per_family:
            seen[family] = seen.get(family, 0) + 1
            kept.append(line)
    target.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return len(kept)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _runs(names: list[str]) -> str:
    """Tool names in order, repeats folded: "run_sql x2 > final_answer"."""
    parts: list[list[Any]] = []
    for name in names:
        if parts and parts[-1][0] == name:
            parts[-1][1] += 1
        else:
            parts.append([name, 1])
    return " > ".join(name if count == 1 else f"{name} x{count}" for name, count in parts)


def attempts_table(out: Path) -> Table:
    """One row per attempt: task, family, tools called in order, final answer, grade."""
    grades = {}
    grades_file = out / "grades.jsonl"
    if grades_file.is_file():
        for line in grades_file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            grades[(row.get("instance_id"), row.get("attempt"))] = row
    table = Table(title="attempts (tool calls in order)", title_justify="left")
    for column in ("task", "family", "tools", "final answer", "grade"):
        table.add_column(column, overflow="fold")
    for line in (out / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        tools = _runs([str(call.get("name", "?")) for call in row.get("tool_calls") or ()])
        grade = grades.get((row.get("instance_id"), row.get("attempt"))) or {}
        correct = grade.get("correct")
        verdict = "not graded" if correct is None else ("correct" if correct else "wrong")
        table.add_row(str(row.get("instance_id")), str(row.get("hybrid_type")),
                      tools or "-", _cut(str(row.get("final_answer") or f"({row.get('status')})"),
                                         48), verdict)
    return table


def agent_demo(output_dir: Path | None, per_family: int, max_turns: int) -> None:
    from hopscore.agent.agent_job import run
    from hopscore.agent.settings import HdrSettings
    from hopscore.agent.world import materialize
    from hopscore.cli.agent_files import activity_table, result_table
    from hopscore.engine.local import INSTALL_HINT, LocalSmolLM2, missing_requirements
    from hopscore.run.providers import SharedBackend

    missing = missing_requirements()
    if missing:
        raise HopscoreError(
            f"hopscore demo --hdr runs the local model, which needs {', '.join(missing)}: "
            f"{INSTALL_HINT}\nAny other model: hopscore agent --model "
            "openai/NAME --base-url URL (the built-in world is the default task set)")
    world = materialize()
    started = time.perf_counter()
    with ExitStack() as stack:
        root = output_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="hdr-demo-")))
        root.mkdir(parents=True, exist_ok=True)
        tasks = root / "tasks.jsonl"
        count = _subset(world.tasks, per_family, tasks)
        err_console.print(f"hopscore demo --hdr: local/smollm2 on {count} tasks of the built-in "
                          f"world ({world.root}), at most {max_turns} turns each ...",
                          markup=False, highlight=False)
        settings = HdrSettings(
            tasks=tasks, db_root=world.db_root, corpus=world.corpus, model="local/smollm2",
            output_dir=root / "run", max_turns=max_turns, max_tokens=DEMO_MAX_TOKENS,
            concurrency=1, timeout=900.0, cache_dir=None, judge_model="local/smollm2",
            resamples=0,
        )  # fmt: skip
        shared = SharedBackend(LocalSmolLM2())
        try:
            result: Any = run(settings, backend=shared, judge_backend=shared, warn=err_console)
        finally:
            import asyncio

            asyncio.run(shared.close())
        if result.outcome.aborted is not None:
            raise HopscoreError(f"the demo stopped early: {result.outcome.aborted}")
        console.print(activity_table(result))
        console.print(attempts_table(settings.output_dir))
        if result.report is not None:
            console.print(result_table(result))
    console.print(
        f"Total {time.perf_counter() - started:.0f} s on the CPU. SmolLM2-135M is a tiny model: "
        "expect wrong answers; the point is the agent loop, the tools and the grading.\n"
        "Run any model on the world: hopscore agent --model openai/NAME "
        "--base-url URL", markup=False, highlight=False)
    if output_dir is not None:
        err_console.print(f"wrote {output_dir}", markup=False)
