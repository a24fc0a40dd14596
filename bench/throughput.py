"""Benchmark: the engine's two throughput figures side by side, each with its ideal, in one run.

* judge: ``hopscore judge`` on 1,000 rows at ``--concurrency 64`` against the loopback server
  at 0.2 s latency; the ideal is 64 / 0.2 = 320 rows/s (target: at least 92% of it);
* run: ``hopscore run hotpotqa`` on 1,000 examples at ``--concurrency 64``, 0.5 s latency;
  the ideal is 1000 / 64 x 0.5 = 7.8 s, and the figure is the whole process, start-up, prompt
  rendering and scoring included (target: within 1.25x of it).

Both are the real CLI in a subprocess with a fresh cache (bench/judge_throughput.py and
bench/run_throughput.py, which also run other concurrencies). ``--repeat N`` runs the pair N
times, alternating, and reports each figure's median.

    python bench/throughput.py
    python bench/throughput.py --repeat 3
    python bench/throughput.py --fixed-concurrency    # without the adaptive limit
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
from pathlib import Path

import judge_throughput as judge
import run_throughput as run

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--fixed-concurrency", action="store_true",
                        help="pass --fixed-concurrency (no adaptive limit) to both commands")
    args = parser.parse_args()
    extra = ("--fixed-concurrency",) if args.fixed_concurrency else ()
    c = args.concurrency
    run.compile_sources()  # as an installed package has it (see run_throughput.py)
    judge_server, judge_url = judge.start_server(0.2)
    run_server, run_url = run.start_server(0.5)
    efficiencies: list[float] = []
    ratios: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            rows = work / "rows.jsonl"
            judge.write_input(rows, 1000)
            gold = work / "gold.json"
            run.write_gold(gold, 1000)
            for index in range(args.repeat):
                one = work / f"judge-{index}"
                one.mkdir()
                figures = judge.run_once(judge_url, rows, one, c, extra)
                efficiency = 1000 / figures["wall_s"] / (c / 0.2)
                efficiencies.append(efficiency)
                batch = run.run_once(run_url, gold, work, c, index + 100 * bool(extra), extra)
                ideal = 1000 / c * 0.5
                ratios.append(batch["process_s"] / ideal)
                print(f"[{index + 1}] judge c={c}: {1000 / figures['wall_s']:6.1f} rows/s, "
                      f"ideal {c / 0.2:.0f} rows/s: {efficiency:6.1%} of ideal   |   "
                      f"run c={c}: whole process {batch['process_s']:5.2f} s (requests "
                      f"{batch['batch_wall_s']:.2f} s), ideal {ideal:.2f} s: "
                      f"{batch['process_s'] / ideal:.2f}x", flush=True)
    finally:
        for server in (judge_server, run_server):
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
    judge_median, run_median = statistics.median(efficiencies), statistics.median(ratios)
    print(f"judge at {c}: {judge_median:.1%} of ideal (target >= 92%); run at {c}: whole "
          f"process {run_median:.2f}x the ideal (target <= 1.25x); load average "
          f"{os.getloadavg()[0]:.2f}")
    target = REPO / "bench" / "results" / "throughput.json"
    target.write_text(json.dumps({
        "concurrency": c, "python": platform.python_version(), "cpus": os.cpu_count(),
        "load_average": os.getloadavg(), "judge_efficiency": efficiencies,
        "run_process_ratio": ratios, "judge_median": judge_median, "run_median": run_median,
    }, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
