"""Answer extraction of runs (from ``samples.jsonl``): did the strict marker-based extraction
work, did the flexible fallback rescue it, did the model abstain, or did the request fail."""

from __future__ import annotations

from hopscore.analysis.categories import Dimension, Inputs, Sample
from hopscore.analysis.samples import extraction, raw_output, request_error
from hopscore.text import normalize_answer

CATEGORIES = (
    "strict extraction ok", "strict failed, flexible recovered", "no answer extracted",
    "abstained (unknown)", "request failed",
)  # fmt: skip


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
    if record.get("abstained") is True or (final and normalize_answer(final) == "unknown"):
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
