"""Judge input rows (validated, located) and output rows (input + verdict fields + bookkeeping).

Output layout: the input row with its keys in their order, then the verdict fields
:data:`VERDICT_FIELDS` at the top level (as the reference writes them), then one ``judge`` object
with the bookkeeping. An input key that collides with one of those names is never overwritten:
it is renamed ``input_<name>`` in place (``input_input_<name>`` if that is taken too) and listed
in ``judge.renamed_input_keys``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.engine.ledger import JUDGE, USAGE
from hopscore.engine.ledger import block as ledger_block
from hopscore.engine.types import CallResult, canonical_json, sha256_text
from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files import rowcap
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl_checked
from hopscore.judge.parse import JudgeVerdict, reference_verdict

VERDICT_FIELDS = (
    "correct", "parse_ok", "extracted_final_answer", "reasoning", "confidence",
    "raw_judge_output", "error",
)
META_FIELD = "judge"
RESERVED = (*VERDICT_FIELDS, META_FIELD)

#: ``judge.status`` values; only "error" rows are retried by a re-run. "truncated": the reply was
#: cut at the completion budget and ``--on-truncation error`` keeps it out of the accuracy.
JUDGED, EMPTY_RESPONSE, INVALID_INPUT, ERROR = "judged", "empty_response", "invalid_input", "error"
TRUNCATED = "truncated"

MAX_REPORTED_ERRORS = 20
#: Default caps of an output row: characters of one text field, bytes of the JSON line.
MAX_CELL_CHARS = 20_000
MAX_ROW_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class JudgeItem:
    """One input row: where it is, the row itself, and its three texts."""

    where: Location
    row: dict[str, Any]
    question: str
    response: str
    correct_answer: str
    #: 0 for the first row with this exact content, 1 for its first duplicate, ...
    occurrence: int

    def problem(self) -> str | None:
        """Why this row cannot be judged at all (graded as an error without a call), or None."""
        if not self.question.strip():
            return "the question is empty"
        if not self.correct_answer.strip():
            return "correct_answer (the gold answer) is empty"
        return None


def _text(record: Fields, name: str, *, nullable: bool) -> str:
    value = record.raw(name)
    if value is None and nullable:
        return ""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # it could not be sent to any endpoint
            raise record.error(name, f"contains a lone surrogate at character {exc.start + 1}"
                               ) from None
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return json.dumps(value)
    raise record.error(name, f"expected a string, got {json_type(value)}")


def load_items(path: Path) -> list[JudgeItem]:
    """Read and check every input row; report up to 20 problems at once, each located."""
    items = items_of(iter_jsonl_checked(path))
    if not items:
        raise InputError(path, "no rows to judge (the file holds no JSON lines)")
    return items


def items_of(values: Iterable[tuple[Location, Any]]) -> list[JudgeItem]:
    """Check located input rows (a value may be the :class:`InputError` of an unreadable
    line); report up to 20 problems at once, each located."""
    items: list[JudgeItem] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for where, value in values:
        try:
            if isinstance(value, InputError):
                raise value
            record = Fields(value, where)
            question = _text(record, "question", nullable=True)
            # A null response is "no prediction": graded incorrect, like an empty one.
            response = _text(record, "response", nullable=True)
            gold = _text(record, "correct_answer", nullable=True)
        except InputError as exc:
            problems.append(str(exc))
            if len(problems) >= MAX_REPORTED_ERRORS:
                break
            continue
        fingerprint = canonical_json(record.data)
        occurrence = seen.get(fingerprint, 0)
        seen[fingerprint] = occurrence + 1
        items.append(JudgeItem(where, record.data, question, response, gold, occurrence))
    if problems:
        more = " (stopped after 20)" if len(problems) >= MAX_REPORTED_ERRORS else ""
        raise HopscoreError(
            f"{len(problems)} invalid input rows{more}; each needs 'question', 'response' and "
            "'correct_answer' as strings:\n  " + "\n  ".join(problems)
        )
    return items


def item_key(item: JudgeItem, config_fingerprint: str) -> str:
    """The resume key: the judge configuration, the row's content and its duplicate number."""
    return sha256_text(canonical_json([config_fingerprint, item.row, item.occurrence]))[:32]


def shard_key(item: JudgeItem) -> str:
    """What decides an item's shard: its content and duplicate number (never the judge's
    settings, so every judge sees the same split)."""
    return f"{canonical_json(item.row)}#{item.occurrence}"


def key_of(row: dict[str, Any]) -> str | None:
    meta = row.get(META_FIELD)
    key = meta.get("key") if isinstance(meta, dict) else None
    return key if isinstance(key, str) else None


def is_done(row: dict[str, Any]) -> bool:
    """A finished row under the default options (see :func:`done_check`)."""
    return done_check()(row)


def done_check(*, on_truncation: str = "score", retry_unparsed: bool = False
               ) -> Callable[[dict[str, Any]], bool]:
    """Which stored rows a run keeps: errors are asked again; so are replies without a verdict
    under ``retry_unparsed``, and rows whose reading of a cut reply differs from the
    ``on_truncation`` policy (a judged cut reply under "error", a "truncated" row under
    "score": the cached reply makes that free)."""
    def done(row: dict[str, Any]) -> bool:
        meta = row.get(META_FIELD)
        if not isinstance(meta, dict):
            return False
        status = meta.get("status")
        if status == TRUNCATED:
            return on_truncation == "error"
        if status == JUDGED:
            if meta.get("truncated") and on_truncation == "error":
                return False
            return not (retry_unparsed and not row.get("parse_ok"))
        return status in (EMPTY_RESPONSE, INVALID_INPUT)

    return done


def _rename_collisions(row: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    if not any(name in row for name in RESERVED):
        return dict(row), []
    out: dict[str, Any] = {}
    renamed: list[str] = []
    for name, value in row.items():
        if name in RESERVED:
            new = f"input_{name}"
            while new in row or new in out or new in RESERVED:
                new = f"input_{new}"
            out[new] = value
            renamed.append(f"{name}->{new}")
        else:
            out[name] = value
    return out, renamed


@dataclass(frozen=True, slots=True)
class JudgeMeta:
    """What every row records about the judge that produced it."""

    model: str
    endpoint: str
    prompt_sha256: str
    prompt_source: str
    max_tokens: int | None = None
    #: the judge preset (``builtin``, ``BENCHMARK/NAME``; None: a user's prompt file alone) and
    #: whether its replies are read by the four-field reader (then audited against the
    #: reference reading)
    preset: str | None = "builtin"
    four_field: bool = True
    #: caps of the written row: characters of one field, bytes of the whole line
    max_cell_chars: int = MAX_CELL_CHARS
    max_row_bytes: int = MAX_ROW_BYTES


def build_row(
    item: JudgeItem,
    key: str,
    meta: JudgeMeta,
    status: str,
    *,
    verdict: JudgeVerdict | None = None,
    raw_output: str | None = None,
    call: CallResult | None = None,
    error: str | None = None,
    cap: bool = True,
) -> dict[str, Any]:
    """The output row for one item. ``correct`` is null unless there is a decision.
    ``cap=False``: not yet within the caps (the caller caps it: :func:`capped_line`).

    Whatever the judge's reply says is kept (extracted answer, reasoning, confidence), also when
    it gave no verdict (parse failure) or was cut at the budget (``truncated``)."""
    row, renamed = _rename_collisions(item.row)
    decided = status in (JUDGED, EMPTY_RESPONSE)
    row["correct"] = (verdict.correct if verdict else False) if decided else None
    row["parse_ok"] = verdict.parse_ok if verdict else status == EMPTY_RESPONSE
    row["extracted_final_answer"] = verdict.extracted_final_answer if verdict else None
    row["reasoning"] = verdict.reasoning if verdict else None
    row["confidence"] = verdict.confidence if verdict else None
    row["raw_judge_output"] = raw_output
    row["error"] = error
    info: dict[str, Any] = {
        "key": key,
        "status": status,
        "model": meta.model,
        "endpoint": meta.endpoint,
        "prompt_sha256": meta.prompt_sha256,
        "prompt_source": meta.prompt_source,
        "preset": meta.preset,
        "max_tokens": meta.max_tokens,
        "input_line": item.where.line,
    }
    if verdict is not None and raw_output is not None and not meta.four_field:
        info.update(verdict_lines=verdict.verdict_lines,
                    conflicting_verdicts=verdict.conflicting_verdicts)
    elif verdict is not None and raw_output is not None:
        ref_correct, ref_ok = reference_verdict(raw_output)
        info.update(
            verdict_lines=verdict.verdict_lines,
            conflicting_verdicts=verdict.conflicting_verdicts,
            reference_correct=ref_correct if ref_ok else None,
            differs_from_reference=(ref_ok != verdict.parse_ok)
            or (ref_ok and ref_correct != verdict.correct),
        )
    if call is not None:
        record = call.to_json()
        info.update(record)
        info[USAGE] = ledger_block(JUDGE, [record])
        info["truncated"] = call.response is not None and call.response.finish_reason == "length"
    if renamed:
        info["renamed_input_keys"] = renamed
    row[META_FIELD] = info
    return cap_row(row, meta.max_cell_chars, meta.max_row_bytes) if cap else row


def capped_line(row: dict[str, Any], meta: JudgeMeta) -> tuple[dict[str, Any], str | None]:
    """:func:`cap_row` of ``row`` and, when the row is within the caps as it is, its line
    (:func:`hopscore.files.rowcap.fitting_line`: the results file writes it as it is)."""
    line = rowcap.fitting_line(row, meta.max_cell_chars, meta.max_row_bytes)
    if line is not None:
        return row, line
    return cap_row(row, meta.max_cell_chars, meta.max_row_bytes), None


def cap_row(row: dict[str, Any], max_cell_chars: int, max_row_bytes: int) -> dict[str, Any]:
    """``row`` within the caps of :mod:`hopscore.files.rowcap` (every text longer than
    ``max_cell_chars`` cut, then, if its line is still longer than ``max_row_bytes``, its
    biggest fields replaced by a note of their size); ``judge.row_truncated`` and
    ``judge.truncated_fields`` say so (``judge.truncated`` says the judge's reply was cut at
    max_tokens). The ``judge`` object is never cut: the resume key lives there, and nothing
    cut is needed to resume."""
    out, cut = rowcap.cap_row(row, max_cell_chars, max_row_bytes, whole=(META_FIELD,))
    if cut:
        out[META_FIELD] = {**out[META_FIELD], "row_truncated": True, "truncated_fields": cut}
    return out
