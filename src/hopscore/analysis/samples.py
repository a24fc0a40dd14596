"""Reading the per-sample records of a run (``samples.jsonl``) tolerantly.

A run's sample row holds the prompt, the raw model output, the strict and flexible extracted
answers, scores, token usage, latency, errors and attempts. The accessors below accept the
field names the runner uses and a few common alternatives, so a run made by another tool (or an
older hopscore) can still be browsed; a field that is absent reads as None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl

RAW_OUTPUT_KEYS = ("raw_output", "output", "raw", "completion", "response", "text")
TRAJECTORY_KEYS = ("trajectory", "steps", "tool_calls")
#: Text fields longer than this are cut when records are kept in memory for the report.
KEEP_CHARS = 20_000


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def first_text(row: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        if row.get(key) is not None:
            return _text(row[key])
    return None


def raw_output(row: Mapping[str, Any]) -> str | None:
    return first_text(row, RAW_OUTPUT_KEYS)


def prompt_text(row: Mapping[str, Any]) -> str | None:
    """The prompt as text; a chat message list becomes ``role: content`` blocks."""
    prompt = row.get("prompt")
    if prompt is None and isinstance(row.get("messages"), list):
        prompt = row["messages"]
    if isinstance(prompt, list):
        blocks = []
        for message in prompt:
            if isinstance(message, Mapping):
                blocks.append(f"{message.get('role', '?')}: {_text(message.get('content')) or ''}")
            else:
                blocks.append(_text(message) or "")
        return "\n\n".join(blocks)
    return _text(prompt)


def extraction(row: Mapping[str, Any]) -> tuple[str | None, str | None] | None:
    """``(strict, flexible)`` extracted answers, or None when the row records no extraction."""
    nested = row.get("extracted") or row.get("extraction")
    if isinstance(nested, Mapping):
        return _text(nested.get("strict")), _text(nested.get("flexible"))
    for strict_key, flexible_key in (("strict", "flexible"), ("answer_strict", "answer_flexible"),
                                     ("extracted_strict", "extracted_flexible")):
        if strict_key in row or flexible_key in row:
            return _text(row.get(strict_key)), _text(row.get(flexible_key))
    return None


def request_error(row: Mapping[str, Any]) -> str | None:
    error = row.get("error")
    if error in (None, "", False):
        return None
    return _text(error)


def trajectory(row: Mapping[str, Any]) -> Any:
    for key in TRAJECTORY_KEYS:
        if row.get(key):
            return row[key]
    messages = row.get("messages")
    if isinstance(messages, list) and len(messages) > 2:
        return messages
    return None


def _trim(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + f"\n[... {len(value) - limit} more characters cut]"
    if isinstance(value, list):
        return [_trim(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: _trim(item, limit) for key, item in value.items()}
    return value


def read_records(path: Path, *, limit: int = KEEP_CHARS) -> dict[str, dict[str, Any]]:
    """Sample rows by id (``id`` field), long texts cut to ``limit`` characters.

    A re-run that appended a sample twice keeps the last row.
    """
    out: dict[str, dict[str, Any]] = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        out[record.id("id")] = _trim(record.data, limit)
    return out
