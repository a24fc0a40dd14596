"""Harness overhead: hopscore's own cost per row when the model server costs nothing.

A zero-latency loopback server (``bench/loopback_server.py``, a separate process) answers every
request at once, so what is left is hopscore's: for ``judge`` and single-turn ``run`` (the
real CLI in a subprocess, a fresh response cache, no cache hits) at each concurrency it
reports rows/s, the process's CPU seconds per row (user + system, start-up included, from
``wait4``) and its peak RSS; for the agent loop (:class:`hopscore.agent.loop.AgentLoop`
in this process, the server answering a no-op tool call each turn until the task's turn count,
then ``final_answer``) it reports CPU per turn against the conversation's length, which must
stay flat apart from the bytes sent (the whole conversation is sent every turn).

    python bench/overhead.py                                # c = 64, 256, 1000; 4,000 rows
    python bench/overhead.py --rows 2000 --concurrency 256 --only judge,run,agent

The machine's load average is recorded before and after: on a shared machine the figures
are lower bounds. Writes ``bench/results/overhead.json``; docs/performance.md quotes it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from run_throughput import REPLY as RUN_REPLY  # noqa: E402
from run_throughput import compile_sources, write_gold  # noqa: E402

JUDGE_REPLY = "extracted_final_answer: x\nreasoning: same.\ncorrect: yes\nconfidence: 90%"


def start_server(reply: str, *, agent: bool = False) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, str(REPO / "bench" / "loopback_server.py"), "--latency", "0",
            "--reply", reply, *(["--agent"] if agent else [])]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def stop_server(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=10)


def timed_cli(args: list[str], work: Path, rows: int) -> dict[str, float]:
    """Run ``python -m hopscore ARGS``; wall, CPU and peak RSS of the process."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_PROXY": "127.0.0.1,localhost",
           "HOPSCORE_CACHE_DIR": str(work / "cache")}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        assert proc.stderr is not None
        raise SystemExit(f"hopscore {args[0]} failed: {proc.stderr.read().decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall_s": wall, "rows_per_s": rows / wall, "cpu_s": cpu,
            "cpu_ms_per_row": 1000 * cpu / rows, "peak_rss_mib": usage.ru_maxrss / 1024}


def judge_case(base_url: str, work: Path, rows: int, concurrency: int) -> dict[str, float]:
    rows_path = work / "rows.jsonl"
    if not rows_path.exists():
        with rows_path.open("w", encoding="utf-8") as handle:
            for i in range(rows):
                handle.write(json.dumps({
                    "instance_id": f"b{i}", "question": f"Question {i}: which city is meant?",
                    "response": f"It is city number {i}.", "correct_answer": f"City {i}"}) + "\n")
    out = work / f"judge-c{concurrency}"
    out.mkdir()
    return timed_cli(["judge", "-i", str(rows_path), "-o", str(out / "judged.jsonl"),
                      "--model", "bench", "--base-url", base_url,
                      "--concurrency", str(concurrency), "--fixed-concurrency",
                      "--cache-dir", str(out / "cache"), "--no-progress"], work, rows)


def run_case(base_url: str, work: Path, rows: int, concurrency: int) -> dict[str, float]:
    gold = work / "gold.json"
    if not gold.exists():
        write_gold(gold, rows)
    out = work / f"run-c{concurrency}"
    return timed_cli(["run", "hotpotqa", "--gold", str(gold), "--model", "openai/bench",
                      "--base-url", base_url, "--concurrency", str(concurrency),
                      "--fixed-concurrency", "-o", str(out), "--cache-dir",
                      str(work / f"cache-run-{concurrency}"), "--no-progress"], work, rows)


async def _agent_turns(base_url: str, turns: int, tasks: int, concurrency: int,
                       payload: int) -> dict[str, float]:
    """``tasks`` attempts of ``turns`` turns each; CPU of this process per turn."""
    from hopscore.agent.loop import AgentLoop, AgentSettings
    from hopscore.agent.tools import Toolset
    from hopscore.benchmarks.agent_tasks import FAMILIES, HdrTask
    from hopscore.engine import ChatEngine
    from hopscore.engine.backend import OpenAIBackend
    from hopscore.errors import Location

    engine = ChatEngine(OpenAIBackend(base_url, "k", concurrency=concurrency),
                        concurrency=concurrency, adaptive=False)
    loop = AgentLoop(engine, AgentSettings(model="bench", max_turns=turns + 1))
    toolset = Toolset(db_path=None, knowledge=None, search=None,  # type: ignore[arg-type]
                      executor=None)  # type: ignore[arg-type]
    padding = "x" * payload
    made = [HdrTask(id=f"t{turns}-{i}", family=FAMILIES[0],
                    final_question=f"turns={turns} question {i} {padding}", hint="", db="db",
                    final_answer=None, sql=None, record={}, where=Location("bench"))
            for i in range(tasks)]
    cpu = time.process_time()
    wall = time.perf_counter()
    attempts = await asyncio.gather(*(loop.run(task, 0, toolset) for task in made))
    cpu = time.process_time() - cpu
    wall = time.perf_counter() - wall
    await engine.aclose()
    done = sum(a.model_calls for a in attempts)
    assert all(a.final_answer == "x" for a in attempts), [a.status for a in attempts][:3]
    sent = sum(len(json.dumps(a.messages)) for a in attempts)
    requests = 0  # bytes of messages sent over all turns: turn k sends what came before it
    for attempt in attempts:
        size = 0
        for message in attempt.messages:
            if message.get("role") == "assistant":
                requests += size
            size += len(json.dumps(message)) + 2
    return {"turns": turns, "tasks": tasks, "model_calls": done, "wall_s": wall, "cpu_s": cpu,
            "cpu_ms_per_turn": 1000 * cpu / done, "final_conversation_bytes": sent / tasks,
            "mean_request_kib": requests / done / 1024,
            "cpu_ms_per_turn_per_kib": 1000 * cpu / done / max(requests / done / 1024, 1)}


def agent_rows(base_url: str, lengths: list[int], tasks: int, concurrency: int,
               payload: int) -> list[dict[str, float]]:
    asyncio.run(_agent_turns(base_url, 2, 4, concurrency, payload))  # imports, connections
    return [asyncio.run(_agent_turns(base_url, turns, max(1, tasks // turns) * 4,
                                     concurrency, payload)) for turns in lengths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--concurrency", default="64,256,1000")
    parser.add_argument("--only", default="judge,run,agent")
    parser.add_argument("--agent-turns", default="1,4,16,64")
    parser.add_argument("--agent-tasks", type=int, default=64,
                        help="about this many turns x 4 for each length")
    parser.add_argument("--agent-payload", type=int, default=200,
                        help="characters of question text (each turn re-sends them)")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    only = set(args.only.split(","))
    compile_sources()
    report: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                              "load_average_before": os.getloadavg(), "rows": args.rows,
                              "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, reply, case in (("judge", JUDGE_REPLY, judge_case),
                                  ("run", RUN_REPLY, run_case)):
            if name not in only:
                continue
            server, url = start_server(reply)
            try:
                report[name] = []
                for c in levels:
                    row = {"concurrency": c, **case(url, work, args.rows, c)}
                    report[name].append(row)
                    print(f"{name:5} c={c:<4} {row['rows_per_s']:7.0f} rows/s  "
                          f"{row['cpu_ms_per_row']:.2f} ms CPU/row  "
                          f"peak {row['peak_rss_mib']:.0f} MiB  ({row['wall_s']:.2f} s)",
                          flush=True)
            finally:
                stop_server(server)
        if "agent" in only:
            server, url = start_server("no tools offered", agent=True)
            try:
                lengths = [int(t) for t in args.agent_turns.split(",")]
                report["agent"] = agent_rows(url, lengths, args.agent_tasks, 64,
                                             args.agent_payload)
                for row in report["agent"]:
                    print(f"agent turns={row['turns']:<3} {row['cpu_ms_per_turn']:.2f} ms "
                          f"CPU/turn  ({row['model_calls']} turns, mean request "
                          f"{row['mean_request_kib']:.1f} KiB)", flush=True)
            finally:
                stop_server(server)
    report["load_average_after"] = os.getloadavg()
    target = REPO / "bench" / "results" / "overhead.json"
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"load average {report['load_average_before'][0]:.2f} before, "
          f"{report['load_average_after'][0]:.2f} after; wrote {target.relative_to(REPO)}")


if __name__ == "__main__":
    main()
