"""Benchmark: one machine, three executors side by side, for two workloads.

* ``sql``: 2,000 S2SQL gradings (``hopscore sql-match``) whose gold and agent queries are
  CPU-heavy (a 300 x 300 self-join, about 12 ms each here);
* ``judge``: a 1,000-row ``hopscore judge`` over a loopback endpoint answering after 0.2 s.

Each is run as a user runs it (the CLI, in subprocesses): the local executor; 2 shards started
at once then ``hopscore merge``; ``--executor ray`` on an embedded local Ray with 2 CPUs. Each
reports wall time, its ratio to the local executor, and peak memory (the largest sum of the RSS
of every process involved, Ray's own included, sampled every 0.1 s). Every output is checked to
be the local executor's (timing fields aside).

The expected speed-up on k machines is a **model**, not a simulation: from the measured fixed
cost of a command (the same command on 20 rows: start-up, Ray's start, reading the input) and
the measured per-row cost (the rest of the local run's wall time, times its cores, over the
rows), T_local = fixed + rows * cost / cores and T_k = fixed + rows * cost / (k * cores) +
merge (shards) or fixed_ray + rows * cost / (k * cores) (Ray). The judge's per-row cost is the
endpoint's latency over its concurrency limit, which does not shrink with k: the model says so.

    python bench/scale_out.py                 # both workloads, full size
    python bench/scale_out.py --sql-rows 200 --judge-rows 100   # a quick look

Needs the ray extra (pip install 'hopscore[ray]'). Results: bench/results/scale_out.json and
bench/results/scale_out.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
TIMING = {"latency_s", "elapsed_s", "wall_s"}


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_PROXY": "127.0.0.1,localhost",
            "JUDGE_API_KEY": "bench", "RAY_ADDRESS": ""}


# --- peak memory of a process tree --------------------------------------------------------


def _tree(roots: list[int]) -> list[int]:
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                parent[int(entry.name)] = int(
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
    found = set(roots)
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in found and pid not in found:
                found.add(pid)
                changed = True
    return sorted(found)


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class PeakMemory:
    """The largest total RSS of the given processes and all their descendants."""

    def __init__(self) -> None:
        self.roots: list[int] = []
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            if self.roots:
                self.peak = max(self.peak, sum(_rss_mib(p) for p in _tree(self.roots)))

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def run_all(commands: list[list[str]]) -> tuple[float, float]:
    """Start every command at once; (wall seconds until all ended, peak MiB)."""
    with PeakMemory() as memory:
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-m", "hopscore", *c], env=env(),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for c in commands]
        memory.roots = [p.pid for p in procs]
        for proc, command in zip(procs, commands, strict=True):
            _, err = proc.communicate()
            if proc.returncode not in (0,):
                raise SystemExit(f"failed ({proc.returncode}): hopscore {' '.join(command)}\n"
                                 f"{err[-2000:]}")
        wall = time.perf_counter() - started
    return wall, memory.peak


# --- workloads ------------------------------------------------------------------------------


def sql_input(work: Path, rows: int) -> tuple[Path, Path]:
    root = work / "dbs"
    db = root / "heavy" / "heavy_template.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x INTEGER)")
    con.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(300)])
    con.commit()
    con.close()
    path = work / f"sql-{rows}.jsonl"
    with path.open("w") as handle:
        for i in range(rows):
            query = ("SELECT count(*) FROM t a, t b WHERE (a.x * b.x + "
                     f"{i}) % 7 = {i % 7}")
            handle.write(json.dumps({"instance_id": f"q{i}", "db": "heavy", "gold_sql": query,
                                     "response": f"```sql\n{query}\n```"}) + "\n")
    return path, root


def judge_input(work: Path, rows: int) -> Path:
    path = work / f"judge-{rows}.jsonl"
    with path.open("w") as handle:
        for i in range(rows):
            handle.write(json.dumps({"instance_id": f"b{i}", "question": f"Question {i}?",
                                     "response": f"Answer {i}", "correct_answer": f"A {i}"})
                         + "\n")
    return path


def _without_timing(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_without_timing(v) for v in value]
    return value


def strip(path: Path) -> list[Any]:
    """The rows of an output file without their timing fields, at any depth."""
    return [_without_timing(json.loads(line)) for line in path.read_text().splitlines()]


def measure(name: str, base: list[str], out_flag: str, work: Path, *, local_extra: list[str],
            shard_extra: list[str], ray_extra: list[str]) -> dict[str, Any]:
    """Local, 2 shards at once + merge, Ray with 2 CPUs; each output checked against local."""
    results: dict[str, Any] = {}
    local_out = work / f"{name}-local.jsonl"
    wall, peak = run_all([[*base, out_flag, str(local_out), *local_extra]])
    results["local"] = {"wall_s": wall, "peak_mib": peak}
    shards = [work / f"{name}-shard{i}.jsonl" for i in range(2)]
    wall, peak = run_all([[*base, out_flag, str(s), "--shard", f"{i}/2", *shard_extra]
                          for i, s in enumerate(shards)])
    merged = work / f"{name}-merged.jsonl"
    merge_wall, merge_peak = run_all([["merge", *map(str, shards), "-o", str(merged)]])
    results["shards"] = {"wall_s": wall + merge_wall, "shards_wall_s": wall,
                         "merge_wall_s": merge_wall, "peak_mib": max(peak, merge_peak)}
    ray_out = work / f"{name}-ray.jsonl"
    wall, peak = run_all([[*base, out_flag, str(ray_out), "--executor", "ray",
                           "--ray-workers", "2", *ray_extra]])
    results["ray"] = {"wall_s": wall, "peak_mib": peak}
    reference = strip(local_out)
    for label, path in (("shards", merged), ("ray", ray_out)):
        results[label]["same_output"] = strip(path) == reference
    for label in results:
        results[label]["ratio"] = results[label]["wall_s"] / results["local"]["wall_s"]
    return results


def fixed_costs(name: str, base_small: list[str], out_flag: str, work: Path,
                local_extra: list[str], ray_extra: list[str]) -> dict[str, float]:
    local, _ = run_all([[*base_small, out_flag, str(work / f"{name}-small-local.jsonl"),
                         *local_extra]])
    ray, _ = run_all([[*base_small, out_flag, str(work / f"{name}-small-ray.jsonl"),
                       "--executor", "ray", "--ray-workers", "2", *ray_extra]])
    return {"local_fixed_s": local, "ray_fixed_s": ray}


def model(results: dict[str, Any], fixed: dict[str, float], rows: int, cores: int,
          ks: tuple[int, ...] = (1, 2, 4, 8, 16)) -> dict[str, Any]:
    """The expected wall time and speed-up on k machines of ``cores`` cores (see the docstring)."""
    local = results["local"]["wall_s"]
    per_row = max(local - fixed["local_fixed_s"], 0.0) * cores / rows
    merge = results["shards"]["merge_wall_s"]
    out: dict[str, Any] = {"per_row_core_s": per_row, **fixed, "merge_s": merge, "k": {}}
    for k in ks:
        shards = fixed["local_fixed_s"] + rows * per_row / (k * cores) + merge
        ray = fixed["ray_fixed_s"] + rows * per_row / (k * cores)
        out["k"][k] = {"shards_s": shards, "shards_speedup": local / shards,
                       "ray_s": ray, "ray_speedup": local / ray}
    return out


def table(title: str, results: dict[str, Any]) -> list[str]:
    lines = [f"### {title}", "", "| executor | wall s | ratio to local | peak memory MiB | "
             "same output |", "| --- | ---: | ---: | ---: | --- |"]
    for label, text in (("local", "local executor"), ("shards", "2 shards at once + merge"),
                        ("ray", "Ray, 2 CPUs")):
        r = results[label]
        same = "" if label == "local" else ("yes" if r["same_output"] else "NO")
        lines.append(f"| {text} | {r['wall_s']:.1f} | {r['ratio']:.2f}x | {r['peak_mib']:.0f} "
                     f"| {same} |")
    shards = results["shards"]
    lines += ["", f"(shards: {shards['shards_wall_s']:.1f} s running, "
              f"{shards['merge_wall_s']:.1f} s merging)", ""]
    return lines


def model_lines(title: str, m: dict[str, Any], note: str) -> list[str]:
    lines = [f"#### {title}: expected on k machines (a model, not a simulation)", "",
             f"per-row cost {m['per_row_core_s'] * 1000:.1f} core-ms; fixed cost "
             f"{m['local_fixed_s']:.1f} s (local), {m['ray_fixed_s']:.1f} s (Ray); merge "
             f"{m['merge_s']:.1f} s. {note}", "",
             "| k machines | shards s | shards speed-up | Ray s | Ray speed-up |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for k, row in m["k"].items():
        lines.append(f"| {k} | {row['shards_s']:.1f} | {row['shards_speedup']:.2f}x | "
                     f"{row['ray_s']:.1f} | {row['ray_speedup']:.2f}x |")
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql-rows", type=int, default=2000)
    parser.add_argument("--judge-rows", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    cores = 2
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                          "platform": platform.platform()}}
    lines = ["# Scaling out on one machine: local executor, 2 shards, Ray with 2 CPUs", "",
             "Measured by `python bench/scale_out.py` (all three side by side in one run, on "
             f"{os.cpu_count()} cores; the machine is shared: read the ratios).", ""]
    with tempfile.TemporaryDirectory(prefix="hopscore-scale-") as scratch:
        work = Path(scratch)
        sql, root = sql_input(work, args.sql_rows)
        small, _ = sql_input(work / "small", 20)
        common = ["--db-root", str(root), "--timeout", "60"]
        sql_results = measure("sql", ["sql-match", "-i", str(sql), *common], "-o", work,
                              local_extra=["--workers", "2"], shard_extra=["--workers", "1"],
                              ray_extra=[])
        sql_fixed = fixed_costs("sql", ["sql-match", "-i", str(small), "--db-root",
                                        str(work / "small" / "dbs"), "--timeout", "60"], "-o",
                                work, ["--workers", "2"], [])
        report["sql"] = {"rows": args.sql_rows, **sql_results,
                         "model": model(sql_results, sql_fixed, args.sql_rows, cores)}
        server = subprocess.Popen([sys.executable, str(REPO / "bench" / "loopback_server.py"),
                                   "--latency", str(args.latency)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            judge = judge_input(work, args.judge_rows)
            base = ["judge", "-i", str(judge), "--model", "bench", "--base-url", url,
                    "--no-cache", "--no-progress"]
            c = str(args.concurrency)
            judge_results = measure("judge", base, "-o", work, local_extra=["-c", c],
                                    shard_extra=["-c", str(args.concurrency // 2)],
                                    ray_extra=["-c", c])
            small_judge = judge_input(work / "small", 20)
            judge_fixed = fixed_costs("judge", ["judge", "-i", str(small_judge), "--model",
                                                "bench", "--base-url", url, "--no-cache",
                                                "--no-progress"], "-o", work, ["-c", c],
                                      ["-c", c])
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
        report["judge"] = {"rows": args.judge_rows, "latency_s": args.latency,
                           "concurrency": args.concurrency, **judge_results,
                           "model": model(judge_results, judge_fixed, args.judge_rows, 1)}
    lines += table(f"{args.sql_rows} S2SQL gradings, CPU-heavy queries", report["sql"])
    lines += model_lines("S2SQL", report["sql"]["model"],
                         "The grading is CPU-bound: it divides over machines.")
    lines += table(f"{args.judge_rows}-row judge, {args.latency} s loopback latency, "
                   f"concurrency {args.concurrency} (2 shards: {args.concurrency // 2} each)",
                   report["judge"])
    lines += model_lines(
        "judge", report["judge"]["model"],
        f"Here the per-row cost is the endpoint's latency over its concurrency "
        f"({args.latency} s / {args.concurrency}): it shrinks with k only if the endpoint's "
        "limit grows with k (more replicas behind it); against one rate-limited endpoint, "
        "more machines do not make the judge faster, and Ray's global limit keeps them from "
        "overrunning it. The rows above assume the limit grows with k.")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "scale_out.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "scale_out.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
