"""The interval of a mean difference that inverts the exact sign-flip permutation test.

With few non-zero paired differences the bootstrap is degenerate (its replicates are a handful of
values) and its interval can exclude 0 where the exact sign-flip test cannot reject at all: two
non-zero differences out of 15 give the test p = 0.5 whatever they are. This interval is the set
of theta that the same two-sided test, run on the differences minus theta, does not reject at
1 - level (p at least 1 - level), so at theta = 0 it is exactly compare's ``permutation`` test
(zeros do not change the sign-flip sum). The shifted zeros are n - k equal values |theta|, so
their signs are pooled: the sum of a sign pattern of the k others plus (2B - (n - k)) |theta|
with B ~ Binomial(n - k, 1/2), summed exactly over the 2^k patterns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: at most this many non-zero differences get this interval instead of a bootstrap one
FLIP_INTERVAL_LIMIT = 12


def shifted_p(differences: Sequence[float], theta: float) -> float:
    """Exact two-sided sign-flip p-value of H0: the differences are symmetric about theta."""
    from scipy.special import bdtr, bdtrc

    values = np.asarray(differences, dtype=np.float64)
    others = values[values != 0] - theta
    zeros = int(values.size - np.count_nonzero(values))
    observed = abs(math.fsum(values.tolist()) - values.size * theta)
    bound = observed - 1e-9 * max(1.0, observed)
    if bound <= 0:  # every sign pattern is at least as extreme
        return 1.0
    k = others.size
    patterns = np.arange(2**k, dtype=np.int64)[:, None] >> np.arange(k, dtype=np.int64)
    sums = (1.0 - 2.0 * (patterns & 1)) @ np.abs(others)
    step = abs(theta)
    if zeros == 0 or step == 0:
        return float(np.count_nonzero(np.abs(sums) >= bound)) / float(2**k)
    # (2B - zeros) * step + sums >= bound  <=>  B >= (zeros + (bound - sums) / step) / 2
    upper = np.ceil((zeros + (bound - sums) / step) / 2 - 1e-9)
    lower = np.floor((zeros + (-bound - sums) / step) / 2 + 1e-9)
    high = np.where(upper <= 0, 1.0, np.where(upper > zeros, 0.0,
                                                bdtrc(np.clip(upper - 1, 0, zeros), zeros, 0.5)))
    low = np.where(lower < 0, 0.0, np.where(lower >= zeros, 1.0,
                                              bdtr(np.clip(lower, 0, zeros), zeros, 0.5)))
    return float(min(1.0, np.mean(high + low)))


def flip_interval(differences: Sequence[float], level: float, bounds: tuple[float, float]
                  ) -> tuple[float, float]:
    """The theta in ``bounds`` (the range the mean difference can take) that the exact sign-flip
    test does not reject at 1 - level. 0 is inside exactly when the test at theta = 0 has
    p >= 1 - level, as it is searched for from the mean outwards past 0 only when 0 is kept."""
    alpha = 1 - level
    values = list(differences)
    mean = math.fsum(values) / len(values)

    def kept(theta: float) -> bool:
        return shifted_p(values, theta) >= alpha

    zero_kept = kept(0.0)

    def edge(outer: float) -> float:
        # the last kept theta from the mean towards outer (bisection on the change)
        inner = mean
        if (outer - mean) * (0 - mean) > 0 and mean != 0:  # 0 lies on this side
            if not zero_kept:
                outer = 0.0
            else:
                inner = 0.0
        if kept(outer):
            return outer
        for _ in range(32):
            middle = (inner + outer) / 2
            if kept(middle):
                inner = middle
            else:
                outer = middle
        # an edge at 0 (shifted zeros turn into one-signed values) is found to within the
        # test's tolerance: it is 0, kept
        return 0.0 if zero_kept and abs(inner) < 1e-8 else inner

    return edge(bounds[0]), edge(bounds[1])


def mean_difference_bounds(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The range a mean difference B - A can take: that of the metric's values (0 to 1 when
    they all lie there) minus itself."""
    if a.size == 0:
        return -1.0, 1.0
    low, high = float(min(a.min(), b.min())), float(max(a.max(), b.max()))
    if low >= 0 and high <= 1:
        low, high = 0.0, 1.0
    return low - high, high - low
