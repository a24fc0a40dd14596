"""Helpers shared by the prediction loaders: telling the universal JSON Lines format from an
official JSON document, and reading the HotpotQA-style ``{"answer": {...}, "sp": {...}}`` object
that 2WikiMultihopQA extends with ``"evidence"``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Predictions
from hopscore.errors import InputError
from hopscore.files.fields import json_type
from hopscore.files.io import load_json, sniff_json_kind
from hopscore.text.words import agree, counted

#: Returned by :func:`universal_or_json` when the file is in the universal JSON Lines format.
UNIVERSAL: Any = object()


def universal_or_json(path: Path) -> Any:
    """The parsed JSON document, or :data:`UNIVERSAL` for universal JSON Lines.

    A one-line file holding a single ``{"id": ..., ...}`` record is universal JSON Lines too.
    """
    if sniff_json_kind(path) == "jsonl":
        return UNIVERSAL
    data = load_json(path)
    if isinstance(data, dict) and "id" in data and not isinstance(data["id"], (dict, list)):
        return UNIVERSAL
    return data


def read_official_parts(
    path: Path, data: Any, parts: tuple[str, ...]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Check an official ``{"answer": {id: str}, "sp": {id: [...]}, ...}`` object.

    Returns one ``{id: value}`` map per part. The first part is required; a missing later part
    (the official scripts raise ``KeyError``) is read as not predicted, with a warning.
    """
    if not isinstance(data, dict) or parts[0] not in data:
        keys = ", ".join(f'"{part}": {{...}}' for part in parts)
        raise InputError(path, f"expected the official {{{keys}}} object or universal JSON Lines")
    maps: dict[str, dict[str, Any]] = {}
    warnings = []
    for part in parts:
        if part not in data:
            warnings.append(f'{path}: no "{part}" key; {part} metrics score 0 for every example')
            maps[part] = {}
        elif not isinstance(data[part], dict):
            raise InputError(path, f'"{part}" must map ids to values, got {json_type(data[part])}')
        else:
            maps[part] = data[part]
    return maps, warnings


def official_ids(maps: dict[str, dict[str, Any]]) -> list[str]:
    """Every id named by any part, each once, in file order (answers first)."""
    return list(dict.fromkeys(key for part in maps.values() for key in part))


def warn_unpredicted(predictions: Predictions[Any], part: str, has: Callable[[Any], bool],
                     metrics: str, *, key_missing: bool = False) -> None:
    """Warn that predictions lack ``part`` (their ``metrics`` then score 0), in whichever
    format they came: every one of them, or how many and which. ``key_missing``: the official
    file had no ``part`` key at all, which :func:`read_official_parts` has warned about."""
    if key_missing or not predictions.by_id:
        return
    missing = [pid for pid, prediction in predictions.by_id.items() if not has(prediction)]
    warning = unpredicted_warning(predictions.source, part, metrics, missing,
                                  len(predictions.by_id))
    if warning:
        predictions.warnings.append(warning)


def unpredicted_warning(source: str, part: str, metrics: str, missing: list[str],
                        total: int) -> str | None:
    """The warning of :func:`warn_unpredicted` for the ids ``missing`` (of ``total``), if any."""
    if not missing:
        return None
    if len(missing) == total:
        return (f'{source}: no prediction has "{part}"; {metrics} score 0 for every '
                "example")
    return (f"{source}: {len(missing)} of {counted(total, 'prediction')} "
            f'{agree(len(missing), "has", "have")} no "{part}" (first: '
            f"{', '.join(missing[:5])}); {agree(len(missing), 'its', 'their')} {metrics} score 0")
