"""Benchmark: what ``--executor ray`` costs on a 1,000-row judge whose endpoint costs nothing.

A zero-latency loopback server (``bench/loopback_server.py``) answers at once, so the judge is
hopscore's own CPU and Ray's fixed start-up is all Ray could add. Side by side in one run, each
the real CLI in a subprocess (fresh output, no response cache):

* ``local``: the default executor;
* ``ray cold``: ``--executor ray`` with no cluster: the command's own embedded Ray;
* ``ray cluster, 1st``: ``--executor ray`` on a cluster already running (``ray start --head
  --node-ip-address 127.0.0.1``, started before and left to settle, not timed), its first
  command: no hopscore worker exists there yet;
* ``ray cluster, 2nd``: the next command on that cluster, which finds the workers the first
  one left (reused, not started again).

Each reports wall seconds, the command's CPU seconds (user + system of the driver and the
children it reaped, from ``wait4``), and the CPU of every other process involved (the embedded
Ray's, sampled every 0.1 s per process, or the running cluster's growth while the command
ran; a cluster's process that both started and ended while the command ran is
not seen), and where the rows ran. Every output is checked to be the local executor's (timing
fields aside). ``--repeats`` runs the whole set that many times, interleaved.

    python bench/ray_startup.py                 # 1,000 rows, fixed concurrency 32, 3 repeats
    python bench/ray_startup.py --adaptive --out bench/results/ray_startup_adaptive.json
    python bench/ray_startup.py --rows 4000 --latency 0.2 --repeats 1   # Ray's workers used

Needs the ray extra. Writes bench/results/ray_startup.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from overhead import JUDGE_REPLY, stop_server  # noqa: E402
from scale_out import Cluster, _cpu_s, _tree, env, judge_input, strip  # noqa: E402


class TreeCpu:
    """The CPU seconds of the processes under ``root`` but ``root`` itself (the embedded Ray's),
    sampled every 0.1 s per process (its last value kept once it is gone)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        for pid in _tree([self.root]):
            if pid != self.root:
                self.seen[pid] = max(self.seen.get(pid, 0.0), _cpu_s([pid]))

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self._sample()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return sum(self.seen.values())


def cluster_cpu(cluster: Cluster | None) -> dict[int, float]:
    """Each process of the running cluster and its CPU seconds so far."""
    if cluster is None:
        return {}
    return {pid: _cpu_s([pid]) for pid in _tree([cluster.pid])}


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    args = [sys.executable, str(REPO / "bench" / "loopback_server.py"), "--latency",
            str(latency), "--reply", JUDGE_REPLY]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def judge(args: list[str], extra_env: dict[str, str], cluster: Cluster | None
          ) -> dict[str, Any]:
    before = cluster_cpu(cluster)
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "hopscore", *args],
                            env={**env(), **extra_env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    others = TreeCpu(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    ray_cpu = others.stop()
    after = cluster_cpu(cluster)
    ray_cpu += sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"hopscore {' '.join(args)} failed:\n{err[-3000:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "other_cpu_s": round(ray_cpu, 3)}


def one_round(work: Path, rows_path: Path, url: str, concurrency: int, fixed: bool,
              index: int) -> dict[str, Any]:
    base = ["judge", "-i", str(rows_path), "--model", "bench", "--base-url", url, "--no-cache",
            "--no-progress", "-c", str(concurrency),
            *(["--fixed-concurrency"] if fixed else [])]

    def case(label: str, extra: list[str], extra_env: dict[str, str],
             cluster: Cluster | None = None) -> dict[str, Any]:
        out = work / f"{label}-{index}.jsonl"
        summary = work / f"{label}-{index}.summary.json"
        result = judge([*base, "-o", str(out), "--summary-json", str(summary), *extra],
                       extra_env, cluster)
        executor = json.loads(summary.read_text()).get("executor", {})
        keep = ("rows_on_driver", "rows_on_workers", "workers", "connected_s",
                "first_worker_s", "skipped", "reused")
        result["pool"] = {k: executor.get(k) for k in keep if k in executor}
        result["output"] = out
        return result

    results: dict[str, Any] = {}
    # local and the embedded Ray take turns going first (the first command of a round may
    # find the machine's caches colder)
    for label in (("local", "ray cold") if index % 2 == 0 else ("ray cold", "local")):
        results[label] = (case("local", [], {}) if label == "local" else
                          case("cold", ["--executor", "ray", "--ray-workers", "2"], {}))
    cluster = Cluster(2)
    try:
        results["ray cluster, 1st"] = case("cluster1", ["--executor", "ray"], cluster.env,
                                           cluster)
        cluster.settle()
        results["ray cluster, 2nd"] = case("cluster2", ["--executor", "ray"], cluster.env,
                                           cluster)
    finally:
        cluster.stop()
    expected = strip(results["local"]["output"])
    for label in ("local", "ray cold", "ray cluster, 1st", "ray cluster, 2nd"):
        result = results[label] = results.pop(label)
        result["same_output"] = strip(result.pop("output")) == expected
        result["ratio"] = round(result["wall_s"] / results["local"]["wall_s"], 3)
        if not result["same_output"]:
            raise SystemExit(f"{label}: output differs from the local executor's")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--adaptive", action="store_true",
                        help="the adaptive limit (the default is --fixed-concurrency, as "
                        "bench/overhead.py)")
    parser.add_argument("--latency", type=float, default=0.0,
                        help="the server's seconds per reply (0: answers at once)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" /
                        "ray_startup.json")
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    proc, url = start_server(args.latency)
    rounds = []
    try:
        with tempfile.TemporaryDirectory(prefix="hs-raystart-") as tmp:
            work = Path(tmp)
            rows_path = judge_input(work / "in", args.rows)
            for index in range(args.repeats):
                rounds.append(one_round(work, rows_path, url, args.concurrency,
                                        not args.adaptive, index))
                print(json.dumps(rounds[-1]), flush=True)
    finally:
        stop_server(proc)
    medians = {label: {key: statistics.median(r[label][key] for r in rounds)
                       for key in ("wall_s", "cpu_s", "other_cpu_s", "ratio")}
               for label in rounds[0]}
    report = {"rows": args.rows, "latency_s": args.latency, "concurrency": args.concurrency,
              "fixed_concurrency": not args.adaptive,
              "repeats": args.repeats,
              "started": started, "load_before": load_before,
              "load_after": [round(x, 2) for x in os.getloadavg()],
              "medians": medians, "rounds": rounds}
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"{'executor':<18} {'wall s':>7} {'ratio':>6} {'CPU s':>6} {'other CPU s':>11}")
    for label, m in medians.items():
        print(f"{label:<18} {m['wall_s']:7.2f} {m['ratio']:6.2f} {m['cpu_s']:6.2f} "
              f"{m['other_cpu_s']:11.2f}")


if __name__ == "__main__":
    main()
