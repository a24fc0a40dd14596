"""Judge verdicts bound to the run they judge, and their agreement with exact match.

A ``hopscore judge`` output file (``--judge FILE`` of ``report`` and ``analyze``) is joined to
a run by example id, and only to a run whose predictions it judged: every joined row's
``response`` must equal the run's prediction for that example (both stripped; no prediction
reads as ""). A file that judged other answers is refused with the number of rows that differ
and the first of them, never silently attached.

Agreement between the judge and the run's exact-match metric (the first of
:data:`MATCH_METRICS` it has) is raw agreement and Cohen's kappa with intervals, overall and
per group (:mod:`hopscore.inference.agreement`). Verdicts come from bound judge rows, or from
a ``judge_accuracy`` metric (``hopscore score --judge``). Rows without a decision (a judge
error, an unparsed reply) are left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.analysis.scored import ID_FIELDS, ScoredSet
from hopscore.analysis.summary import group_names, group_rows
from hopscore.errors import HopscoreError, InputError
from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl
from hopscore.inference.agreement import Agreement, agreement_of

MATCH_METRICS = ("em", "exact_match", "accuracy", "label_accuracy")
JUDGE_METRICS = ("judge_accuracy", "judge_correct")
MAX_SHOWN = 3

JudgeRows = dict[str, dict[str, Any]]


def read_judge_rows(path: Path) -> JudgeRows:
    """A judge output file's rows by id (located errors for a row without an id)."""
    rows: JudgeRows = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        name = next((n for n in ID_FIELDS if record.data.get(n) not in (None, "")), None)
        if name is None:
            raise InputError(where, f"judge row has no id ({', '.join(ID_FIELDS)})")
        rows[record.id(name)] = record.data
    if not rows:
        raise InputError(path, "holds no judge rows")
    return rows


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ("" if value is None else str(value))


@dataclass(frozen=True, slots=True)
class Binding:
    """How a judge file's rows line up with one run."""

    common: int
    differing: list[tuple[str, str, str]]  # (id, judged response, the run's prediction)
    unchecked: int  # joined rows without a 'response' field

    @property
    def bound(self) -> bool:
        return self.common > 0 and not self.differing and not self.unchecked

    def describe(self, label: str) -> str:
        if self.common == 0:
            return f"{label}: no example id in common"
        if self.unchecked:
            return (f"{label}: {self.unchecked} of {self.common} joined rows have no 'response' "
                    "to check against the run's prediction")
        shown = "; ".join(f"{i!r}: judged {judged!r}, {label} predicted {predicted!r}"
                          for i, judged, predicted in self.differing[:MAX_SHOWN])
        return (f"{label}: {len(self.differing)} of {self.common} rows judged another response "
                f"than the run's prediction ({shown})")


def binding(scored: ScoredSet, rows: Mapping[str, Mapping[str, Any]]) -> Binding:
    common = unchecked = 0
    differing: list[tuple[str, str, str]] = []
    index = scored.index
    for example_id, row in rows.items():
        position = index.get(example_id)
        if position is None:
            continue
        common += 1
        if "response" not in row:
            unchecked += 1
            continue
        judged, predicted = _text(row.get("response")), _text(scored.predictions[position])
        if judged != predicted:
            differing.append((example_id, judged[:80], predicted[:80]))
    return Binding(common, differing, unchecked)


def bind_judge_files(sets: Sequence[ScoredSet], files: Sequence[Path]
                     ) -> list[JudgeRows | None]:
    """Per scored set, the rows of the judge file that judged its predictions (or None).

    Each file goes to every run whose predictions it judged; a file that judged none of the
    runs is an error naming, for each run, how many rows differ.
    """
    out: list[JudgeRows | None] = [None] * len(sets)
    for path in files:
        rows = read_judge_rows(path)
        results = [binding(scored, rows) for scored in sets]
        matched = [i for i, result in enumerate(results) if result.bound]
        if not matched:
            reasons = "\n  ".join(r.describe(s.label) for s, r in zip(sets, results, strict=True))
            raise HopscoreError(
                f"--judge {path} did not judge the predictions of "
                + ("this run" if len(sets) == 1 else "any of the runs")
                + " (the response of every joined row must equal the run's prediction):\n  "
                + reasons)
        for i in matched:
            if out[i] is not None:
                raise HopscoreError(f"two --judge files judged {sets[i].label}; give one")
            out[i] = rows
    return out


def verdict(scored: ScoredSet, row: int, judge: Mapping[str, Mapping[str, Any]] | None
            ) -> bool | None:
    """The judge's decision on one example: True / False, None when it did not decide."""
    for name in JUDGE_METRICS:
        if name in scored.names:
            return bool(scored.values[row, scored.names.index(name)] >= 1)
    if judge is None:
        return None
    record = judge.get(scored.ids[row])
    if record is None or record.get("error") or record.get("parse_ok") is False:
        return None
    decided = record.get("correct")
    return decided if isinstance(decided, bool) else None


@dataclass(slots=True)
class AgreementTable:
    """Judge vs exact match over a run, overall and per group."""

    metric: str
    overall: Agreement
    groups: dict[str, Agreement] = field(default_factory=dict)
    undecided: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"compared_with": self.metric, "undecided": self.undecided,
                "overall": self.overall.to_json(),
                "groups": {name: a.to_json() for name, a in self.groups.items()}}


def agreement_table(scored: ScoredSet, judge: Mapping[str, Mapping[str, Any]] | None,
                    level: float = 0.95) -> AgreementTable | None:
    """Raw agreement and kappa between the judge and exact match, or None when the run has
    no judge verdicts or no exact-match metric."""
    metric = next((m for m in MATCH_METRICS if m in scored.names), None)
    if metric is None:
        return None
    column = scored.names.index(metric)
    decided: list[tuple[int, bool, bool]] = []
    undecided = 0
    for row in range(scored.n):
        judged = verdict(scored, row, judge)
        if judged is None:
            undecided += judge is not None and scored.ids[row] in judge
            continue
        decided.append((row, judged, bool(scored.values[row, column] >= 1)))
    if not decided:
        return None
    table = AgreementTable(metric, agreement_of([(j, m) for _, j, m in decided], level),
                           undecided=undecided)
    by_row = {row: (j, m) for row, j, m in decided}
    for name, key, label in group_names(scored):
        rows = group_rows(scored, key, label)
        pairs = [by_row[r] for r in rows.tolist() if r in by_row]
        if pairs:
            table.groups[name] = agreement_of(pairs, level)
    return table
