"""Answer extraction of runs (from ``samples.jsonl``): did the strict marker-based extraction
work, did the flexible fallback rescue it, did the model abstain, or did the request fail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.analysis.categories import Dimension, Inputs, Sample
from hopscore.analysis.samples import extraction, raw_output, request_error
from hopscore.text.normalize import normalize_answer

CATEGORIES = (
    "strict extraction ok", "strict failed, flexible recovered", "no answer extracted",
    "abstained (unknown)", "request failed",
)  # fmt: skip


def abstained(record: Mapping[str, Any], final: str | None) -> bool:
    """Whether the model abstained, as the run counted it: a hopscore run records its decision
    (``abstained``; the run's table counts the same rows), so "Answer: unknown" under the
    default protocol is an answer there and here. Only a row without the field (another tool's
    run) is read from its text: an answer of "unknown"."""
    if "abstained" in record:
        return record["abstained"] is True
    return bool(final) and normalize_answer(final or "") == "unknown"


def extraction_outcome(sample: Sample) -> str | None:
    record = sample.record
    if not record:
        return None
    extracted = extraction(record)
    error = request_error(record)
    if error is not None and not raw_output(record):
        return "request failed"
    if extracted is None:
        return None
    strict, flexible = extracted
    final = strict if strict else flexible
    if abstained(record, final):
        return "abstained (unknown)"
    if strict:
        return "strict extraction ok"
    if flexible:
        return "strict failed, flexible recovered"
    return "no answer extracted"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension(
        "answer extraction",
        "How the answer was taken from the model output: after the answer marker (strict), "
        "by the flexible fallback, not at all; abstentions and failed requests apart.",
        extraction_outcome, CATEGORIES,
    )]  # fmt: skip
