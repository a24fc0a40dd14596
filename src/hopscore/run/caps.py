"""The size caps of a model run's sample rows (``samples.jsonl``), on :mod:`hopscore.files.rowcap`.

A reply is read (its answer extracted) whole; the row keeps its first :data:`MAX_CELL_CHARS`
characters, and the prediction is made from what the row keeps, so the end of a run (and a
resumed run) reads the same text again: nothing cut is needed to resume.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hopscore.files.rowcap import cap_row, clip_text, fitting_line

#: Caps of a sample row: characters of one text (a reply, a prompt message, a chain's step),
#: bytes of the whole line.
MAX_CELL_CHARS = 200_000
MAX_ROW_BYTES = 4_000_000
#: What the end of a run, a resume and the methods table read: cut to MAX_CELL_CHARS, never
#: replaced by a note.
KEPT = ("run_key", "id", "attempt", "raw_output", "answer", "abstained", "mcr_score", "error",
        "extracted", "retrieved", "evidence_ids", "methods", "truncated", "finish_reason",
        "cached", "prompt_tokens", "completion_tokens", "thinking")


def cap_sample(row: dict[str, Any], kept: Collection[str] = KEPT) -> dict[str, Any]:
    """A sample row within the caps, marked ``row_truncated`` with ``truncated_fields`` when
    something was cut (``truncated`` already says the reply was cut at max_tokens); fields
    in ``kept`` are only cut a text at a time (:func:`hopscore.files.rowcap.cap_row`)."""
    out, cut = cap_row(row, MAX_CELL_CHARS, MAX_ROW_BYTES, kept=kept)
    if cut:
        out["row_truncated"] = True
        out["truncated_fields"] = cut
    return out


def capped_sample(row: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """:func:`cap_sample` of ``row`` and, when the row is within the caps as it is, its line
    (:func:`hopscore.files.rowcap.fitting_line`: the results file writes it as it is)."""
    line = fitting_line(row, MAX_CELL_CHARS, MAX_ROW_BYTES)
    return (row, line) if line is not None else (cap_sample(row), None)


def kept_text(text: str) -> str:
    """What a sample row keeps of a reply (the text read again at the end of the run)."""
    return clip_text(text, MAX_CELL_CHARS)
