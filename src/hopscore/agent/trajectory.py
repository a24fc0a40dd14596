"""Trajectory files: one JSON file per attempt, in OpenAI chat format, and the Anthropic form.

A run writes ``trajectories/<task id>__<attempt>.json``::

    {"instance_id", "attempt", "model", "message_format": "openai", "tools": [...],
     "messages": [...]}

``messages`` are OpenAI chat messages (system, user, assistant with ``tool_calls``, ``tool``
results paired by ``tool_call_id``), which ``hopscore sql-match`` reads for its trajectory
fallback. :func:`to_anthropic` gives the same conversation as Anthropic Messages content blocks
(``tool_use`` / ``tool_result`` with ``is_error``); :func:`read_trajectory` reads either format
back (from such a file, or a bare JSON list of messages, which is taken as OpenAI format).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hopscore.agent.tools import is_error_observation
from hopscore.errors import InputError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import json_type
from hopscore.files.io import load_json

FORMATS = ("openai", "anthropic")


def file_name(task_id: str, attempt: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", task_id)
    return f"{safe}__{attempt}.json"


def write_trajectory(path: Path, record: dict[str, Any]) -> None:
    write_json_atomic(path, record, indent=1)


def read_trajectory(path: Path) -> tuple[list[Any], str]:
    """``(messages, message_format)`` of a trajectory file."""
    value = load_json(path)
    if isinstance(value, list):
        return value, "openai"
    if not isinstance(value, dict):
        raise InputError(path, f"expected a trajectory object or a list of messages, got "
                         f"{json_type(value)}")
    messages = value.get("messages")
    if not isinstance(messages, list):
        raise InputError(path, "expected a list of messages", field="messages")
    fmt = str(value.get("message_format") or "openai").strip().lower()
    if fmt not in FORMATS:
        raise InputError(path, f"{fmt!r} is not one of {', '.join(FORMATS)}",
                         field="message_format")
    return messages, fmt


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def to_anthropic(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"system": ..., "messages": [...]}`` in Anthropic Messages form."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "system":
            system.append(str(content or ""))
        elif role == "user":
            add("user", [{"type": "text", "text": str(content or "")}])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if content:
                blocks.append({"type": "text", "text": str(content)})
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                blocks.append({"type": "tool_use", "id": call.get("id"),
                               "name": function.get("name"),
                               "input": _arguments(function.get("arguments"))})
            add("assistant", blocks)
        elif role == "tool":
            text = str(content or "")
            add("user", [{"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                          "content": text, "is_error": is_error_observation(text)}])
    return {"system": "\n\n".join(system), "messages": out}
