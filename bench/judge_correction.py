"""Bias and coverage of the judge-corrected accuracy (Rogan-Gladen), by simulation.

Usage (from the repository root)::

    python bench/judge_correction.py [--reps 4000] [--seed 0] [--markdown FILE]

A system of true accuracy ``acc`` answers ``n = 200`` evaluated rows; a judge of sensitivity
``se`` and specificity ``sp`` grades them, so the number it marks correct is
Binomial(200, acc se + (1 - acc)(1 - sp)). A separate calibration slice of ``m`` rows from the
same population is labelled by a human (Binomial(m, acc) correct) and graded by the same judge.
For every cell of m in {50, 100, 200}, se and sp in {0.7, 0.85, 0.99} and acc in {0.1, 0.3,
0.5, 0.7, 0.9}, ``--reps`` data sets are drawn and the code ``hopscore`` runs
(:func:`hopscore.inference.judge_error.adjusted_wald`, 95%) gives the estimate and interval.

Reported per cell: how often the judge is declared too weak to correct (``weak``); the bias of
the corrected estimate before it is cut to [0, 1] (:func:`rogan_gladen`) over the other data
sets with its Monte Carlo standard error (``*``: more than 3 of them), and of the estimate as
reported (cut to [0, 1]); the coverage of the true accuracy by the corrected interval, where a
data set declared too weak counts as the whole [0, 1] (``cover``: nothing narrower is
honest then) and among the corrected ones only (``cover_c``); the mean width; and the
coverage of the raw judge accuracy's Wilson interval (the raw accuracy estimates
acc se + (1 - acc)(1 - sp), not acc). The corrected coverage must be at least 0.93 in every
cell.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from itertools import product
from pathlib import Path

import numpy as np

from harness import REPO

sys.path.insert(0, str(REPO / "src"))

from hopscore.inference.ci import z_quantile
from hopscore.inference.judge_error import adjusted_wald, paired_wald, rogan_gladen
from hopscore.inference.two_phase import two_phase

N = 200
CALIBRATION = (50, 100, 200)
RATES = (0.7, 0.85, 0.99)
ACCURACIES = (0.1, 0.3, 0.5, 0.7, 0.9)
TARGET = 0.93
LEVEL = 0.95


def draw(rng: np.random.Generator, reps: int, m: int, se: float, sp: float, acc: float
         ) -> tuple[np.ndarray, ...]:
    """``reps`` data sets: the judge's passes of N rows, and a labelled slice of m rows."""
    judged = rng.binomial(N, acc * se + (1 - acc) * (1 - sp), reps)
    positives = rng.binomial(m, acc, reps)
    true_pos = rng.binomial(positives, se)
    true_neg = rng.binomial(m - positives, sp)
    return judged, positives, true_pos, true_neg


def summarise(acc: float, estimate: np.ndarray, unclipped: np.ndarray, low: np.ndarray,
              high: np.ndarray, ok: np.ndarray) -> dict[str, float]:
    """Bias (over the data sets given a corrected value) and coverage (the rest as [0, 1])."""
    covered = ok & (low <= acc) & (acc <= high)
    errors = unclipped[ok] - acc
    clipped = estimate[ok] - acc
    used = max(int(ok.sum()), 1)
    return {
        "weak": float(1 - ok.mean()),
        "bias": float(errors.mean()) if errors.size else float("nan"),
        "bias_se": float(errors.std(ddof=1) / np.sqrt(used)) if errors.size > 1 else float("nan"),
        "sd": float(errors.std(ddof=1)) if errors.size > 1 else float("nan"),
        "clipped_bias": float(clipped.mean()) if clipped.size else float("nan"),
        "cover": float((covered | ~ok).mean()),
        "cover_corrected": float(covered.sum() / used),
        "width": float((high - low)[ok].mean()) if ok.any() else float("nan"),
    }


def raw_cover(judged: np.ndarray, acc: float) -> float:
    """Coverage of the true accuracy by the raw judge accuracy's Wilson interval."""
    z = z_quantile(LEVEL)
    q = judged / N
    centre = (judged + z * z / 2) / (N + z * z)
    half = z / (N + z * z) * np.sqrt(N * q * (1 - q) + z * z / 4)
    return float(((centre - half <= acc) & (acc <= centre + half)).mean())


def cell(rng: np.random.Generator, reps: int, m: int, se: float, sp: float, acc: float
         ) -> dict[str, float]:
    """Rogan-Gladen (the calibration carried over from other rows of the same population)."""
    judged, positives, true_pos, true_neg = draw(rng, reps, m, se, sp, acc)
    estimate, low, high, youden_low = adjusted_wald(
        judged, N, true_pos, positives, true_neg, m - positives, LEVEL)
    ok = (youden_low > 0) & ~np.isnan(estimate)
    unclipped = rogan_gladen(judged, N, true_pos, positives, true_neg, m - positives)
    return {**summarise(acc, estimate, unclipped, low, high, ok),
            "raw_cover": raw_cover(judged, acc)}


def two_phase_cell(rng: np.random.Generator, reps: int, m: int, se: float, sp: float,
                   acc: float) -> dict[str, float]:
    """Two-phase: the labelled rows a random slice of the judged population; the judge's pass
    share from the N evaluated rows, P(correct | passed / failed) from the slice."""
    judged, positives, true_pos, true_neg = draw(rng, reps, m, se, sp, acc)
    false_neg, false_pos = positives - true_pos, m - positives - true_neg
    estimate, low, high = two_phase(judged, N, true_pos, false_neg, false_pos, true_neg, LEVEL)
    ok = ~np.isnan(estimate)
    return {**summarise(acc, estimate, estimate, low, high, ok),
            "raw_cover": raw_cover(judged, acc)}


PAIRS = ((0.5, 0.5), (0.4, 0.5), (0.2, 0.35), (0.7, 0.8))
SHARED = 0.7  # share of rows where B's correctness is A's (the rest independent)


def paired_cell(rng: np.random.Generator, reps: int, m: int, rate: float, acc_a: float,
                acc_b: float) -> dict[str, float]:
    """Two systems on the same n rows, one judge (se = sp = rate), one shared calibration."""
    u = rng.random((reps, N))
    right_a = u < acc_a
    own = rng.random((reps, N))
    right_b = np.where(rng.random((reps, N)) < SHARED, u < acc_b, own < acc_b)
    # B's rows tied to A's use the same u: a true accuracy of acc_b either way

    def judged(right: np.ndarray) -> np.ndarray:
        return np.where(right, rng.random(right.shape) < rate, rng.random(right.shape) > rate)

    pass_a, pass_b = judged(right_a), judged(right_b)
    a_only = (pass_a & ~pass_b).sum(axis=1)
    b_only = (pass_b & ~pass_a).sum(axis=1)
    positives = rng.binomial(m, (acc_a + acc_b) / 2, reps)
    true_pos = rng.binomial(positives, rate)
    true_neg = rng.binomial(m - positives, rate)
    estimate, low, high, youden_low = paired_wald(a_only, b_only, N, true_pos, positives,
                                                  true_neg, m - positives, LEVEL)
    ok = (youden_low > 0) & ~np.isnan(estimate)
    truth = acc_b - acc_a
    covered = ~ok | ((low <= truth) & (truth <= high))
    # the two corrected accuracies' intervals combined as if independent
    ea, la, ha, _ = adjusted_wald(pass_a.sum(axis=1), N, true_pos, positives, true_neg,
                                  m - positives, LEVEL)
    eb, lb, hb, _ = adjusted_wald(pass_b.sum(axis=1), N, true_pos, positives, true_neg,
                                  m - positives, LEVEL)
    half = np.sqrt(((ha - la) / 2) ** 2 + ((hb - lb) / 2) ** 2)
    naive = ~ok | ((eb - ea - half <= truth) & (truth <= eb - ea + half))
    z = z_quantile(LEVEL)
    raw = (b_only - a_only) / N
    raw_half = z * np.sqrt(np.maximum(((a_only + b_only) / N - raw**2) / N, 0))
    raw_cover = (raw - raw_half <= truth) & (truth <= raw + raw_half)
    width = (high - low)[ok].mean() if ok.any() else float("nan")
    return {"weak": float(1 - ok.mean()), "cover": float(covered.mean()),
            "width": float(width), "naive_cover": float(naive.mean()),
            "naive_width": float((2 * half)[ok].mean()) if ok.any() else float("nan"),
            "raw_cover": float(raw_cover.mean())}


def paired_table(rng: np.random.Generator, reps: int) -> list[str]:
    lines = ["", "Paired difference B - A, one judge (se = sp = rate), one calibration:", "",
             "|   m | rate | acc A | acc B | weak | cover | width | indep. cover | indep. width "
             "| raw cover |",
             "|----:|-----:|------:|------:|-----:|------:|------:|-------------:|-------------:"
             "|----------:|"]
    for m, rate, (acc_a, acc_b) in product((50, 200), RATES, PAIRS):
        r = paired_cell(rng, reps, m, rate, acc_a, acc_b)
        lines.append(f"| {m:3d} | {rate:.2f} | {acc_a:5.2f} | {acc_b:5.2f} | {r['weak']:.2f} | "
                     f"{r['cover']:.3f} | {r['width']:.3f} | {r['naive_cover']:12.3f} | "
                     f"{r['naive_width']:12.3f} | {r['raw_cover']:9.3f} |")
    return lines


def table(rng: np.random.Generator, reps: int, estimator: Callable[..., dict[str, float]],
          title: str) -> tuple[list[str], list[str]]:
    """One estimator over every cell: its table lines and summary lines."""
    lines = ["", title, "",
             "|   m |   se |   sp | acc | undef |   bias (mc se)   | bias/sd | cut bias "
             "| cover | cover_c | width | raw cover |",
             "|----:|-----:|-----:|----:|------:|-----------------:|--------:|---------:"
             "|------:|--------:|------:|----------:|"]
    worst = 1.0
    flagged = []
    raw_covers = []
    ratios = []
    for m, se, sp, acc in product(CALIBRATION, RATES, RATES, ACCURACIES):
        r = estimator(rng, reps, m, se, sp, acc)
        worst = min(worst, r["cover"])
        raw_covers.append(r["raw_cover"])
        ratios.append(abs(r["bias"] / r["sd"]))
        biased = abs(r["bias"]) > 3 * r["bias_se"]
        if r["cover"] < TARGET or biased:
            flagged.append((m, se, sp, acc, r["cover"], r["bias"], r["bias_se"]))
        lines.append(
            f"| {m:3d} | {se:.2f} | {sp:.2f} | {acc:.1f} | {r['weak']:.3f} | "
            f"{r['bias']:+.4f} ({r['bias_se']:.4f}){'*' if biased else ' '} | "
            f"{r['bias'] / r['sd']:+7.3f} | "
            f"{r['clipped_bias']:+.4f} | {r['cover']:.3f} | "
            f"{r['cover_corrected']:7.3f} | {r['width']:.3f} | {r['raw_cover']:9.3f} |")
    summary = [title, f"  lowest corrected coverage: {worst:.3f} (target {TARGET})",
               f"  largest |bias| / sd of the estimate: {max(ratios):.3f}",
               f"  raw judge interval: coverage below {TARGET} in "
               f"{sum(c < TARGET for c in raw_covers)} of {len(raw_covers)} cells "
               f"(lowest {min(raw_covers):.3f}, median {float(np.median(raw_covers)):.3f})",
               f"  cells below the target or with |bias| > 3 mc se: {len(flagged)}"]
    summary += [f"    m={m} se={se} sp={sp} acc={acc}: cover {c:.3f}, bias {b:+.4f} ({s:.4f})"
                for m, se, sp, acc, c, b, s in flagged]
    return lines, summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    two_lines, two_summary = table(
        rng, args.reps, two_phase_cell,
        "Two-phase (the labelled rows a random slice of the judged rows; score --judge):")
    rg_lines, rg_summary = table(
        rng, args.reps, cell,
        "Rogan-Gladen (sensitivity and specificity carried over; compare, other runs):")
    elapsed = time.perf_counter() - started
    head = [f"cells: {len(CALIBRATION) * len(RATES) ** 2 * len(ACCURACIES)}, reps per cell: "
            f"{args.reps}, seed {args.seed}, {elapsed:.1f} s"]
    text = "\n".join([*head, *two_summary, *rg_summary, *two_lines, *rg_lines,
                      *paired_table(rng, min(args.reps, 4000))])
    print(text)
    if args.markdown is not None:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
