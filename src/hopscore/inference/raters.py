"""Agreement among several raters (the judges of a jury) on nominal labels (pure Python).

* :func:`fleiss_kappa`: Fleiss' (1971) kappa from a subjects x categories table of counts, every
  subject rated by the same number of raters. ``P_i = (sum_j n_ij^2 - r) / (r (r - 1))``,
  ``p_j = sum_i n_ij / (N r)``, ``kappa = (mean P_i - sum p_j^2) / (1 - sum p_j^2)``: the
  number statsmodels' ``fleiss_kappa(table, method="fleiss")`` gives.
* :func:`krippendorff_alpha`: Krippendorff's alpha for nominal data from the labels each unit
  got (missing labels allowed): the coincidence matrix counts, within each unit with ``m >= 2``
  labels, every ordered pair of labels from different raters with weight ``1 / (m - 1)``;
  ``alpha = 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k``. Units with fewer than two
  labels are not pairable and left out. The number the ``krippendorff`` package gives with
  ``level_of_measurement="nominal"``.

Neither is defined everywhere: with one category used throughout (expected disagreement 0) or
fewer than two ratings of any subject, :attr:`Coefficient.value` is None and
:attr:`Coefficient.undefined` says why; a NaN is never returned.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Coefficient:
    """An agreement coefficient, or why it is undefined."""

    name: str
    value: float | None
    undefined: str | None = None
    #: subjects (Fleiss) or pairable units (Krippendorff) it was computed over
    units: int = 0

    def text(self) -> str:
        return f"{self.value:.3f}" if self.value is not None else f"undefined: {self.undefined}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "undefined": self.undefined,
                "units": self.units}


def fleiss_kappa(table: Sequence[Sequence[int]]) -> Coefficient:
    """Fleiss' kappa of ``table[i][j]``: how many raters put subject i in category j."""
    name = "fleiss_kappa"
    rows = [list(map(int, row)) for row in table]
    if not rows:
        return Coefficient(name, None, "no subjects")
    if any(value < 0 for row in rows for value in row):
        raise ValueError("fleiss_kappa: counts must not be negative")
    raters = {sum(row) for row in rows}
    if len(raters) > 1:
        raise ValueError("fleiss_kappa: every subject needs the same number of ratings "
                         f"(found {sorted(raters)})")
    r = raters.pop()
    if r < 2:
        return Coefficient(name, None, f"{r} rating per subject: agreement needs two raters",
                           len(rows))
    subjects = len(rows)
    categories = len(rows[0])
    if any(len(row) != categories for row in rows):
        raise ValueError("fleiss_kappa: every row needs the same number of categories")
    totals = [sum(row[j] for row in rows) for j in range(categories)]
    expected = sum((t / (subjects * r)) ** 2 for t in totals)
    if expected >= 1 - 1e-15:
        return Coefficient(name, None, "every rating is in one category: expected agreement "
                           "is 1, so chance-corrected agreement is 0/0", subjects)
    observed = sum((sum(v * v for v in row) - r) / (r * (r - 1)) for row in rows) / subjects
    return Coefficient(name, (observed - expected) / (1 - expected), units=subjects)


def fleiss_table(labels: Sequence[Sequence[Hashable]],
                 categories: Sequence[Hashable] | None = None) -> list[list[int]]:
    """The subjects x categories count table of per-subject label lists (complete ratings)."""
    cats = list(categories) if categories is not None else sorted(
        {label for row in labels for label in row}, key=repr)
    index = {c: i for i, c in enumerate(cats)}
    out = []
    for row in labels:
        counts = [0] * len(cats)
        for label in row:
            counts[index[label]] += 1
        out.append(counts)
    return out


def _missing(value: Hashable | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> Coefficient:
    """Nominal Krippendorff's alpha of ``units[u]``: the labels unit u got (None or NaN:
    missing). Rows are units, columns raters (the ``krippendorff`` package takes the
    transpose)."""
    name = "krippendorff_alpha"
    coincidence: dict[tuple[Hashable, Hashable], float] = {}
    pairable = 0
    for unit in units:
        values = [v for v in unit if not _missing(v)]
        m = len(values)
        if m < 2:
            continue
        pairable += 1
        counts = Counter(values)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_k - 1) if c == k else n_c * n_k
                if pairs:
                    coincidence[c, k] = coincidence.get((c, k), 0.0) + pairs / (m - 1)
    if not pairable:
        return Coefficient(name, None, "no unit has two labels: nothing to compare")
    margins: dict[Hashable, float] = {}
    for (c, _), value in coincidence.items():
        margins[c] = margins.get(c, 0.0) + value
    total = sum(margins.values())
    observed = sum(v for (c, k), v in coincidence.items() if c != k)
    expected = sum(margins[c] * margins[k] for c in margins for k in margins if c != k)
    if expected <= 0:
        return Coefficient(name, None, "every paired label is the same category: expected "
                           "disagreement is 0, so alpha is 0/0", pairable)
    return Coefficient(name, 1 - (total - 1) * observed / expected, units=pairable)
