"""Agreement of two binary raters (an LLM judge and exact match): raw agreement and Cohen's
kappa, with intervals (pure Python).

Raw agreement is a proportion and gets Wilson's interval. Kappa gets the large-sample interval
kappa +- z * se with the Fleiss, Cohen and Everitt (1969) standard error (the one statsmodels'
``cohens_kappa`` reports as ``std_kappa``), cut to [-1, 1]. Kappa is undefined (None, with
the reason in :attr:`Agreement.kappa_undefined`) when either rater gives one answer to every
example: the formula then gives 0 whatever the agreement (observed and expected agreement are
the same number) with a standard error of 0 and a point interval, or 0/0 when both are constant;
statsmodels' ``cohens_kappa`` gives its test statistic as NaN there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hopscore.inference.ci import wilson, z_quantile


@dataclass(frozen=True, slots=True)
class Agreement:
    """The 2x2 table of judge (rows) against exact match (columns), and what follows from it."""

    both_right: int
    judge_only: int  # judge right, exact match wrong
    match_only: int  # judge wrong, exact match right
    both_wrong: int
    level: float = 0.95

    @property
    def n(self) -> int:
        return self.both_right + self.judge_only + self.match_only + self.both_wrong

    @property
    def observed(self) -> float:
        return (self.both_right + self.both_wrong) / self.n

    @property
    def expected(self) -> float:
        n = self.n
        judge = (self.both_right + self.judge_only) / n
        match = (self.both_right + self.match_only) / n
        return judge * match + (1 - judge) * (1 - match)

    def agreement_interval(self) -> tuple[float, float]:
        return wilson(self.both_right + self.both_wrong, self.n, self.level)

    @property
    def kappa_undefined(self) -> str | None:
        """Why kappa is undefined here (a rater gave one answer to every example), or None."""
        n = self.n
        if n == 0:
            return "no examples"
        constant = []
        for rater, right in (("the judge", self.both_right + self.judge_only),
                             ("exact match", self.both_right + self.match_only)):
            if right in (0, n):
                constant.append(f"{rater} said {'right' if right else 'wrong'} to all {n}")
        if not constant:
            return None
        return " and ".join(constant) + " (kappa needs both raters to vary)"

    @property
    def kappa(self) -> float | None:
        if self.kappa_undefined is not None:
            return None
        return (self.observed - self.expected) / (1 - self.expected)

    def kappa_text(self) -> str:
        """``0.412 [0.301, 0.523]``, or ``undefined: <why>``."""
        interval = self.kappa_interval()
        if self.kappa is None or interval is None:
            return f"undefined: {self.kappa_undefined}"
        return f"{self.kappa:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"

    def kappa_se(self) -> float | None:
        """Fleiss-Cohen-Everitt standard error of kappa."""
        kappa = self.kappa
        if kappa is None:
            return None
        n = self.n
        table = [[self.both_right, self.judge_only], [self.match_only, self.both_wrong]]
        rows = [sum(r) / n for r in table]
        cols = [(table[0][j] + table[1][j]) / n for j in range(2)]
        pe = self.expected
        term_a = sum(table[i][i] / n * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2
                     for i in range(2))
        term_b = (1 - kappa) ** 2 * sum(table[i][j] / n * (cols[i] + rows[j]) ** 2
                                        for i in range(2) for j in range(2) if i != j)
        term_c = (kappa - pe * (1 - kappa)) ** 2
        variance = (term_a + term_b - term_c) / (1 - pe) ** 2 / n
        return math.sqrt(max(0.0, variance))

    def kappa_interval(self) -> tuple[float, float] | None:
        kappa, se = self.kappa, self.kappa_se()
        if kappa is None or se is None:
            return None
        half = z_quantile(self.level) * se
        return max(-1.0, kappa - half), min(1.0, kappa + half)

    def to_json(self) -> dict[str, Any]:
        low, high = self.agreement_interval() if self.n else (None, None)
        k_interval = self.kappa_interval()
        return {
            "n": self.n, "both_right": self.both_right, "judge_only_right": self.judge_only,
            "match_only_right": self.match_only, "both_wrong": self.both_wrong,
            "agreement": self.observed if self.n else None,
            "agreement_ci": {"method": "wilson", "level": self.level, "low": low, "high": high},
            "kappa": self.kappa, "kappa_se": self.kappa_se(),
            "kappa_undefined": self.kappa_undefined,
            "kappa_ci": None if k_interval is None else {
                "method": "asymptotic (Fleiss-Cohen-Everitt)", "level": self.level,
                "low": k_interval[0], "high": k_interval[1]},
        }  # fmt: skip


def agreement_of(pairs: list[tuple[bool, bool]], level: float = 0.95) -> Agreement:
    """From (judge right, exact match right) pairs."""
    counts = [0, 0, 0, 0]
    for judge, match in pairs:
        counts[(0 if judge else 2) + (0 if match else 1)] += 1
    both_right, judge_only, match_only, both_wrong = counts
    return Agreement(both_right, judge_only, match_only, both_wrong, level)
