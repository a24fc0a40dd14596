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

``run``'s examples are the HotpotQA test fixture's (``--prompts fixture``, the default:
prompts of about 0.9 KB) or the real dev-distractor records of the shared data folder
(``--prompts real``: ten paragraphs, about 4.7 KB), repeated under fresh ids.

``--baseline DIR`` runs the same cases with another checkout's ``DIR/src`` too (say ``git
worktree add /tmp/base main``), alternating the two ``--repeat`` times, and reports each
one's median and the ratio: on a shared machine only such side-by-side figures compare.

The machine's load average is recorded before and after: on a shared machine the figures
are lower bounds. Writes ``bench/results/overhead.json``; docs/performance.md quotes it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from run_throughput import FIXTURE, REAL, compile_sources, write_gold  # noqa: E402
from run_throughput import REPLY as RUN_REPLY  # noqa: E402

PROMPTS = {"fixture": FIXTURE, "real": REAL}

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


def timed_cli(args: list[str], work: Path, rows: int, src: Path = REPO / "src"
              ) -> dict[str, float]:
    """Run ``python -m hopscore ARGS`` from ``src``; wall, CPU and peak RSS of the process."""
    env = {**os.environ, "PYTHONPATH": str(src), "NO_PROXY": "127.0.0.1,localhost",
           "HOPSCORE_CACHE_DIR": str(work / "cache")}
    # bytecode caching allowed (as an installed package has its .pyc files): otherwise a tree
    # without them is timed compiling its own source on every run
    env.pop("PYTHONDONTWRITEBYTECODE", None)
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


def judge_case(base_url: str, work: Path, rows: int, concurrency: int, src: Path,
               prompts: str) -> dict[str, float]:
    rows_path = work / "rows.jsonl"
    if not rows_path.exists():
        with rows_path.open("w", encoding="utf-8") as handle:
            for i in range(rows):
                handle.write(json.dumps({
                    "instance_id": f"b{i}", "question": f"Question {i}: which city is meant?",
                    "response": f"It is city number {i}.", "correct_answer": f"City {i}"}) + "\n")
    out = Path(tempfile.mkdtemp(prefix=f"judge-c{concurrency}-", dir=work))
    return timed_cli(["judge", "-i", str(rows_path), "-o", str(out / "judged.jsonl"),
                      "--model", "bench", "--base-url", base_url,
                      "--concurrency", str(concurrency), "--fixed-concurrency",
                      "--cache-dir", str(out / "cache"), "--no-progress"], work, rows, src)


def run_case(base_url: str, work: Path, rows: int, concurrency: int, src: Path,
             prompts: str) -> dict[str, float]:
    gold = work / f"gold-{prompts}.json"
    if not gold.exists():
        if not PROMPTS[prompts].exists():
            raise SystemExit(f"--prompts {prompts}: {PROMPTS[prompts]} is missing")
        write_gold(gold, rows, PROMPTS[prompts])
    out = Path(tempfile.mkdtemp(prefix=f"run-c{concurrency}-", dir=work))
    return timed_cli(["run", "hotpotqa", "--gold", str(gold), "--model", "openai/bench",
                      "--base-url", base_url, "--concurrency", str(concurrency),
                      "--fixed-concurrency", "-o", str(out / "run"), "--cache-dir",
                      str(out / "cache"), "--no-progress"], work, rows, src)


def median_of(runs: list[dict[str, float]]) -> dict[str, float]:
    """The median of each figure over ``runs`` (one run: itself)."""
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def compared(case: Any, url: str, work: Path, rows: int, concurrency: int, prompts: str,
             baseline: Path | None, repeat: int) -> dict[str, Any]:
    """``case`` ``repeat`` times (with ``baseline``: alternating with its ``src``, this
    checkout first); the median of each figure, and the baseline's beside it."""
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(repeat):
        ours.append(case(url, work, rows, concurrency, REPO / "src", prompts))
        if baseline is not None:
            theirs.append(case(url, work, rows, concurrency, baseline / "src", prompts))
    row: dict[str, Any] = {"concurrency": concurrency, **median_of(ours), "runs": len(ours)}
    if theirs:
        base = median_of(theirs)
        row["baseline"] = base
        row["cpu_ratio"] = base["cpu_ms_per_row"] / row["cpu_ms_per_row"]
        row["rows_per_s_ratio"] = row["rows_per_s"] / base["rows_per_s"]
    return row


def line_of(name: str, row: dict[str, Any]) -> str:
    text = (f"{name:5} c={row['concurrency']:<4} {row['rows_per_s']:6.0f} rows/s  "
            f"{row['cpu_ms_per_row']:.3f} ms CPU/row  peak {row['peak_rss_mib']:.0f} MiB")
    base = row.get("baseline")
    if base is not None:
        text += (f"  | baseline {base['rows_per_s']:6.0f} rows/s  "
                 f"{base['cpu_ms_per_row']:.3f} ms CPU/row  | CPU x{row['cpu_ratio']:.2f} less")
    return text


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
    parser.add_argument("--prompts", choices=sorted(PROMPTS), default="fixture",
                        help="run's examples: the test fixture's or the real HotpotQA records")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout: its src/ is measured too, alternating")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each case (the median is reported)")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    only = set(args.only.split(","))
    compile_sources()
    if args.baseline is not None:
        args.baseline = args.baseline.resolve()
        subprocess.run([sys.executable, "-m", "compileall", "-q",
                        str(args.baseline / "src" / "hopscore")], check=True,
                       stdout=subprocess.DEVNULL)
    report: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                              "load_average_before": os.getloadavg(), "rows": args.rows,
                              "prompts": args.prompts, "repeat": args.repeat,
                              "baseline": None if args.baseline is None else str(args.baseline),
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
                    row = compared(case, url, work, args.rows, c, args.prompts, args.baseline,
                                   args.repeat)
                    report[name].append(row)
                    print(line_of(name, row), flush=True)
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
