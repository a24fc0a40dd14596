"""Confidence calibration of the system under test: expected calibration error (ECE) and the
reliability data of a reliability diagram (pure; numpy only).

A system that states a confidence c in [0, 1] with each answer is *calibrated* when, among the
answers it gives with confidence about c, a share c is correct. The answers are put in bins by
confidence, and each bin compares its mean confidence with its accuracy:

* ``scheme="width"`` (the default): ``bins`` equal-width bins ``[0, 1/B), [1/B, 2/B), ...,
  [(B-1)/B, 1]`` (the last one closed, so a confidence of 1 falls in it);
* ``scheme="mass"``: ``bins`` bins of (nearly) equal counts over the answers sorted by
  confidence (``numpy.array_split``; equal confidences may straddle two bins).

``ECE = sum_b (n_b / n) |accuracy_b - confidence_b|`` over the non-empty bins; ``MCE`` is the
largest gap of a non-empty bin. :attr:`Reliability.binning` states the binning in words, to
print beside the number (an ECE means little without it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SCHEMES = ("width", "mass")


@dataclass(frozen=True, slots=True)
class Bin:
    """One bin of the reliability diagram (``n == 0``: empty, no accuracy)."""

    low: float
    high: float
    n: int
    confidence: float | None
    accuracy: float | None

    @property
    def gap(self) -> float | None:
        if self.confidence is None or self.accuracy is None:
            return None
        return self.accuracy - self.confidence

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "n": self.n, "confidence": self.confidence,
                "accuracy": self.accuracy, "gap": self.gap}


@dataclass(frozen=True, slots=True)
class Reliability:
    """ECE, MCE and the bins they come from."""

    bins: tuple[Bin, ...]
    n: int
    scheme: str
    ece: float
    mce: float

    @property
    def binning(self) -> str:
        if self.scheme == "width":
            return f"{len(self.bins)} equal-width bins over [0, 1]"
        return f"{len(self.bins)} equal-count bins over the sorted confidences"

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "scheme": self.scheme, "binning": self.binning, "ece": self.ece,
                "mce": self.mce, "bins": [b.to_json() for b in self.bins]}


def reliability(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10,
                scheme: str = "width") -> Reliability:
    """ECE and the reliability bins of answers with stated ``confidences`` in [0, 1]."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {', '.join(SCHEMES)} (got {scheme!r})")
    if bins < 1:
        raise ValueError("bins must be at least 1")
    conf = np.asarray(confidences, dtype=float)
    right = np.asarray(correct, dtype=bool)
    if conf.shape != right.shape or conf.ndim != 1:
        raise ValueError("confidences and correct must be two lists of the same length")
    if conf.size == 0:
        raise ValueError("no answers with a confidence")
    if not np.all(np.isfinite(conf)) or conf.min() < 0 or conf.max() > 1:
        raise ValueError("confidences must lie in [0, 1] (a percentage must be divided by 100)")
    if scheme == "width":
        edges = np.linspace(0.0, 1.0, bins + 1)
        index = np.minimum((conf * bins).astype(int), bins - 1)
        groups = [np.flatnonzero(index == b) for b in range(bins)]
        bounds = [(float(edges[b]), float(edges[b + 1])) for b in range(bins)]
    else:
        order = np.argsort(conf, kind="stable")
        groups = [g for g in np.array_split(order, bins)]
        bounds = [(float(conf[g].min()), float(conf[g].max())) if g.size else (np.nan, np.nan)
                  for g in groups]
    out = []
    ece = mce = 0.0
    for (low, high), members in zip(bounds, groups, strict=True):
        if members.size == 0:
            out.append(Bin(low, high, 0, None, None))
            continue
        mean_conf = float(conf[members].mean())
        accuracy = float(right[members].mean())
        gap = abs(accuracy - mean_conf)
        ece += members.size / conf.size * gap
        mce = max(mce, gap)
        out.append(Bin(low, high, int(members.size), mean_conf, accuracy))
    return Reliability(tuple(out), int(conf.size), scheme, ece, mce)
