"""What the settings records of a run and of an agent run share: their JSON form (config.json,
the fingerprint) and the input files they name by option."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hopscore.files.output_specs import Input


def settings_json(record: Any, *, tuples_as_lists: bool = False) -> dict[str, Any]:
    """Every field of the dataclass ``record`` by name: paths as strings, values with a
    ``to_json()`` (a shard) by it, tuples as lists when ``tuples_as_lists``, others as they are."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, Path):
            value = str(value)
        elif tuples_as_lists and isinstance(value, tuple):
            value = list(value)
        elif hasattr(value, "to_json"):
            value = value.to_json()
        out[f.name] = value
    return out


def option_inputs(paths: Mapping[str, Path | str | None]) -> list[Input]:
    """The files and folders a run reads, by the option that names them (None: not given)."""
    from hopscore.files.output_specs import Input

    return [Input(Path(path), option) for option, path in paths.items() if path is not None]
