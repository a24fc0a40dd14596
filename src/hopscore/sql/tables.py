"""Result tables as verdict rows show them: JSON cells, each capped in size.

Standard library only: the query workers build these tables themselves, so a huge result never
leaves the worker; only the rows shown, with every cell cut to ``max_cell_chars``, do.

A text cell longer than the cap keeps its first ``max_cell_chars`` characters followed by
`` … [N chars]`` (N the full length); a BLOB becomes ``{"blob": hex}`` with at most
``max_cell_chars`` hex digits, plus ``"bytes": N`` and ``"truncated": true`` when cut.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

#: Default cap of one cell of a verdict's result table (characters).
MAX_CELL_CHARS = 1000


#: BLOB cells longer than this are held, for grading, as a :class:`BlobDigest`.
DIGEST_OVER = 64 * 1024


class BlobDigest(bytes):
    """A large BLOB cell as the comparison holds it: its SHA-256 and size (the ``bytes`` value
    compared, hashed and sorted), plus its first bytes to show. Two digests are equal exactly
    when the BLOBs are (a BLOB this long is never equal to a short one, nor a number or text),
    so verdicts do not change, while a 90 MB cell takes a few hundred bytes."""

    size: int
    head: bytes

    def __new__(cls, value: bytes, keep: int = 512) -> BlobDigest:
        digest = hashlib.sha256(value).digest() + len(value).to_bytes(8, "big")
        self = super().__new__(cls, b"\x00blob-sha256:" + digest)
        self.size = len(value)
        self.head = bytes(value[:keep])
        return self


def digest_blobs(rows: list[tuple[Any, ...]], over: int = DIGEST_OVER) -> list[tuple[Any, ...]]:
    """``rows`` with every BLOB cell longer than ``over`` bytes replaced by its digest."""
    out = rows
    for index, row in enumerate(rows):
        if any(type(v) is bytes and len(v) > over for v in row):
            if out is rows:
                out = list(rows)
            out[index] = tuple(BlobDigest(v) if type(v) is bytes and len(v) > over else v
                               for v in row)
    return out


def cell_size(row: tuple[Any, ...]) -> int:
    """About how many bytes a fetched row takes (text and BLOB lengths, 16 per other cell)."""
    return sum(len(v) if isinstance(v, (str, bytes)) else 16 for v in row) + 64


def json_cell(value: Any, max_chars: int | None = None) -> tuple[Any, bool]:
    """``(cell as JSON, whether it was cut)``: BLOBs as ``{"blob": hex}``, non-finite floats
    as text, text and BLOBs cut to ``max_chars`` (None: never)."""
    if isinstance(value, BlobDigest):
        keep = max(0, max_chars if max_chars is not None else 1000) // 2
        return {"blob": value.head[:keep].hex(), "bytes": value.size, "truncated": True}, True
    if isinstance(value, bytes):
        if max_chars is not None and 2 * len(value) > max_chars:
            return {"blob": value[: max(0, max_chars) // 2].hex(), "bytes": len(value),
                    "truncated": True}, True
        return {"blob": value.hex()}, False
    if isinstance(value, str):
        if max_chars is not None and len(value) > max_chars:
            return f"{value[:max(0, max_chars)]} … [{len(value):,} chars]", True
        return value, False
    if isinstance(value, float) and not math.isfinite(value):
        return str(value), False
    return value, False


def render_rows(rows: Sequence[Sequence[Any]], limit: int,
                max_cell_chars: int | None) -> tuple[list[list[Any]], int]:
    """The first ``limit`` rows as JSON cells, and how many cells were cut."""
    shown: list[list[Any]] = []
    cut = 0
    for row in rows[: max(0, limit)]:
        cells = []
        for value in row:
            cell, was_cut = json_cell(value, max_cell_chars)
            cells.append(cell)
            cut += was_cut
        shown.append(cells)
    return shown, cut


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, truncated: bool,
                 limit: int, max_cell_chars: int | None) -> dict[str, Any]:
    """A result table for a verdict: its columns, at most ``limit`` rows, and its size."""
    shown, cut = render_rows(rows, limit, max_cell_chars)
    table: dict[str, Any] = {
        "columns": [json_cell(name, max_cell_chars)[0] for name in columns],
        "rows": shown,
        "row_count": len(rows),
        "rows_shown": len(shown),
        "truncated": truncated,
    }
    if cut:
        table["cells_cut"] = cut
    return table


def clip_cells(rows: list[tuple[Any, ...]], max_chars: int) -> list[tuple[Any, ...]]:
    """``rows`` with every text or BLOB cell longer than ``max_chars`` cut to that length (the
    ``run_sql`` observation cuts further; this only keeps huge cells out of the reply)."""
    out = rows
    for index, row in enumerate(rows):
        if any(isinstance(v, (str, bytes)) and len(v) > max_chars for v in row):
            if out is rows:
                out = list(rows)
            out[index] = tuple(v[:max_chars] if isinstance(v, (str, bytes)) else v for v in row)
    return out
