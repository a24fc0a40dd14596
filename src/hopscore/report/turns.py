"""Texts of a sample the report shows in full: every turn of an agent's conversation, and the
judge's raw reply.

An agent run's sample row names its trajectory file (``trajectory_file``, relative to the run
directory), or holds its conversation itself (``messages``, with ``search_calls``: the search
agent's rows); its messages become turns ``{role, text, calls, id}``, where ``calls`` are the
assistant's tool calls (name and arguments as written) and ``id`` the call a tool result
answers. OpenAI and Anthropic message formats are both read. So an attempt that never called a
tool still shows everything the model wrote. The judge's raw reply comes from a judge output row
(``raw_judge_output``): the row itself for a judge file, the ``--judge`` row joined by id, or for
an agent run directory the row of its ``judge.jsonl``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.files.io import iter_jsonl

JUDGE_FILE = "judge.jsonl"


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f" [... {len(text) - limit} more characters cut]"


def _text(content: Any) -> str:
    """Message content as text: a string, or the text of content parts/blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif part.get("type") == "tool_result":
                    parts.append(_text(part.get("content")))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def _call(name: Any, arguments: Any, limit: int) -> dict[str, str]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return {"name": str(name or ""), "arguments": _cut(text, limit)}


def turns_of(messages: list[Any], limit: int) -> list[dict[str, Any]]:
    """Every message as a turn (OpenAI or Anthropic form), each text cut at ``limit``."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role") or "?")
        content = message.get("content")
        calls = [_call((c.get("function") or {}).get("name"),
                       (c.get("function") or {}).get("arguments"), limit)
                 for c in message.get("tool_calls") or [] if isinstance(c, Mapping)]
        answered = message.get("tool_call_id")
        if isinstance(content, list):  # Anthropic blocks
            calls += [_call(b.get("name"), b.get("input"), limit) for b in content
                      if isinstance(b, Mapping) and b.get("type") == "tool_use"]
            results = [b for b in content if isinstance(b, Mapping) and
                       b.get("type") == "tool_result"]
            if results and role == "user":
                role, answered = "tool", results[0].get("tool_use_id")
        turn: dict[str, Any] = {"role": role, "text": _cut(_text(content), limit)}
        if calls:
            turn["calls"] = calls
        if answered:
            turn["id"] = str(answered)
        turns.append(turn)
    return turns


def conversation(record: Mapping[str, Any], run_dir: Path | None, limit: int
                 ) -> list[dict[str, Any]] | None:
    """The turns of a sample's trajectory file, or None when it has none (or it is unreadable:
    the report still renders; the sample says so)."""
    name = record.get("trajectory_file")
    inline = record.get("messages")
    if not isinstance(name, str) and "search_calls" in record and isinstance(inline, list):
        return turns_of(inline, limit)
    if not isinstance(name, str) or run_dir is None:
        return None
    path = run_dir / name
    try:
        from hopscore.agent.trajectory import read_trajectory

        messages, _ = read_trajectory(path)
    except (HopscoreError, OSError, ValueError) as exc:
        return [{"role": "error", "text": f"trajectory {path} could not be read: {exc}"}]
    return turns_of(messages, limit)


def run_judge_rows(run_dir: Path | None) -> dict[str, dict[str, Any]]:
    """An agent run directory's judge rows by task id (attempt 0 first)."""
    if run_dir is None or not (run_dir / JUDGE_FILE).is_file():
        return {}
    rows: dict[str, dict[str, Any]] = {}
    try:
        for _, value in iter_jsonl(run_dir / JUDGE_FILE):
            if not isinstance(value, dict):
                continue
            key = value.get("instance_id") or value.get("id")
            if isinstance(key, str) and (key not in rows or value.get("attempt") == 0):
                rows[key] = value
    except HopscoreError:  # a torn or foreign file: the report goes on without judge replies
        return rows
    return rows


def judge_reply(row: Mapping[str, Any] | None, limit: int) -> str | None:
    if row is None:
        return None
    raw = row.get("raw_judge_output")
    return _cut(raw, limit) if isinstance(raw, str) and raw else None
