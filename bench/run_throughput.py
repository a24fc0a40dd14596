"""Benchmark: ``hopscore run`` on 1,000 HotpotQA examples against a loopback server.

The server (``bench/loopback_server.py``, its own process) answers every request after a fixed
latency (0.5 s by default) with a reply that cites a supporting fact and gives an answer. The
examples are the real HotpotQA dev-distractor records of the shared data folder when present
(``hotpotqa/hotpot_dev_distractor_v1.first53.json``: real paragraph sizes), else the test
fixture, repeated with a numbered question so that every prompt is distinct (no cache hit).
The run is the real CLI in a subprocess with a fresh cache; the ideal wall time is
``examples / concurrency * latency``.

    python bench/run_throughput.py                       # 1000 examples, 0.5 s, c = 64
    python bench/run_throughput.py --examples 200 --concurrency 16

Results are printed and written to bench/results/run_throughput.json.
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
SHARED = Path(os.environ.get("HOPSCORE_SHARED_DATA", REPO.parent / "shared" / "data"))
REAL = SHARED / "hotpotqa" / "hotpot_dev_distractor_v1.first53.json"
FIXTURE = REPO / "tests" / "fixtures" / "hotpotqa" / "dev_small.json"
REPLY = "The paragraphs say so [Ed Wood, 0].\nSupporting facts: [Ed Wood, 0]\nAnswer: yes"


def write_gold(path: Path, count: int, source: Path | None = None) -> str:
    """``count`` examples from ``source`` (default: the real records when present, else the
    test fixture) under fresh ids and numbered questions; the source file's name."""
    source = source or (REAL if REAL.exists() else FIXTURE)
    records = json.loads(source.read_text(encoding="utf-8"))
    out = []
    for i in range(count):
        record = dict(records[i % len(records)])
        record["_id"] = f"bench-{i}"
        record["question"] = f"{record['question']} (#{i})"
        out.append(record)
    path.write_text(json.dumps(out), encoding="utf-8")
    return source.name


def compile_sources() -> None:
    """Write the bytecode of ``src/hopscore`` (gitignored ``__pycache__`` folders), as an
    installed package has it (pip compiles at install). Without it, a checkout run with
    ``PYTHONDONTWRITEBYTECODE=1`` (as the development machine's environment sets) compiles
    every hopscore module from source at every start: 0.2-0.3 s of CPU that is not hopscore's
    start-up but the environment's."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "src" / "hopscore")],
                   check=True, stdout=subprocess.DEVNULL)


def start_server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "loopback_server.py"), "--latency", str(latency),
         "--reply", REPLY],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def run_once(
    base_url: str, gold: Path, work: Path, concurrency: int, index: int,
    extra: tuple[str, ...] = (),
) -> dict[str, float]:
    out = work / f"run-{index}-c{concurrency}"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "NO_PROXY": "127.0.0.1,localhost"}
    args = [sys.executable, "-m", "hopscore", "run", "hotpotqa", "--gold", str(gold),
            "--model", "openai/bench", "--base-url", base_url, "--concurrency", str(concurrency),
            "-o", str(out), "--cache-dir", str(work / f"cache-{index}"), "--no-progress", *extra]
    started = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        assert proc.stderr is not None
        raise SystemExit(f"run failed (c={concurrency}): {proc.stderr.read().decode()}")
    config = json.loads((out / "config.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["errors"] == 0 and config["requests"]["sent"] == metrics["n_gold"]
    return {"batch_wall_s": config["batch"]["wall_s"], "process_s": elapsed,
            "peak_rss_mib": usage.ru_maxrss / 1024, "requests": config["requests"]["sent"],
            "samples_mib": (out / "samples.jsonl").stat().st_size / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", default="64")
    args = parser.parse_args()
    compile_sources()
    server, base_url = start_server(args.latency)
    results = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            gold = work / "gold.json"
            source = write_gold(gold, args.examples)
            levels = [int(c) for c in args.concurrency.split(",")]
            for index, concurrency in enumerate(levels):
                figures = run_once(base_url, gold, work, concurrency, index)
                ideal = args.examples / concurrency * args.latency
                ratio = figures["batch_wall_s"] / ideal
                results.append({"concurrency": concurrency, "ideal_s": ideal,
                                "ratio_to_ideal": ratio, **figures})
                print(f"c={concurrency:>3}: batch {figures['batch_wall_s']:6.2f} s "
                      f"(ideal {ideal:.2f} s, {ratio:.2f}x)  whole process "
                      f"{figures['process_s']:6.2f} s  peak RSS {figures['peak_rss_mib']:.0f} MiB"
                      f"  samples.jsonl {figures['samples_mib']:.1f} MiB", flush=True)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    report = {"examples": args.examples, "latency_s": args.latency, "source": source,
              "python": platform.python_version(), "cpus": os.cpu_count(),
              "load_average": os.getloadavg(), "results": results}
    target = REPO / "bench" / "results" / "run_throughput.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
