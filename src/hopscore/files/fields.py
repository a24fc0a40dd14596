"""Typed, located access to the fields of one JSON object (:class:`Fields`).

A value of the wrong type or a missing field becomes an :class:`~hopscore.errors.InputError`
naming the file, the line or record, and the field.
"""

from __future__ import annotations

import builtins
from typing import Any

from hopscore.errors import InputError, Location

_MISSING: Any = object()


def json_type(value: Any) -> str:
    """The JSON name of a Python value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class Fields:
    """Typed, located access to the fields of one JSON object.

    Every getter raises :class:`InputError` naming the file, line/record and field when the value
    is absent or of the wrong type, so loaders read like a schema.
    """

    __slots__ = ("_place", "_where", "data")

    def __init__(self, data: Any, where: Location) -> None:
        self.data: builtins.dict[builtins.str, Any] = data
        self._where: Location | builtins.str = where
        self._place: builtins.str | builtins.int = 0
        if not isinstance(data, dict):
            raise InputError(where, f"expected a JSON object, got {json_type(data)}")

    # The records of a large file are many; their Locations are built only when an error needs one.

    @classmethod
    def at_line(cls, data: Any, path: builtins.str, line: builtins.int) -> Fields:
        """The record on line ``line`` of a JSON Lines file ``path``."""
        return cls._lazy(data, path, line)

    @classmethod
    def at_index(cls, data: Any, path: builtins.str, index: builtins.int) -> Fields:
        """Record ``[index]`` of the JSON list in ``path``."""
        return cls._lazy(data, path, -1 - index)

    @classmethod
    def at_key(cls, data: Any, path: builtins.str, key: builtins.str) -> Fields:
        """The record under ``key`` of the JSON object in ``path``."""
        return cls._lazy(data, path, key)

    @classmethod
    def _lazy(cls, data: Any, path: builtins.str, place: builtins.str | builtins.int) -> Fields:
        record = cls.__new__(cls)
        record.data = data
        record._where = path
        record._place = place  # a key; a line number (> 0); or -1 - index
        if not isinstance(data, dict):
            raise InputError(record.where, f"expected a JSON object, got {json_type(data)}")
        return record

    @property
    def where(self) -> Location:
        where, place = self._where, self._place
        if isinstance(where, Location):
            return where
        if isinstance(place, builtins.str):
            located = Location(where, key=place)
        elif place > 0:
            located = Location(where, line=place)
        else:
            located = Location(where, index=-1 - place)
        self._where = located
        return located

    def error(self, field: builtins.str, message: builtins.str) -> InputError:
        return InputError(self.where, message, field=field)

    def has(self, name: builtins.str) -> builtins.bool:
        return name in self.data

    def raw(self, name: builtins.str, default: Any = _MISSING) -> Any:
        if name in self.data:
            return self.data[name]
        if default is _MISSING:
            raise self.error(name, "missing")
        return default

    def _typed(
        self,
        name: builtins.str,
        types: tuple[type, ...],
        label: builtins.str,
        default: Any,
        nullable: builtins.bool,
    ) -> Any:
        value = self.raw(name, default)
        if value is default and name not in self.data:
            return value
        if value is None and nullable:
            return None
        if isinstance(value, bool) and bool not in types:
            raise self.error(name, f"expected {label}, got {json_type(value)}")
        if not isinstance(value, types):
            raise self.error(name, f"expected {label}, got {json_type(value)}")
        return value

    def str(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        value = self.data.get(name, _MISSING)
        if type(value) is str:  # the common case, without the generic checks
            return value
        return self._typed(name, (str,), "a string", default, nullable)

    def int(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._typed(name, (int,), "an integer", default, nullable)

    def bool(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._typed(name, (bool,), "a boolean", default, nullable)

    def list(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._container(name, list, "a list", default, nullable)

    def dict(
        self, name: builtins.str, default: Any = _MISSING, *, nullable: builtins.bool = False
    ) -> Any:
        return self._container(name, dict, "an object", default, nullable)

    def _container(self, name: builtins.str, kind: type, word: builtins.str, default: Any,
                   nullable: builtins.bool) -> Any:
        value = self.data.get(name, _MISSING)
        if type(value) is kind:  # the common case, without the generic checks
            return value
        return self._typed(name, (kind,), word, default, nullable)

    def id(self, name: builtins.str = "id") -> builtins.str:
        """An example id: a non-empty string, or an integer (turned into its decimal string)."""
        value = self.raw(name)
        if type(value) is str and value and not value[0].isspace():  # the common case
            return value
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise self.error(name, f"expected a string id, got {json_type(value)}")
        text = str(value)
        if not text.strip():
            raise self.error(name, "id is empty")
        return text
