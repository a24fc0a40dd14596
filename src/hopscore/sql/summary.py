"""Totals of a ``hopscore sql-match`` output: accuracy, reasons, rules, flags, extraction."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hopscore.sql.sandbox import sqlite_version


@dataclass(slots=True)
class Summary:
    """Totals over every verdict of the output file (resumed ones included)."""

    total: int = 0
    matched: int = 0
    gold_failures: int = 0
    undecided: int = 0
    resumed: int = 0
    #: rows of other settings or of changed input lines found in the output (graded again)
    regraded: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    decided_by: Counter[str] = field(default_factory=Counter)
    flags: Counter[str] = field(default_factory=Counter)
    sqlite_version: str = field(default_factory=sqlite_version)
    #: the extraction the verdicts used, and the other one (lenient or reference)
    extract: str = "reference"
    #: rows where the other extraction reads another SQL, and where that changes the verdict
    other_sql: int = 0
    other_changes: int = 0
    #: rows where the other reading ran into a limit (its verdict is unknown)
    other_undecided: int = 0
    #: rows that hit --timeout or --memory-mb while compared or held (compare_timeout,
    #: result_too_large), and rows cut to the cell and row caps
    limits: int = 0
    cut: int = 0

    def add(self, row: dict[str, Any]) -> None:
        self.total += 1
        other = row.get("other_extraction")
        if isinstance(other, dict):
            self.other_sql += 1
            if other.get("decided") is False:
                self.other_undecided += 1
            elif row.get("match") is not None and bool(other.get("match")) != bool(row["match"]):
                self.other_changes += 1
        self.limits += row.get("reason_kind") in ("compare_timeout", "result_too_large")
        self.cut += bool(row.get("truncated"))
        self.matched += bool(row.get("match"))
        self.gold_failures += bool(row.get("gold_failure"))
        self.undecided += row.get("match") is None
        self.reasons[str(row.get("reason_kind") or "unknown")] += 1
        if row.get("decided_by"):
            self.decided_by[str(row["decided_by"])] += 1
        for flag in row.get("flags") or ():
            self.flags[str(flag)] += 1

    @property
    def accuracy(self) -> float:
        """Matched over every row, as the reference (and the leaderboard) count."""
        return self.matched / self.total if self.total else 0.0

    @property
    def accuracy_without_gold_failures(self) -> float:
        graded = self.total - self.gold_failures
        return self.matched / graded if graded else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total, "matched": self.matched, "accuracy": self.accuracy,
            "gold_failures": self.gold_failures, "undecided": self.undecided,
            "accuracy_without_gold_failures": self.accuracy_without_gold_failures,
            "resumed": self.resumed, "regraded": self.regraded, "reasons": dict(self.reasons),
            "decided_by": dict(self.decided_by), "flags": dict(self.flags),
            "sqlite_version": self.sqlite_version, "extract": self.extract,
            "other_extract": "lenient" if self.extract == "reference" else "reference",
            "other_extract_reads_other_sql": self.other_sql,
            "other_extract_changes_verdict": self.other_changes,
            "other_extract_undecided": self.other_undecided, "limits_hit": self.limits,
            "rows_cut": self.cut,
        }
