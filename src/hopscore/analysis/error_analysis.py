"""Error analysis of one input, as ``hopscore analyze`` and :func:`hopscore.analyze` do it:
the benchmark's error categories (:mod:`hopscore.analysis.categories`), judge agreement, and
any one example whole (``analyze --id``: the full answer that tables of many rows cut)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.analysis.categories import DimensionResult, Sample
from hopscore.analysis.judging import AgreementTable
from hopscore.analysis.scored import ScoredSet
from hopscore.errors import HopscoreError

#: record fields shown by :meth:`ErrorAnalysis.example`, in this order, when the row has them
RECORD_FIELDS = ("question", "raw_output", "answer", "extracted", "abstained", "finish_reason",
                 "error", "latency_s", "prompt_tokens", "completion_tokens")


@dataclass(slots=True)
class ErrorAnalysis:
    """The error categories of one input (``dimensions``), judge agreement when a judge file
    was given, and every example (``samples``) with its categories."""

    scored: ScoredSet
    samples: list[Sample]
    dimensions: list[DimensionResult]
    agreement: AgreementTable | None = None

    @property
    def source(self) -> Path:
        return self.scored.source

    @property
    def benchmark(self) -> str | None:
        return self.scored.benchmark

    def categories_of(self, example_id: str) -> dict[str, str]:
        """Each dimension's category of one example (dimensions that leave it out skipped)."""
        row = self._row(example_id)
        return {d.name: label for d in self.dimensions
                if (label := d.labels[row]) is not None}

    def example(self, example_id: str) -> dict[str, Any]:
        """One example whole: id, groups, gold, prediction, scores, the run's record fields
        (the model's full output) and its categories."""
        sample = self.samples[self._row(example_id)]
        out: dict[str, Any] = {"id": sample.id}
        if sample.record.get("question") is not None:
            out["question"] = sample.record["question"]
        out.update({"groups": dict(sample.groups), "gold": list(sample.gold),
                    "prediction": sample.prediction, "missing": sample.missing,
                    "scores": dict(sample.metrics)})
        for key in RECORD_FIELDS:
            if key not in out and sample.record.get(key) is not None:
                out[key] = sample.record[key]
        if sample.judge is not None:
            out["judge"] = {k: sample.judge.get(k) for k in
                            ("correct", "extracted_final_answer", "reasoning")}
        out["categories"] = self.categories_of(example_id)
        return out

    def _row(self, example_id: str) -> int:
        try:
            return self.scored.ids.index(example_id)
        except ValueError:
            some = ", ".join(self.scored.ids[:5])
            raise HopscoreError(f"no example with id {example_id!r} in {self.source} "
                                f"({self.scored.n} examples: {some}, ...)") from None

    def to_json(self) -> dict[str, Any]:
        return {"source": str(self.source), "benchmark": self.benchmark,
                "dimensions": [r.to_json() for r in self.dimensions],
                "judge_agreement": None if self.agreement is None else self.agreement.to_json()}


def analyze_source(source: Path, *, gold: Path | None = None, tables: Path | None = None,
                   judge: Path | None = None, examples: int = 3,
                   whole: bool = False) -> ErrorAnalysis:
    """Sort the examples of ``source`` (a score or run directory, a judge or sql-match output)
    into its benchmark's error categories. ``whole``: keep the records' texts uncut."""
    from hopscore.analysis.categories import Inputs, analyze, dimensions_for, samples_of
    from hopscore.analysis.judging import agreement_table, bind_judge_files
    from hopscore.analysis.samples import KEEP_CHARS, read_records
    from hopscore.analysis.scored import load_many

    (scored,) = load_many([source])
    limit = 10**12 if whole else KEEP_CHARS
    records = read_records(scored.samples_path, limit=limit) if scored.samples_path else None
    judge_rows = bind_judge_files([scored], [judge])[0] if judge is not None else None
    agreement = agreement_table(scored, judge_rows)
    inputs = Inputs(benchmark=scored.benchmark, gold=gold, tables=tables)
    samples = samples_of(scored, records, judge_rows)
    results = analyze(samples, dimensions_for(inputs), examples=examples)
    return ErrorAnalysis(scored, samples, results, agreement)


def text_of(value: Any) -> str:
    """A field's value as display text (strings as they are, the rest as JSON)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
