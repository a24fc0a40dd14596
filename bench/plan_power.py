"""Whether ``hopscore plan``'s paired n is the smallest n with the requested exact power, and
whether the power stays there for larger n (it is not monotone in n in general).

Usage (from the repository root)::

    python bench/plan_power.py

For 144 plans (baselines 0.3, 0.62, 0.85; delta 2, 3, 5, 10 points; alpha 0.05 and 0.05/3;
power 0.8 and 0.9; independent errors or a discordance of 0.1 or 0.3) it computes the exact
power of McNemar's exact test at every n from half to 1.5 times the printed n (P(reject | m)
once per plan, then the binomial weights of m per n) and counts the n on the wrong side of the
target and the n whose power is below the previous n's. Prints one line.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
from scipy.stats import binom

from hopscore.inference.exact_power import critical_counts, reject_given_discordant
from hopscore.inference.power import plan_rows


def main() -> None:
    start = time.perf_counter()
    plans = checked = drops = 0
    wrong: list[tuple[float, ...]] = []
    for base, alpha, power, discordance in itertools.product(
            (0.3, 0.62, 0.85), (0.05, 0.05 / 3), (0.8, 0.9), (None, 0.1, 0.3)):
        for row in plan_rows(base, [0.02, 0.03, 0.05, 0.1], discordance=discordance, sd=None,
                             alpha=alpha, power=power):
            plans += 1
            assert row.paired is not None and row.discordance is not None
            n, psi = row.paired, max(row.discordance, row.delta)
            ms = np.arange(n + n // 2 + 1)
            favour = (1 + row.delta / psi) / 2
            reject = reject_given_discordant(ms, critical_counts(ms, alpha), favour)
            previous = -1.0
            for k in range(max(1, n // 2), n + n // 2 + 1):
                sd = math.sqrt(k * psi * (1 - psi))
                low = max(0, int(k * psi - 12 * sd - 5))
                high = min(k, int(k * psi + 12 * sd + 5))
                value = float(binom.pmf(ms[low:high + 1], k, psi) @ reject[low:high + 1])
                checked += 1
                drops += value < previous - 1e-12
                previous = value
                if (k < n) == (value >= power):
                    wrong.append((base, alpha, power, row.delta, n, k, value))
    print(f"{plans} plans, {checked:,} values of n: {len(wrong)} on the wrong side of the "
          f"target, {drops} falls in power from one n to the next "
          f"({time.perf_counter() - start:.0f} s){wrong[:5] if wrong else ''}")


if __name__ == "__main__":
    main()
