"""Grading within bounds: wall time, peak memory of the whole process tree, verdict, row size.

    python bench/grading_bounds.py [--timeout 10] [--memory-mb 2048] [--workers 2]

Runs ``hopscore sql-match`` (a real subprocess, as a user runs it) on three hostile records,
each alone in its input file, and on a trivial record for the baseline:

* ``factorial``: 5 gold columns, each a permutation of 100,000 values; the agent returns 8
  shifted permutations (6,720 column alignments for the row check without pruning);
* ``wide``: a 20,000-row x 2,000-column result of floats, gold and agent;
* ``blobs``: 5 rows of 90 MB BLOBs, gold and agent.

For each it prints the wall time of the whole command and of the record alone (the command's
time minus the baseline's, which is process start-up, imports and the first worker), the
record's CPU time (the same difference, in user + system seconds of the command and its
workers: what the record costs, whatever else the machine is doing), the peak
resident memory of the process tree (the command and its SQL workers, summed, sampled every
10 ms from /proc), the verdict's reason, and the size of the verdict line. It checks that each
record is graded within ``--timeout`` + 2 s and that the tree stays within ``--memory-mb`` +
25%, and exits 1 if not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.sql.dbs import factorial_columns  # noqa: E402

FENCE = "```sql\n{}\n```"


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants now."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        rss[pid] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid, size in rss.items():
        walk = pid
        while walk not in (0, 1) and walk != root:
            walk = parents.get(walk, 0)
        if walk == root:
            total += size
    return total


def cpu_of_children() -> float:
    """User + system seconds of every finished child (and the children they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(source: Path, output: Path, args: argparse.Namespace) -> tuple[float, float, int, str]:
    """``(wall seconds, CPU seconds, peak tree RSS bytes, stderr)`` of one sql-match command
    (the CPU time of the command and its workers, which it waits for)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "hopscore", "sql-match", "-i", str(source), "-o",
               str(output), "--restart", "--timeout", str(args.timeout), "--memory-mb",
               str(args.memory_mb), "--workers", str(args.workers)]
    started, cpu = time.monotonic(), cpu_of_children()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    wall = time.monotonic() - started
    done.set()
    sampler.join()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"sql-match failed ({proc.returncode}): {stderr}")
    return wall, cpu_of_children() - cpu, peak, stderr


def build(folder: Path) -> dict[str, dict[str, str]]:
    """The databases and the record of each case."""
    gold_columns, agent_columns = factorial_columns(100_000)
    factorial = folder / "factorial.sqlite"
    conn = sqlite3.connect(factorial)
    with conn:
        conn.execute("CREATE TABLE g (" + ", ".join(f"g{k} INTEGER" for k in range(5)) + ")")
        conn.execute("CREATE TABLE a (" + ", ".join(f"a{k} INTEGER" for k in range(8)) + ")")
        conn.executemany("INSERT INTO g VALUES (?, ?, ?, ?, ?)", zip(*gold_columns, strict=True))
        conn.executemany("INSERT INTO a VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         zip(*agent_columns, strict=True))
    conn.close()
    empty = folder / "empty.sqlite"
    sqlite3.connect(empty).close()
    columns = ", ".join(f"x * {k + 1}.5" for k in range(2000))
    wide = (f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000) "
            f"SELECT {columns} FROM c")
    blobs = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) "
             "SELECT x, zeroblob(90000000) FROM c")
    return {
        "baseline": {"db_path": str(empty), "gold_sql": "SELECT 1",
                     "response": FENCE.format("SELECT 1")},
        "factorial": {"db_path": str(factorial), "gold_sql": "SELECT * FROM g",
                      "response": FENCE.format("SELECT * FROM a")},
        "wide": {"db_path": str(empty), "gold_sql": wide, "response": FENCE.format(wide)},
        "blobs": {"db_path": str(empty), "gold_sql": blobs,
                  "response": FENCE.format(blobs.replace("SELECT x,", "SELECT 6 - x,"))},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--memory-mb", type=int, default=2048)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = build(folder)
        results = {}
        for name, record in cases.items():
            source = folder / f"{name}.jsonl"
            source.write_text(json.dumps({"instance_id": name, **record}) + "\n")
            output = folder / f"{name}.out.jsonl"
            wall, cpu, peak, _ = run(source, output, args)
            line = output.read_bytes()
            verdict = json.loads(line)
            results[name] = (wall, cpu, peak, verdict["reason_kind"], len(line), verdict)
        base, base_cpu = results["baseline"][0], results["baseline"][1]
        limit_mb = args.memory_mb * 1.25
        print(f"sql-match --timeout {args.timeout:g} --memory-mb {args.memory_mb} "
              f"--workers {args.workers}; baseline (start-up, one trivial record) "
              f"{base:.2f} s ({base_cpu:.2f} s CPU), {results['baseline'][2] / 2**20:.0f} MiB; "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'case':<10} {'command s':>9} {'record s':>9} {'record CPU':>10} "
              f"{'peak MiB':>9} {'verdict':<18} {'row bytes':>10}  within bounds")
        for name in ("factorial", "wide", "blobs"):
            wall, cpu, peak, reason, size, verdict = results[name]
            record = max(0.0, wall - base)
            record_cpu = max(0.0, cpu - base_cpu)
            within = record <= args.timeout + 2 and peak / 2**20 <= limit_mb
            ok &= within
            print(f"{name:<10} {wall:>9.2f} {record:>9.2f} {record_cpu:>10.2f} "
                  f"{peak / 2**20:>9.0f} {reason:<18} "
                  f"{size:>10,}  {'yes' if within else 'NO'}")
        flags = results["factorial"][5]["flags"]
        print(f"factorial verdict: match={results['factorial'][5]['match']} flags={flags}")
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
