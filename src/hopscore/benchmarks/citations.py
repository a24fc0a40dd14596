"""What a benchmark declares about the parts of a prediction a model reply gives as citations.

``hopscore score --from lm-eval|inspect`` (:mod:`hopscore.harness`) reads each reply as
``hopscore run`` does; a part that the replies never cite scores 0 in the metrics that need it,
and the benchmark's :class:`CitedPart` lets the warning say what a reply should hold.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CitedPart:
    """A prediction part read from a reply's citations (``Benchmark.cited_parts``)."""

    #: the prediction's attribute (empty or None: the reply cited nothing)
    part: str
    #: the metrics that score 0 without it, for the warning ("supporting-fact and joint metrics")
    metrics: str
    #: what the reply should hold to give it
    wanted: str
