"""Benchmark: what the confidence intervals cost when scoring a 1,000,000-example file.

Writes a lean HotpotQA gold file (answer, two supporting facts, no context) and universal JSONL
predictions, then runs ``hopscore score`` twice, with ``--resamples 0`` (no intervals) and with
the default 2,000 resamples, and reports wall time and peak RSS of each.

    python bench/score_memory.py [--n 1000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def write_files(work: Path, n: int) -> tuple[Path, Path]:
    rng = random.Random(0)
    gold, pred = work / "gold.json", work / "pred.jsonl"
    with gold.open("w") as g, pred.open("w") as p:
        g.write("[")
        for i in range(n):
            record = {"_id": f"q{i}", "question": "", "answer": f"answer {i % 97}",
                      "supporting_facts": [["T", 0], ["U", 1]],
                      "type": "bridge" if i % 3 else "comparison", "level": "hard"}
            g.write(("," if i else "") + json.dumps(record))
            p.write(json.dumps({"id": f"q{i}", "answer": f"answer {rng.randrange(97)}",
                                "sp": [["T", 0]] if rng.random() < 0.5 else [["T", 0], ["U", 1]]})
                    + "\n")
        g.write("]")
    return gold, pred


def measure(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command, measured in a fresh wrapper process."""
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
               "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
               "print(time.perf_counter() - t, "
               "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", wrapper, *args], check=True, text=True,
                         capture_output=True, env={"PYTHONPATH": str(ROOT / "src"),
                                                   "PATH": "/usr/bin:/bin"})
    seconds, kilobytes = out.stdout.split()
    return float(seconds), int(kilobytes) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="hopscore-score-memory-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    gold, pred = write_files(work, args.n)
    print(f"wrote {args.n} examples in {time.perf_counter() - started:.0f} s "
          f"(gold {gold.stat().st_size / 1e6:.0f} MB)")
    base = [sys.executable, "-m", "hopscore", "score", "hotpotqa", "-g", str(gold), "-p", str(pred)]
    for label, extra in (("no intervals (--resamples 0)", ["--resamples", "0"]),
                         ("with intervals (2000 resamples)", [])):
        seconds, megabytes = measure([*base, "-o", str(work / label.split()[0]), *extra])
        print(f"{label}: {seconds:.1f} s, peak RSS {megabytes:.0f} MB")


if __name__ == "__main__":
    main()
