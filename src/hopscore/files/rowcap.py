"""Size caps of output rows: judge rows, model-run samples and agent attempts.

A row is made to fit in two steps. Every text longer than ``max_cell_chars``, at any depth
(a field, a message of a prompt, a chain's reply), keeps its first ``max_cell_chars``
characters followed by `` … [N chars]``. If the row's JSON line is still longer than
``max_row_bytes``, its biggest fields that may go are replaced, one at a time, by a note of
their size (a list keeps its length: each of its items becomes a note). What was cut is
listed by path (``prompt.1.content``, ``rounds``); the caller marks the row with it.

A text is cut the same way wherever it is cut (:func:`clip_text`), so a program that reads a
reply's cut text (to read citations, say) gets the same text before and after a resume.

Most rows are far within both caps; :func:`fitting_line` tells so from the row's line (the
text :class:`hopscore.engine.resume.ResultLog` writes), which the caller can hand on to the
log, so that such a row is encoded once and not walked at all.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from hopscore.files.jsontext import dumps_encodable

#: Most paths listed as cut in one row (the rest are counted).
MAX_LISTED = 50


def clip_text(text: str, limit: int) -> str:
    """``text`` cut to its first ``limit`` characters, with a note of its length, when it is
    longer than ``limit``; else unchanged."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} … [{len(text):,} chars]"


def json_size(value: Any) -> int:
    """Bytes of ``value``'s JSON text (UTF-8; lone surrogates counted as written)."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _has_longer(value: Any, limit: int) -> bool:
    """Whether a text longer than ``limit`` characters is among ``value``'s (at any depth)."""
    if isinstance(value, str):
        return len(value) > limit
    if isinstance(value, dict):
        return any(_has_longer(item, limit) for item in value.values())
    if isinstance(value, list):
        return any(_has_longer(item, limit) for item in value)
    return False


def fitting_line(row: dict[str, Any], max_cell_chars: int, max_row_bytes: int) -> str | None:
    """``row``'s line as a results file writes it (``dumps_encodable(row)``) when the row is
    within both caps as it is (:func:`cap_row` would return it unchanged), else None.

    The line's UTF-8 bytes are at least :func:`json_size` (a lone surrogate is written as a
    6-byte escape, counted as 3), and a text of N characters takes at least N + 2 of the
    line's characters: a line no longer than ``max_cell_chars`` holds no longer text, and
    only a longer line is walked for one."""
    line = dumps_encodable(row)
    size = len(line) if line.isascii() else len(line.encode("utf-8"))
    if size > max_row_bytes:
        return None
    if len(line) > max_cell_chars and _has_longer(row, max_cell_chars):
        return None
    return line


def _clip_all(value: Any, limit: int, path: str, cut: list[str]) -> Any:
    if isinstance(value, str):
        if len(value) > limit:
            cut.append(path)
            return clip_text(value, limit)
        return value
    if isinstance(value, dict):
        changed: dict[str, Any] | None = None
        for name, item in value.items():
            new = _clip_all(item, limit, f"{path}.{name}", cut)
            if new is not item:
                changed = dict(value) if changed is None else changed
                changed[name] = new
        return value if changed is None else changed
    if isinstance(value, list):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = _clip_all(item, limit, f"{path}.{index}", cut)
            if new is not item:
                items = list(value) if items is None else items
                items[index] = new
        return value if items is None else items
    return value


def _note(value: Any, max_row_bytes: int) -> Any:
    if isinstance(value, list):
        return [f"[{json_size(item):,} bytes cut]" for item in value]
    return f"[{json_size(value):,} bytes cut: the row is over {max_row_bytes:,} bytes]"


def cap_row(row: dict[str, Any], max_cell_chars: int, max_row_bytes: int, *,
            whole: Collection[str] = (), kept: Collection[str] = ()
            ) -> tuple[dict[str, Any], list[str]]:
    """``row`` within the caps (see the module docstring) and the paths cut (empty: the row
    is returned as it is). Fields in ``whole`` are never touched (a resume key, bookkeeping);
    fields in ``kept`` have their long texts cut but are never replaced by a note (what a
    resume or the end of a run reads)."""
    if fitting_line(row, max_cell_chars, max_row_bytes) is not None:
        return row, []
    cut: list[str] = []
    out: dict[str, Any] = {}
    for name, value in row.items():
        out[name] = value if name in whole else _clip_all(value, max_cell_chars, name, cut)
    if json_size(out) > max_row_bytes:
        sizes = sorted(((json_size(v), k) for k, v in out.items()
                        if k not in whole and k not in kept), reverse=True)
        for _, name in sizes:
            out[name] = _note(out[name], max_row_bytes)
            cut.append(name)
            if json_size(out) <= max_row_bytes:
                break
    if not cut:
        return row, []
    listed = list(dict.fromkeys(cut))
    if len(listed) > MAX_LISTED:
        listed = [*listed[:MAX_LISTED], f"... and {len(listed) - MAX_LISTED} more"]
    return out, listed
