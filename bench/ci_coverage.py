"""Coverage of hopscore's intervals and the family-wise error of ``compare``, by simulation.

Usage (from the repository root)::

    python bench/ci_coverage.py [--datasets 1000] [--families 1000] [--seed 0]

1. **Coverage.** For n in {20, 120, 500} and a true score in {0.05, 0.5, 0.95}, ``--datasets``
   samples are drawn and every interval method of ``hopscore score`` is computed on each, by
   the same code the scorer runs (:func:`hopscore.inference.intervals.set_intervals`, 95%, 2,000
   resamples). Two metrics: a binary one (Bernoulli(p), like EM) and an F1-like one (1 with
   probability p, else 0 with probability 0.6 and a partial Beta(2, 2) credit otherwise, so its
   mean is p + 0.2 (1 - p)). Reported per cell and method: empirical coverage of the true mean,
   the share of intervals that are a single point, and the mean width. The default
   (``--ci auto``: Wilson for binary metrics, BCa for the others) must cover 0.93-0.97 in every
   cell with n >= 120 and at least 0.90 at n = 20.
2. **Family-wise type-I error of compare.** ``--families`` times, a baseline and 4 candidates
   that are the same system (each question has a difficulty; every system answers it right
   with the same probability, independently) are scored on ``--family-n`` questions in 3
   groups with EM and an F1-like metric; ``compare`` tests every row (2 metrics x (overall + 3
   groups) x 4 candidates = 32 rows). A family errs when any row gets a star. With Holm's
   correction (the default) the rate must be at most 0.05; the rates without correction and
   with BH are printed beside it.

Prints the tables and writes ``bench/results/ci_coverage.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from harness import REPO, machine, print_table, write_results

sys.path.insert(0, str(REPO / "src"))

from hopscore.analysis.compare import adjust_family, compare_pair
from hopscore.analysis.compare_records import CompareOptions
from hopscore.analysis.scored import GroupColumn, ScoredSet
from hopscore.inference.intervals import set_intervals
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import MatrixValues

SIZES = (20, 120, 500)
SCORES = (0.05, 0.5, 0.95)
BINARY_METHODS = ("auto", "wilson", "clopper-pearson", "bca", "bootstrap", "t")
F1_METHODS = ("auto", "bca", "bootstrap", "t")
DEFAULT_TARGET = (0.93, 0.97)
SMALL_N_FLOOR = 0.90
FWER_TARGET = 0.05


def f1_like(rng: np.random.Generator, p: float, n: int) -> np.ndarray:
    exact = rng.random(n) < p
    partial = ~exact & (rng.random(n) >= 0.6)
    values = np.zeros(n)
    values[exact] = 1.0
    values[partial] = rng.beta(2, 2, int(partial.sum()))
    return values


def true_mean(kind: str, p: float) -> float:
    return p if kind == "binary" else p + 0.2 * (1 - p)


def coverage(datasets: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    cells = []
    for kind, methods in (("binary", BINARY_METHODS), ("f1-like", F1_METHODS)):
        for n in SIZES:
            for p in SCORES:
                truth = true_mean(kind, p)
                hits = dict.fromkeys(methods, 0)
                points = dict.fromkeys(methods, 0)
                width = dict.fromkeys(methods, 0.0)
                used: dict[str, set[str]] = {m: set() for m in methods}
                started = time.perf_counter()
                for i in range(datasets):
                    values = (rng.random(n) < p).astype(float) if kind == "binary" \
                        else f1_like(rng, p, n)
                    source = MatrixValues(values[:, None], ["m"])
                    for method in methods:
                        spec = IntervalSpec(method=method, resamples=2000, seed=seed + i)
                        interval = set_intervals(source, spec)["m"]
                        assert interval is not None
                        hits[method] += interval.low <= truth <= interval.high
                        points[method] += interval.low == interval.high
                        width[method] += interval.high - interval.low
                        used[method].add(interval.method)
                for method in methods:
                    cells.append({
                        "metric": kind, "n": n, "score": p, "true_mean": truth,
                        "method": method, "methods_used": sorted(used[method]),
                        "coverage": hits[method] / datasets, "points": points[method] / datasets,
                        "mean_width": width[method] / datasets, "datasets": datasets,
                    })  # fmt: skip
                print(f"  coverage {kind:8s} n={n:<4d} p={p:<5g} "
                      f"{time.perf_counter() - started:5.1f} s", flush=True)
    return cells


def _set(label: str, em: np.ndarray, f1: np.ndarray, groups: np.ndarray) -> ScoredSet:
    n = em.size
    values = np.column_stack([em, f1])
    column = GroupColumn(["g0", "g1", "g2"], groups.astype(np.int32))
    return ScoredSet(label, Path(label), "scores", None, [f"q{i}" for i in range(n)],
                     ("em", "f1"), values, {"group": column}, np.zeros(n, bool), [None] * n,
                     [()] * n, {})


def family_error(families: int, n: int, seed: int, permutations: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 1)
    errors = {"holm": 0, "bh": 0, "none": 0}
    rows_total = rows_starred_raw = 0
    started = time.perf_counter()
    for f in range(families):
        difficulty = rng.beta(2, 2, n)  # the chance any of the systems answers it right
        groups = rng.integers(0, 3, n)
        sets = []
        for s in range(5):
            right = (rng.random(n) < difficulty).astype(float)
            f1 = np.where(right == 1, 1.0, np.where(rng.random(n) < 0.5, 0.0,
                                                    rng.beta(2, 2, n)))
            sets.append(_set(f"s{s}", right, f1, groups))
        options = {name: CompareOptions(correction=name, permutations=permutations, seed=f,
                                        resamples=100) for name in errors}
        pairs = [compare_pair(sets[0], other, options["holm"]) for other in sets[1:]]
        for name, option in options.items():
            adjust_family(pairs, option)
            rows = [row for pair in pairs for row in pair.rows()]
            errors[name] += any(row.significant for row in rows)
            if name == "none":
                rows_total += len(rows)
                rows_starred_raw += sum(row.significant for row in rows)
        if (f + 1) % max(1, families // 10) == 0:
            print(f"  families {f + 1}/{families} ({time.perf_counter() - started:.0f} s)",
                  flush=True)
    return {
        "families": families, "n": n, "candidates": 4, "rows_per_family": rows_total // families,
        "family_wise_error": {name: count / families for name, count in errors.items()},
        "row_error_uncorrected": rows_starred_raw / rows_total, "permutations": permutations,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--families", type=int, default=1000)
    parser.add_argument("--family-n", type=int, default=500)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    print("coverage ...", flush=True)
    cells = coverage(args.datasets, args.seed)
    print("family-wise error ...", flush=True)
    family = family_error(args.families, args.family_n, args.seed, args.permutations)
    checks = []
    for cell in cells:
        if cell["method"] != "auto":
            continue
        low, high = DEFAULT_TARGET if cell["n"] >= 120 else (SMALL_N_FLOOR, 1.0)
        checks.append({"what": f"default {cell['metric']} n={cell['n']} p={cell['score']}",
                       "value": cell["coverage"], "target": [low, high],
                       "met": low <= cell["coverage"] <= high})
    fwer = family["family_wise_error"]["holm"]
    checks.append({"what": "family-wise type-I error, Holm, 4 identical candidates",
                   "value": fwer, "target": [0.0, FWER_TARGET], "met": fwer <= FWER_TARGET})
    payload = {"machine": machine(), "datasets": args.datasets, "seed": args.seed,
               "coverage": cells, "family_wise": family, "checks": checks,
               "seconds": time.perf_counter() - started}
    path = write_results("ci_coverage", payload)

    print(f"\n95% intervals, {args.datasets} datasets per cell: coverage (single points, "
          "mean width)")
    for kind, methods in (("binary", BINARY_METHODS), ("f1-like", F1_METHODS)):
        rows = []
        for n in SIZES:
            for p in SCORES:
                row: list[Any] = [f"n={n} p={p:g}"]
                for method in methods:
                    cell = next(c for c in cells if c["metric"] == kind and c["n"] == n
                                and c["score"] == p and c["method"] == method)
                    text = f"{cell['coverage']:.3f}"
                    if cell["points"]:
                        text += f" ({cell['points']:.0%} pt)"
                    row.append(text)
                rows.append(row)
        print(f"\n{kind} metric (auto = the default: "
              f"{'Wilson' if kind == 'binary' else 'BCa'})")
        print_table(["cell", *methods], rows)
    print(f"\nfamily-wise type-I error of compare, {family['families']} families of 4 identical "
          f"candidates x {family['rows_per_family'] // 4} rows, n={family['n']}:")
    print_table(["correction", "P(any star)"],
                [[name, f"{value:.3f}"] for name, value in family["family_wise_error"].items()])
    print(f"rows starred without correction: {family['row_error_uncorrected']:.3f}")
    print()
    print_table(["check", "value", "target", "met"],
                [[c["what"], f"{c['value']:.3f}", f"[{c['target'][0]}, {c['target'][1]}]",
                  "yes" if c["met"] else "NO"] for c in checks])
    print(f"\nwrote {path.relative_to(REPO)} ({payload['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
