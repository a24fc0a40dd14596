"""How often compare's interval of a mean difference and its exact permutation test disagree
when few differences are non-zero (the interval excludes 0 but p >= 0.05, or the reverse).

Usage (from the repository root)::

    python bench/flip_interval.py [--rows 3000]

Each row has n in {15, 30, 100, 400} paired differences, k in 1..16 of them non-zero, drawn
from N(0.25, 0.35) cut to [-1, 1] and rounded to 3 places. For each row it runs compare's
sign-flip test and counts disagreements of the analytic BCa interval (the interval compare used
before) and of compare's interval now, per k. Prints two lines.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hopscore.inference.ci import bca_mean, moments
from hopscore.inference.paired import difference_interval, sign_flip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=3000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    before = after = 0
    by_k: dict[int, list[int]] = {}
    start = time.perf_counter()
    for _ in range(args.rows):
        n = int(rng.choice([15, 30, 100, 400]))
        k = min(n, int(rng.integers(1, 17)))
        d = np.zeros(n)
        d[:k] = np.clip(rng.normal(0.25, 0.35, k), -1, 1).round(3)
        values = d.tolist()
        rejects = sign_flip(values).p < 0.05
        low, high = bca_mean(moments(values), 0.95)
        interval = difference_interval(values, "bca", 0.95, bounds=(-1.0, 1.0))
        was = (not low <= 0 <= high) != rejects
        now = (not interval.low <= 0 <= interval.high) != rejects
        before += was
        after += now
        counts = by_k.setdefault(k, [0, 0, 0])
        counts[0] += 1
        counts[1] += was
        counts[2] += now
    print(f"{args.rows} rows: interval and exact test disagree on {before} with BCa, {after} "
          f"now ({time.perf_counter() - start:.0f} s)")
    print("k: [rows, BCa, now]", dict(sorted(by_k.items())))


if __name__ == "__main__":
    main()
