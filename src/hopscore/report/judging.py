"""View models of the report's judge sections (numbers formatted, nothing escaped here: the
template escapes every string):

* :func:`jury_view`: a jury's file (``hopscore jury``'s jury.jsonl): each judge's accuracy,
  the agreement among the judges (Fleiss' kappa, Krippendorff's alpha, or why each is
  undefined) and the rows where the judges disagree, the most even splits first;
* :func:`judge_kinds_view`: a ``score --judge`` directory: the benchmark's metrics beside the
  judge's accuracy, and the rows where the judge and the benchmark's match metric disagree, by
  kind (:mod:`hopscore.analysis.disagreement_kinds`), the most frequent kind first;
* :func:`confidence_view`: where the judge rows carry the confidence the graded answer stated
  (a percentage), the expected calibration error with its binning and the reliability bins
  (:mod:`hopscore.analysis.confidence`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from hopscore.analysis.confidence import reliability
from hopscore.analysis.disagreement_kinds import (
    disagreement_kind,
    kinds_by_frequency,
    order_by_frequency,
)
from hopscore.analysis.scored import ScoredSet
from hopscore.inference.raters import fleiss_kappa, fleiss_table, krippendorff_alpha
from hopscore.report.charts import reliability_diagram

#: rows listed in a disagreement table (the counts cover them all)
ROW_LIMIT = 200
#: the judge's accuracy column of a ``score --judge`` directory
JUDGE_METRIC = "judge_accuracy"
CONFIDENCE_BINS = 10


def _mark(vote: Any) -> str:
    return "✓" if vote is True else ("✗" if vote is False else "–")


def _share(right: int, n: int) -> str:
    return f"{100 * right / n:.2f}" if n else "-"


def jury_view(scored: ScoredSet) -> dict[str, Any] | None:
    """A jury's judges, their agreement and its split rows (None when ``scored`` is no jury)."""
    if scored.kind != "judge" or not scored.rows:
        return None
    rows = [(i, r["jury"]) for i, r in scored.rows.items()
            if isinstance(r.get("jury"), Mapping) and isinstance(r["jury"].get("votes"), list)]
    if not rows:
        return None
    judges: dict[str, list[int]] = {}  # label: [right, decided, rows]
    labels: list[list[bool | None]] = []
    for _, jury in rows:
        votes = [v for v in jury["votes"] if isinstance(v, Mapping)]
        said = [v.get("correct") if isinstance(v.get("correct"), bool) else None for v in votes]
        labels.append(said)
        for vote, verdict in zip(votes, said, strict=True):
            tally = judges.setdefault(str(vote.get("judge")), [0, 0, 0])
            tally[0] += verdict is True
            tally[1] += verdict is not None
            tally[2] += 1
    width = max(len(v) for v in labels)
    labels = [v + [None] * (width - len(v)) for v in labels]
    complete = [v for v in labels if all(x is not None for x in v)]
    fleiss = fleiss_kappa(fleiss_table(complete, [True, False]))
    alpha = krippendorff_alpha(labels)
    split = [(i, jury) for i, jury in rows if float(jury.get("split") or 0) > 0]
    split.sort(key=lambda r: (-float(r[1].get("split") or 0), r[1].get("input_line") or 0))
    first = rows[0][1]
    return {
        "label": scored.label, "rows": len(rows), "rule": first.get("rule"),
        "on_tie": first.get("on_tie"),
        "judges": [{"judge": name, "accuracy": _share(t[0], t[1]), "decided": t[1], "rows": t[2]}
                   for name, t in judges.items()],
        "fleiss": fleiss.text(), "fleiss_units": fleiss.units,
        "alpha": alpha.text(), "alpha_units": alpha.units,
        "split_total": len(split),
        "split": [{"id": i, "response": scored.rows[i].get("response") or "",
                   "gold": scored.rows[i].get("correct_answer") or "",
                   "split": f"{float(jury.get('split') or 0):.2f}",
                   "votes": [f"{v.get('judge')} {_mark(v.get('correct'))}"
                             for v in jury["votes"] if isinstance(v, Mapping)],
                   "verdict": _mark(scored.rows[i].get("correct")),
                   "note": jury.get("note") or ""}
                  for i, jury in split[:ROW_LIMIT]],
    }  # fmt: skip


def judge_kinds_view(scored: ScoredSet) -> dict[str, Any] | None:
    """Judge vs the match metric of a ``score --judge`` directory (None for other inputs)."""
    judge = scored.summary.get("judge") if isinstance(scored.summary, Mapping) else None
    if not isinstance(judge, Mapping) or JUDGE_METRIC not in scored.names:
        return None
    metric = judge.get("compared_with")
    if not isinstance(metric, str) or metric not in scored.names:
        return None
    judged, matched = scored.names.index(JUDGE_METRIC), scored.names.index(metric)
    found = []
    for row in range(scored.n):
        said, match = scored.values[row, judged] >= 1, scored.values[row, matched] >= 1
        if said != match and not scored.missing[row]:
            found.append((row, disagreement_kind(scored.predictions[row], scored.gold[row]),
                          bool(said)))
    found = [found[i] for i in order_by_frequency([(k, r) for _, k, r in found])]
    ci = scored.summary.get("ci") or {}
    reported = scored.reported
    names = [metric, *(m for m in reported if m not in (metric, JUDGE_METRIC)), JUDGE_METRIC]
    return {
        "label": scored.label, "metric": metric,
        "metrics": [{"metric": m, "text": f"{100 * reported[m]:.2f}",
                     "low": _pct((ci.get(m) or {}).get("low")),
                     "high": _pct((ci.get(m) or {}).get("high"))}
                    for m in names if m in reported],
        "kinds": [{"label": k.label, "count": k.count}
                  for k in kinds_by_frequency([(k, r) for _, k, r in found])],
        "total": len(found),
        "rows": [{"id": scored.ids[row], "kind": kind, "judge": _mark(right),
                  "match": _mark(not right), "prediction": scored.predictions[row] or "",
                  "gold": " | ".join(scored.gold[row])}
                 for row, kind, right in found[:ROW_LIMIT]],
    }  # fmt: skip


def _pct(value: Any) -> str | None:
    return f"{100 * value:.2f}" if isinstance(value, (int, float)) else None


def confidence_pairs(rows: Mapping[str, Mapping[str, Any]]) -> tuple[list[float], list[bool],
                                                                     int]:
    """(confidence in [0, 1], verdict) of the judge rows with a decided verdict and a stated
    confidence, read as a percentage; and how many stated one outside 0-100 (left out)."""
    confidences: list[float] = []
    correct: list[bool] = []
    outside = 0
    for row in rows.values():
        value, verdict = row.get("confidence"), row.get("correct")
        if not isinstance(verdict, bool) or isinstance(value, bool) \
                or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        if not 0 <= value <= 100:
            outside += 1
            continue
        confidences.append(float(value) / 100)
        correct.append(verdict)
    return confidences, correct, outside


def confidence_view(label: str, rows: Mapping[str, Mapping[str, Any]] | None,
                    bins: int = CONFIDENCE_BINS) -> dict[str, Any] | None:
    """ECE and the reliability diagram of the confidences in a run's judge rows (None when no
    row states one)."""
    if not rows:
        return None
    confidences, correct, outside = confidence_pairs(rows)
    if not confidences:
        return None
    result = reliability(confidences, correct, bins=bins)
    return {
        "label": label, "n": result.n, "rows": len(rows), "outside": outside,
        "ece": f"{100 * result.ece:.2f}", "mce": f"{100 * result.mce:.2f}",
        "binning": result.binning,
        "bins": [{"range": f"{100 * b.low:.0f}–{100 * b.high:.0f}", "n": b.n,
                  "confidence": "" if b.confidence is None else f"{100 * b.confidence:.1f}",
                  "accuracy": "" if b.accuracy is None else f"{100 * b.accuracy:.1f}",
                  "gap": "" if b.gap is None else f"{100 * b.gap:+.1f}"}
                 for b in result.bins],
        "chart": Markup(reliability_diagram(f"{label}: reliability", result.bins)),
    }  # fmt: skip
