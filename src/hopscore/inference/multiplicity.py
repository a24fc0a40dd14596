"""Adjusted p-values for a family of tests (``--correction holm|bh|none``).

``holm``: Holm's step-down adjustment, which controls the family-wise error rate under any
dependence between the tests (each row of one compare call shares data with the others);
``bh``: Benjamini-Hochberg's false discovery rate adjustment
(``scipy.stats.false_discovery_control``); ``none``: the raw p-values.
"""

from __future__ import annotations

from collections.abc import Sequence

from hopscore.errors import HopscoreError

CORRECTIONS = ("holm", "bh", "none")


def adjust(p_values: Sequence[float], method: str) -> list[float]:
    """Adjusted p-values, in the order given."""
    if method not in CORRECTIONS:
        raise HopscoreError(f"--correction must be one of {', '.join(CORRECTIONS)}")
    m = len(p_values)
    if m == 0 or method == "none":
        return [min(1.0, float(p)) for p in p_values]
    if method == "bh":
        from scipy.stats import false_discovery_control

        return [float(p) for p in false_discovery_control(list(p_values), method="bh")]
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))
        adjusted[i] = running
    return adjusted
