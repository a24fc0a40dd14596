"""A run's BrowseComp-Plus summary: hopscore's figures beside what ``evaluate_run.py`` reports.

:func:`summarize` is pure: it takes the gold examples and the loaded run, and gives

* the per-query means over **every gold query** (a query without a run file scores 0 and stays
  in the denominator): accuracy, evidence and gold recall, search calls, completion;
* the calibration error of the judge's confidences with **every bin** counted
  (:func:`hopscore.benchmarks.browsecomp_plus.measures.calibration`);
* the official script's figures for the same run: accuracy, recall and tool calls over the
  **run files** whose query is in the gold, and its calibration error without the last bin
  (0 below 100 verdicts).

Which verdicts the calibration reads, in both: those of completed runs with a response, a
decided verdict and a confidence, as the official script keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.browsecomp_plus.gold import BrowseCompPlusExample
from hopscore.benchmarks.browsecomp_plus.measures import (
    BIN_SIZE,
    Calibration,
    calibration,
    set_recall,
)
from hopscore.benchmarks.browsecomp_plus.rundir import SEARCH_TOOL, BrowseCompPlusPrediction


@dataclass(frozen=True, slots=True)
class Summary:
    """Fractions are 0-1; ``calibration`` holds percents, as the official summary does."""

    n_queries: int
    n_run_files: int
    accuracy: float
    evidence_recall: float
    gold_recall: float
    search_calls: float
    completed: float
    calibration: Calibration
    official_accuracy: float
    official_recall: float
    official_tool_calls: Mapping[str, float]
    missing_ids: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_queries": self.n_queries, "n_run_files": self.n_run_files,
            "accuracy": self.accuracy, "evidence_recall": self.evidence_recall,
            "gold_recall": self.gold_recall, "search_calls": self.search_calls,
            "completed": self.completed,
            "calibration_error": self.calibration.error,
            "calibration_bins": [{"n": b.n, "confidence": b.confidence,
                                  "accuracy": b.accuracy} for b in self.calibration.bins],
            "calibration_verdicts": self.calibration.n,
            "official": {"accuracy": self.official_accuracy, "recall": self.official_recall,
                         "tool_calls": dict(self.official_tool_calls),
                         "calibration_error": self.calibration.official},
            "missing_ids": list(self.missing_ids),
        }  # fmt: skip


def summarize(examples: Iterable[BrowseCompPlusExample],
              predictions: Mapping[str, BrowseCompPlusPrediction],
              bin_size: int = BIN_SIZE) -> Summary:
    """The summary of one run (module docstring); ``predictions`` by query id."""
    gold = list(examples)
    if not gold:
        raise ValueError("no gold queries")
    present = [(e, predictions[e.id]) for e in gold if e.id in predictions]
    correct = [p.correct for _, p in present]
    evidence = [set_recall(p.retrieved, e.evidence_qrels()) for e, p in present]
    golds = [set_recall(p.retrieved, e.gold_qrels()) for e, p in present]
    tools: dict[str, int] = {}
    for _, p in present:
        for name, count in p.tool_calls:
            tools[name] = tools.get(name, 0) + count
    pairs = [(p.verdict.confidence, bool(p.verdict.correct)) for _, p in present
             if p.answer_text() is not None and p.verdict is not None
             and p.verdict.correct is not None and p.verdict.confidence is not None]
    n, m = len(gold), len(present)
    return Summary(
        n_queries=n, n_run_files=m,
        accuracy=sum(correct) / n, evidence_recall=sum(evidence) / n, gold_recall=sum(golds) / n,
        search_calls=sum(p.calls(SEARCH_TOOL) for _, p in present) / n,
        completed=sum(p.completed for _, p in present) / n,
        calibration=calibration(pairs, bin_size),
        official_accuracy=sum(correct) / m if m else 0.0,
        official_recall=sum(evidence) / m if m else 0.0,
        official_tool_calls={name: count / m for name, count in sorted(tools.items())} if m
        else {},
        missing_ids=tuple(e.id for e in gold if e.id not in predictions),
    )

