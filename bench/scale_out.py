"""Benchmark: one machine, four executors side by side, for two workloads.

* ``sql``: 2,000 S2SQL gradings (``hopscore sql-match``) whose gold and agent queries are
  CPU-heavy (a 300 x 300 self-join, about 12 ms each here);
* ``judge``: a 1,000-row ``hopscore judge`` over a loopback endpoint answering after 0.2 s;
* ``judge-long`` (not run unless asked): the same judge on 8,000 rows (about 50 s here), long
  enough for ``--executor ray`` to start its workers, so that what Ray's workers cost per row
  is measured (on 1,000 rows, and in S2SQL, the driver does every row: see below).

Each is run as a user runs it (the CLI, in subprocesses): the local executor; 2 shards started
at once then ``hopscore merge``; ``--executor ray`` on an embedded local Ray with 2 CPUs, which
the command starts and stops; and ``--executor ray`` on a Ray cluster already running
(``ray start --head`` with 2 CPUs on 127.0.0.1, started before, left to settle until idle, and
stopped after, not timed), as a user with a cluster runs it. Each reports wall time, its ratio
to the local executor, and peak memory (the largest sum of the RSS of every process involved,
Ray's own included, sampled every 0.1 s). Every output is checked to be the local executor's
(timing fields aside).

The expected speed-up on k machines is a **model**, not a simulation. Measured: the fixed cost
of a command (the same command on 20 rows: start-up, Ray's start or connection, reading the
input), the local executor's per-row cost (the rest of its wall time, times its cores, over the
rows) and each executor's rows ratio (its wall time less its fixed cost, over the local
executor's). Then T_k = fixed + rows * cost * ratio / (k * cores), plus the merge for shards;
Ray on k machines is a running cluster. The judge's per-row cost is the endpoint's latency over
its concurrency limit, which shrinks with k only if the endpoint grows with k: the note says so.

    python bench/scale_out.py                 # both workloads, full size
    python bench/scale_out.py --sql-rows 200 --judge-rows 100   # a quick look
    python bench/scale_out.py --workloads judge   # one workload again (the other's figures
                                                  # are kept from scale_out.json)
    python bench/scale_out.py --workloads judge-long   # Ray's workers at work

``--executor ray`` overlaps Ray's start with work: the driver judges rows with its local engine
from the start, Ray is started (or connected to) only when the driver's pace says the job
outlasts Ray's start, and the workers take batches once they are ready (the judge's row counts
on each say how the rows were shared, and why Ray was not used when it was not).

Needs the ray extra (pip install 'hopscore[ray]'). Results: bench/results/scale_out.json and
bench/results/scale_out.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import secrets
import shutil
import socket
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


def _cpu_s(pids: list[int]) -> float:
    """The CPU seconds (user + system) the processes used so far."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


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


#: the standard error of the last command :func:`run_all` ran (sql-match's ``ray:`` line)
LAST_STDERR: list[str] = [""]


def run_all(commands: list[list[str]], cluster: Cluster | None = None
            ) -> tuple[float, float]:
    """Start every command at once; (wall seconds until all ended, peak MiB). ``cluster``: the
    commands use that running Ray (its processes count in the memory)."""
    extra = cluster.env if cluster is not None else {}
    with PeakMemory() as memory:
        started = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-m", "hopscore", *c], env={**env(), **extra},
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for c in commands]
        memory.roots = [p.pid for p in procs] + ([cluster.pid] if cluster is not None else [])
        for proc, command in zip(procs, commands, strict=True):
            _, err = proc.communicate()
            LAST_STDERR[0] = err
            if proc.returncode not in (0,):
                raise SystemExit(f"failed ({proc.returncode}): hopscore {' '.join(command)}\n"
                                 f"{err[-2000:]}")
        wall = time.perf_counter() - started
    return wall, memory.peak


class Cluster:
    """A Ray cluster already running, as a user with a cluster has one: ``ray start --head``
    with 2 CPUs on 127.0.0.1 (token authentication, its own temp dir), in the foreground
    (``--block``) so that stopping that one process stops every process it started."""

    def __init__(self, cpus: int = 2) -> None:
        self.temp = tempfile.mkdtemp(prefix="hsray-", dir="/tmp")  # short: socket paths
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        # token authentication with a token of its own (nothing read from ~/.ray)
        self.env = {"RAY_ADDRESS": f"127.0.0.1:{self.port}", "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        ray = Path(sys.executable).with_name("ray")
        self.proc = subprocess.Popen(
            [str(ray), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
             "--port", str(self.port), "--num-cpus", str(cpus), "--include-dashboard", "false",
             "--disable-usage-stats", "--temp-dir", self.temp],
            env={**env(), **self.env, "RAY_ADDRESS": ""}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.pid = self.proc.pid
        assert self.proc.stdout is not None
        seen = []
        for line in self.proc.stdout:  # ready once it says it blocks
            seen.append(line)
            if "block forever" in line:
                break
        else:
            raise SystemExit("ray start failed:\n" + "".join(seen[-20:]))
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        self.settle()

    def settle(self, quiet: float = 0.1, limit: float = 30.0) -> None:
        """Wait until the cluster is idle (its processes used under ``quiet`` CPU seconds in
        the last second), as a running cluster is: just after ``ray start`` it still starts
        its agents and prestarts workers, whose CPU is not the command's cost."""
        deadline = time.monotonic() + limit
        before = _cpu_s(_tree([self.pid]))
        while time.monotonic() < deadline:
            time.sleep(1.0)
            now = _cpu_s(_tree([self.pid]))
            if now - before < quiet:
                return
            before = now

    def stop(self) -> None:
        self.proc.terminate()  # ray start --block stops what it started
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.temp, ignore_errors=True)


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
    path.parent.mkdir(parents=True, exist_ok=True)
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


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Where two stripped outputs first differ (row index, then field path)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return first_difference(a.get(k), b.get(k), f"{where}.{k}")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} against {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{where}[{i}]")
    return f"{where}: {json.dumps(a)[:120]} against {json.dumps(b)[:120]}"


def compare(results: dict[str, Any], label: str, path: Path, local_out: Path) -> None:
    rows, reference = strip(path), strip(local_out)
    results[label]["same_output"] = rows == reference
    if rows != reference:
        results[label]["first_difference"] = first_difference(reference, rows)
    results[label]["ratio"] = results[label]["wall_s"] / results["local"]["wall_s"]


def summary_flag(name: str, label: str, work: Path) -> list[str]:
    """The judge's --summary-json (its executor block says where the rows ran)."""
    if not name.startswith("judge"):
        return []
    return ["--summary-json", str(work / f"{name}-{label}.summary.json")]


def ray_counts(name: str, label: str, work: Path) -> dict[str, Any]:
    path = work / f"{name}-{label}.summary.json"
    if not path.exists():  # sql-match: its "ray:" line says where the rows ran
        err = LAST_STDERR[0]
        line = " ".join(err[err.find("ray: "):].split()) if "ray: " in err else ""  # unwrapped
        found = re.match(r"ray: (\d+) rows on the driver, (\d+) on (\d+) workers"
                         r"(?:; Ray was not used: (.*?))?(?: wrote .*)?$", line)
        if found is None:
            return {}
        return {"pool": {"rows_on_driver": int(found[1]), "rows_on_workers": int(found[2]),
                         "workers": int(found[3]), "skipped": found[4],
                         "connected_s": None, "first_worker_s": None}}
    executor = json.loads(path.read_text()).get("executor", {})
    keep = ("rows_on_driver", "rows_on_workers", "connected_s", "first_worker_s", "workers",
            "skipped")
    return {"pool": {k: executor.get(k) for k in keep}}


def measure(name: str, base: list[str], out_flag: str, work: Path, *, local_extra: list[str],
            shard_extra: list[str], ray_extra: list[str]) -> dict[str, Any]:
    """Local, 2 shards at once + merge, Ray with 2 CPUs started by the command; each output
    checked against the local executor's."""
    local_out = work / f"{name}-local.jsonl"
    wall, peak = run_all([[*base, out_flag, str(local_out), *local_extra]])
    results: dict[str, Any] = {"local": {"wall_s": wall, "peak_mib": peak, "ratio": 1.0}}
    shards = [work / f"{name}-shard{i}.jsonl" for i in range(2)]
    wall, peak = run_all([[*base, out_flag, str(s), "--shard", f"{i}/2", *shard_extra]
                          for i, s in enumerate(shards)])
    merged = work / f"{name}-merged.jsonl"
    merge_wall, merge_peak = run_all([["merge", *map(str, shards), "-o", str(merged)]])
    results["shards"] = {"wall_s": wall + merge_wall, "shards_wall_s": wall,
                         "merge_wall_s": merge_wall, "peak_mib": max(peak, merge_peak)}
    compare(results, "shards", merged, local_out)
    out = work / f"{name}-ray.jsonl"
    wall, peak = run_all([[*base, out_flag, str(out), "--executor", "ray", "--ray-workers", "2",
                           *ray_extra, *summary_flag(name, "ray", work)]])
    results["ray"] = {"wall_s": wall, "peak_mib": peak, **ray_counts(name, "ray", work)}
    compare(results, "ray", out, local_out)
    return results


def measure_on_cluster(name: str, base: list[str], small: list[str], out_flag: str, work: Path,
                       results: dict[str, Any], fixed: dict[str, float],
                       ray_extra: list[str]) -> None:
    """The Ray run again, on a cluster started beforehand (its start not counted), and its
    fixed cost on 20 rows: what a user with a running cluster pays."""
    cluster = Cluster(cpus=2)
    try:
        out = work / f"{name}-ray_cluster.jsonl"
        wall, peak = run_all([[*base, out_flag, str(out), "--executor", "ray", *ray_extra,
                               *summary_flag(name, "ray_cluster", work)]], cluster)
        results["ray_cluster"] = {"wall_s": wall, "peak_mib": peak,
                                  **ray_counts(name, "ray_cluster", work)}
        compare(results, "ray_cluster", out, work / f"{name}-local.jsonl")
        fixed["ray_cluster_fixed_s"], _ = run_all(
            [[*small, out_flag, str(work / f"{name}-small-cluster.jsonl"), "--executor", "ray",
              *ray_extra]], cluster)
    finally:
        cluster.stop()


def fixed_costs(name: str, base_small: list[str], out_flag: str, work: Path,
                local_extra: list[str], ray_extra: list[str]) -> dict[str, float]:
    """The wall time of the same command on 20 rows: what a command costs whatever its size."""
    local, _ = run_all([[*base_small, out_flag, str(work / f"{name}-small-local.jsonl"),
                         *local_extra]])
    ray, _ = run_all([[*base_small, out_flag, str(work / f"{name}-small-ray.jsonl"),
                       "--executor", "ray", "--ray-workers", "2", *ray_extra]])
    return {"local_fixed_s": local, "ray_fixed_s": ray}


def model(results: dict[str, Any], fixed: dict[str, float], rows: int, cores: int,
          ks: tuple[int, ...] = (1, 2, 4, 8, 16)) -> dict[str, Any]:
    """The expected wall time and speed-up on k machines of ``cores`` cores (see the docstring)."""
    local = results["local"]["wall_s"]
    rows_local = max(local - fixed["local_fixed_s"], 1e-9)
    per_row = rows_local * cores / rows
    merge = results["shards"]["merge_wall_s"]
    out: dict[str, Any] = {"per_row_core_s": per_row, **fixed, "merge_s": merge,
                           "rows_s": rows_local, "k": {}}
    # each executor's time for the rows themselves (its fixed cost taken out), over the local
    # executor's: its per-row overhead, measured; 1 when the rows took too little time to say
    measured = rows_local >= 1.0
    out["rows_ratio"] = {
        "shards": (results["shards"]["shards_wall_s"] - fixed["local_fixed_s"]) / rows_local,
        "ray": (results["ray"]["wall_s"] - fixed["ray_fixed_s"]) / rows_local,
        "ray_cluster": (results["ray_cluster"]["wall_s"] - fixed["ray_cluster_fixed_s"])
        / rows_local} if measured else {"shards": 1.0, "ray": 1.0, "ray_cluster": 1.0}
    ratio = out["rows_ratio"]
    for k in ks:
        work = rows * per_row / (k * cores)
        shards = fixed["local_fixed_s"] + work * max(ratio["shards"], 0.0) + merge
        ray = fixed["ray_cluster_fixed_s"] + work * max(ratio["ray_cluster"], 0.0)
        out["k"][k] = {"shards_s": shards, "shards_speedup": local / shards,
                       "ray_s": ray, "ray_speedup": local / ray}
        if (results["ray_cluster"].get("pool") or {}).get("rows_on_workers") == 0:
            # the driver did every row: nothing was measured of Ray's workers to model
            out["k"][k].update(ray_s=None, ray_speedup=None)
    return out


EXECUTORS = (("local", "local executor"), ("shards", "2 shards at once + merge"),
             ("ray", "Ray, 2 CPUs, started by the command"),
             ("ray_cluster", "Ray, 2 CPUs, a cluster already running"))


def table(title: str, results: dict[str, Any]) -> list[str]:
    lines = [f"### {title}", "", "| executor | wall s | ratio to local | peak memory MiB | "
             "same output |", "| --- | ---: | ---: | ---: | --- |"]
    for label, text in EXECUTORS:
        r = results[label]
        same = "" if label == "local" else ("yes" if r["same_output"] else "NO")
        lines.append(f"| {text} | {r['wall_s']:.1f} | {r['ratio']:.2f}x | {r['peak_mib']:.0f} "
                     f"| {same} |")
    shards = results["shards"]
    lines += ["", f"(shards: {shards['shards_wall_s']:.1f} s running, "
              f"{shards['merge_wall_s']:.1f} s merging; the running cluster's start is not "
              "counted, its processes' memory is)", ""]
    for label, text in EXECUTORS[2:]:
        pool = results[label].get("pool")
        if pool:
            ready = ("no worker was ready before the rows were done"
                     if pool["first_worker_s"] is None else
                     f"the first worker ready at {pool['first_worker_s']:.1f} s")
            connected = ("not connected before the rows were done"
                         if pool["connected_s"] is None else
                         f"Ray connected at {pool['connected_s']:.1f} s")
            if pool.get("skipped"):
                connected, ready = "Ray was not used", f"{pool['skipped']}"
            lines += [f"{text}: {pool['rows_on_driver']} rows on the driver, "
                      f"{pool['rows_on_workers']} on the workers; {connected}, {ready}.", ""]
    for label, text in EXECUTORS[1:]:
        if "first_difference" in results[label]:
            where = results[label]["first_difference"]
            lines += [f"{text}: first difference from local at {where}", ""]
    return lines


def rows_part(m: dict[str, Any]) -> str:
    """Each executor's time for the rows alone, when the rows took long enough to say."""
    if m["rows_s"] < 1.0:
        return "(Too few rows to tell the rows' part from the fixed costs: ratios 1 assumed.) "
    r = m["rows_ratio"]
    return (f"Fixed costs taken out, the rows took {r['shards']:.2f}x (2 shards), "
            f"{r['ray']:.2f}x (Ray started by the command) and {r['ray_cluster']:.2f}x (Ray, "
            "cluster running) the local executor's time. ")


def model_lines(title: str, m: dict[str, Any], note: str) -> list[str]:
    lines = [f"#### {title}: expected on k machines (a model, not a simulation)", "",
             f"Per-row cost {m['per_row_core_s'] * 1000:.2f} core-ms (local executor). Fixed "
             f"cost of a command (the same command on 20 rows): {m['local_fixed_s']:.1f} s "
             f"local, {m['ray_fixed_s']:.1f} s Ray started by the command, "
             f"{m['ray_cluster_fixed_s']:.1f} s Ray with a cluster running; merge "
             f"{m['merge_s']:.1f} s. {rows_part(m)}{note}", "",
             "T_k = fixed + rows x per-row cost x (that executor's rows ratio) / (k x cores) "
             "(+ merge for shards); Ray on k machines is a cluster already running.", "",
             "| k machines | shards s | shards speed-up | Ray s | Ray speed-up |",
             "| ---: | ---: | ---: | ---: | ---: |"]
    for k, row in m["k"].items():
        ray = ("n/a | n/a" if row["ray_s"] is None else
               f"{row['ray_s']:.1f} | {row['ray_speedup']:.2f}x")
        lines.append(f"| {k} | {row['shards_s']:.1f} | {row['shards_speedup']:.2f}x | {ray} |")
    if any(row["ray_s"] is None for row in m["k"].values()):
        lines += ["", "Ray: n/a: in the measured runs the driver did every row (the job was "
                  "shorter than Ray's start pays back, or the workers would have had only the "
                  "CPUs the driver already uses), so nothing of Ray's workers was measured "
                  "to model."]
    return [*lines, ""]


def run_sql(work: Path, rows: int, cores: int) -> dict[str, Any]:
    sql, root = sql_input(work, rows)
    small, _ = sql_input(work / "small", 20)
    common = ["--db-root", str(root), "--timeout", "60"]
    results = measure("sql", ["sql-match", "-i", str(sql), *common], "-o", work,
                      local_extra=["--workers", "2"], shard_extra=["--workers", "1"],
                      ray_extra=[])
    sql_small = ["sql-match", "-i", str(small), "--db-root", str(work / "small" / "dbs"),
                 "--timeout", "60"]
    fixed = fixed_costs("sql", sql_small, "-o", work, ["--workers", "2"], [])
    measure_on_cluster("sql", ["sql-match", "-i", str(sql), *common], sql_small, "-o", work,
                       results, fixed, [])
    return {"rows": rows, **results, "model": model(results, fixed, rows, cores)}


def run_judge(work: Path, rows: int, latency: float, concurrency: int,
              name: str = "judge") -> dict[str, Any]:
    server = subprocess.Popen([sys.executable, str(REPO / "bench" / "loopback_server.py"),
                               "--latency", str(latency)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        judge = judge_input(work / name, rows)
        base = ["judge", "-i", str(judge), "--model", "bench", "--base-url", url,
                "--no-cache", "--no-progress"]
        c = str(concurrency)
        results = measure(name, base, "-o", work, local_extra=["-c", c],
                          shard_extra=["-c", str(concurrency // 2)], ray_extra=["-c", c])
        small_judge = judge_input(work / name / "small", 20)
        judge_small = ["judge", "-i", str(small_judge), "--model", "bench", "--base-url",
                       url, "--no-cache", "--no-progress"]
        fixed = fixed_costs(name, judge_small, "-o", work, ["-c", c], ["-c", c])
        measure_on_cluster(name, base, judge_small, "-o", work, results, fixed, ["-c", c])
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    return {"rows": rows, "latency_s": latency, "concurrency": concurrency, **results,
            "model": model(results, fixed, rows, 1)}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measured(run: Any) -> dict[str, Any]:
    """``run()``'s figures, with when and under what load they were measured."""
    before = load_average()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out: dict[str, Any] = run()
    out["measured"] = {"started": started, "load_before": before, "load_after": load_average()}
    return out


def when(block: dict[str, Any]) -> str:
    m = block.get("measured")
    if not m:
        return ""
    return (f"Measured {m['started']} in one run; load average (1, 5, 15 min) "
            f"{', '.join(map(str, m['load_before']))} before, "
            f"{', '.join(map(str, m['load_after']))} after.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sql-rows", type=int, default=2000)
    parser.add_argument("--judge-rows", type=int, default=1000)
    parser.add_argument("--long-judge-rows", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--workloads", default="sql,judge",
                        help="sql, judge, judge-long, comma-separated (a workload left out "
                        "keeps the figures scale_out.json has for it)")
    args = parser.parse_args()
    wanted = {w.strip() for w in args.workloads.split(",") if w.strip()}
    if not wanted or wanted - {"sql", "judge", "judge-long"}:
        raise SystemExit("--workloads: sql, judge, judge-long (comma-separated)")
    cores = 2
    previous: dict[str, Any] = {}
    if wanted != {"sql", "judge", "judge-long"} and (RESULTS / "scale_out.json").exists():
        previous = json.loads((RESULTS / "scale_out.json").read_text())
    report: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                                          "platform": platform.platform()}}
    with tempfile.TemporaryDirectory(prefix="hopscore-scale-") as scratch:
        work = Path(scratch)
        if "sql" in wanted:
            report["sql"] = measured(lambda: run_sql(work, args.sql_rows, cores))
        if "judge" in wanted:
            report["judge"] = measured(lambda: run_judge(work, args.judge_rows, args.latency,
                                                         args.concurrency))
        if "judge-long" in wanted:
            report["judge_long"] = measured(lambda: run_judge(
                work, args.long_judge_rows, args.latency, args.concurrency, "judge_long"))
    for name in ("sql", "judge"):
        if name not in report:
            if name not in previous:
                raise SystemExit(f"scale_out.json has no {name} figures: run that workload too")
            report[name] = previous[name]
    if "judge_long" not in report and "judge_long" in previous:
        report["judge_long"] = previous["judge_long"]
    sql, judge = report["sql"], report["judge"]
    lines = ["# Scaling out on one machine: local executor, 2 shards, Ray with 2 CPUs", "",
             "Measured by `python bench/scale_out.py` (each workload's executors side by side "
             f"in one run, on {os.cpu_count()} cores; the machine is shared: read the ratios).",
             ""]
    lines += table(f"{sql['rows']} S2SQL gradings, CPU-heavy queries", sql)
    lines += [when(sql), ""] if when(sql) else []
    lines += model_lines("S2SQL", sql["model"],
                         "The grading is CPU-bound: it divides over machines.")
    lines += table(f"{judge['rows']}-row judge, {judge['latency_s']} s loopback latency, "
                   f"concurrency {judge['concurrency']} (2 shards: {judge['concurrency'] // 2} "
                   "each)", judge)
    lines += [when(judge), ""] if when(judge) else []
    lines += model_lines(
        "judge", judge["model"],
        f"Here the per-row cost is the endpoint's latency over its concurrency "
        f"({judge['latency_s']} s / {judge['concurrency']}): it shrinks with k only if the "
        "endpoint's limit grows with k (more replicas behind it); against one rate-limited "
        "endpoint, more machines do not make the judge faster, and Ray's global limit keeps "
        "them from overrunning it. The rows above assume the limit grows with k.")
    long = report.get("judge_long")
    if long is not None:
        lines += table(f"{long['rows']}-row judge (long enough for Ray's workers), "
                       f"{long['latency_s']} s loopback latency, concurrency "
                       f"{long['concurrency']}", long)
        lines += [when(long), ""] if when(long) else []
        lines += model_lines("long judge", long["model"],
                             "The same judge as above, with rows enough for Ray's workers to "
                             "start and take batches: the Ray rows above are what they cost.")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "scale_out.json").write_text(json.dumps(report, indent=2) + "\n")
    (RESULTS / "scale_out.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
