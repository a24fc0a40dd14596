"""What a benchmark declares about its Hugging Face copies, and the shared pieces to write it.

A Hub copy of a benchmark holds the official records in the shape ``datasets`` stores them:
a list of pairs becomes a struct of lists, a field may be renamed, a nested object may be
flattened, and a label may be a class index. A benchmark's :class:`HubLayout`
(``Benchmark.hub_layout``, declared in its folder's ``hub.py``) turns one such row back into
the official record, so the benchmark's own loader reads it and every score stays the official
one; :mod:`hopscore.hub` reads the rows and writes the official file. A row already in the
official shape passes through unchanged, so a copy that kept the official fields works too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopscore.errors import HopscoreError

Row = Mapping[str, Any]


class LayoutError(HopscoreError):
    """A Hub row that does not have the layout hopscore expects (names the row and field)."""

    def __init__(self, where: str, index: int, field: str, message: str) -> None:
        self.index = index
        super().__init__(f"{where}: row [{index}]: field {field!r}: {message}")


@dataclass(frozen=True, slots=True)
class HubLayout:
    """How one benchmark's Hub rows become its official records."""

    #: the official gold file is JSON Lines (``.jsonl``) or one JSON list (``.json``)
    official_suffix: str
    #: the split ``hf:NAME`` loads when none is given
    default_split: str
    #: one row -> the official record (``where`` and ``index`` locate errors)
    to_official: Callable[[Row, str, int], dict[str, Any]]
    #: whether a row read from a JSON / JSON Lines file has a Hub layout, not the official one
    is_hub_row: Callable[[Row], bool]


def pairs(value: Any, first: str, second: str, where: str, index: int, field: str) -> Any:
    """``{first: [a, ...], second: [b, ...]}`` (datasets' Sequence of a struct) or a list of
    ``{first: a, second: b}`` objects (its List of a struct) -> ``[[a, b], ...]``; a list of
    pairs is returned unchanged."""
    if isinstance(value, Mapping):
        if first not in value or second not in value:
            raise LayoutError(where, index, field, f"expected keys {first!r} and {second!r}, "
                              f"got {sorted(value)}")
        left, right = value[first], value[second]
        if not isinstance(left, list) or not isinstance(right, list) or len(left) != len(right):
            raise LayoutError(where, index, field,
                              f"{first!r} and {second!r} must be lists of the same length")
        return [[a, b] for a, b in zip(left, right, strict=True)]
    if isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
        try:
            return [[item[first], item[second]] for item in value]
        except KeyError as exc:
            raise LayoutError(where, index, field, f"an entry has no {exc.args[0]!r}") from None
    return value


def first_key(value: Mapping[str, Any], names: Sequence[str]) -> str | None:
    """The first of ``names`` that ``value`` has (None: none of them)."""
    return next((name for name in names if name in value), None)


def renamed(row: Row, renames: Mapping[str, str]) -> dict[str, Any]:
    """A copy of ``row`` with Hub names turned into official ones (an official name wins)."""
    out = dict(row)
    for hub, official in renames.items():
        if hub in out and official not in out:
            out[official] = out.pop(hub)
    return out


def passthrough(row: Row, where: str, index: int) -> dict[str, Any]:
    """``to_official`` of a copy that kept the official records."""
    return dict(row)


def always(row: Row) -> bool:
    """``is_hub_row`` of a benchmark whose Hub rows and official records look alike."""
    return True
