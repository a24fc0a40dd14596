"""BrowseComp-Plus error categories: what became of each query, read beside its retrieval.

* ``bcplus outcome``: right; wrong although the run retrieved every evidence document (the
  model did not use what it found); wrong with some evidence missed; wrong with none retrieved;
  the run did not complete; no run file. Only with judge verdicts (``accuracy``).
* ``bcplus evidence``: how much of the query's evidence the run retrieved (all / some / none).
"""

from __future__ import annotations

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample

NOT_COMPLETED = "run not completed"


def _outcome(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    if "accuracy" not in sample.metrics:
        return None
    if sample.metrics.get("completed", 1.0) < 1.0:
        return NOT_COMPLETED
    if sample.metrics["accuracy"] >= 1.0:
        return "right"
    recall = sample.metrics.get("evidence_recall", 0.0)
    if recall >= 1.0:
        return "wrong, all evidence retrieved"
    return "wrong, some evidence missed" if recall > 0 else "wrong, no evidence retrieved"


def _evidence(sample: Sample) -> str | None:
    if sample.missing or "evidence_recall" not in sample.metrics:
        return None if not sample.missing else NO_PREDICTION
    recall = sample.metrics["evidence_recall"]
    return "all evidence" if recall >= 1.0 else "some evidence" if recall > 0 else "no evidence"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [
        Dimension("bcplus outcome", "The judge's verdict beside what the run retrieved.",
                  _outcome, ("right", "wrong, all evidence retrieved",
                             "wrong, some evidence missed", "wrong, no evidence retrieved",
                             NOT_COMPLETED, NO_PREDICTION)),
        Dimension("bcplus evidence", "How much of the query's evidence the run retrieved.",
                  _evidence, ("all evidence", "some evidence", "no evidence", NO_PREDICTION)),
    ]
