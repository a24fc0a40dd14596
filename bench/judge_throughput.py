"""Benchmark: judge N rows against a loopback OpenAI-compatible server with fixed latency.

For each concurrency it runs the real CLI (``python -m hopscore judge``) in a subprocess with a
fresh response cache, and reports rows/s against the ideal ``concurrency / latency``, the
speed-up over concurrency 1, and the CLI process's peak RSS. The server runs in a separate
process (``bench/loopback_server.py``, asyncio) so it takes little of the client's CPU.

    python bench/judge_throughput.py                      # 1000 rows, 0.2 s, c = 1, 16, 64
    python bench/judge_throughput.py --rows 200 --concurrency 16,64

Results are printed and written to bench/results/judge_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_input(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(rows):
            row = {"instance_id": f"b{i}", "question": f"Question {i}: which city is meant?",
                   "response": f"It is city number {i}.", "correct_answer": f"City {i}"}
            handle.write(json.dumps(row) + "\n")


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "loopback_server.py"), "--latency", str(latency)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def run_once(base_url: str, rows_path: Path, work: Path, concurrency: int,
             extra: tuple[str, ...] = ()) -> dict[str, float]:
    out = work / f"out-c{concurrency}.jsonl"
    summary = work / f"summary-c{concurrency}.json"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_PROXY": "127.0.0.1,localhost",
           "HOPSCORE_CACHE_DIR": str(work / f"cache-c{concurrency}")}
    args = [sys.executable, "-m", "hopscore", "judge", "-i", str(rows_path), "-o", str(out),
            "--model", "bench", "--base-url", base_url, "--concurrency", str(concurrency),
            "--no-progress", "--summary-json", str(summary), *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"judge failed (c={concurrency}): {proc.stderr.read().decode()}")
    data = json.loads(summary.read_text())
    assert data["rows"] == data["judged"], data
    return {"wall_s": data["wall_s"], "process_s": elapsed,
            "peak_rss_mib": usage.ru_maxrss / 1024, "requests": data["requests_sent"]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", default="1,16,64")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    from run_throughput import compile_sources

    compile_sources()
    server, base_url = start_server(args.latency)
    results = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            rows_path = work / "rows.jsonl"
            write_input(rows_path, args.rows)
            for concurrency in levels:
                figures = run_once(base_url, rows_path, work, concurrency)
                ideal = concurrency / args.latency
                rate = args.rows / figures["wall_s"]
                results.append({"concurrency": concurrency, **figures, "rows_per_s": rate,
                                "ideal_rows_per_s": ideal, "efficiency": rate / ideal})
                print(f"c={concurrency:>3}: {figures['wall_s']:7.2f} s  {rate:7.1f} rows/s  "
                      f"ideal {ideal:6.1f}  efficiency {rate / ideal:6.1%}  "
                      f"peak RSS {figures['peak_rss_mib']:.0f} MiB  "
                      f"(process {figures['process_s']:.2f} s)", flush=True)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    base = next((r for r in results if r["concurrency"] == 1), None)
    if base is not None:
        for r in results:
            r["speedup_vs_c1"] = r["rows_per_s"] / base["rows_per_s"]
            print(f"c={r['concurrency']:>3}: speed-up over c=1 {r['speedup_vs_c1']:.1f}x")
    report = {"rows": args.rows, "latency_s": args.latency, "python": platform.python_version(),
              "cpus": os.cpu_count(), "load_average": os.getloadavg(), "results": results}
    target = REPO / "bench" / "results" / "judge_throughput.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
