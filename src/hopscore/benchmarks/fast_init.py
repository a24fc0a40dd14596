"""A faster ``__init__`` for the frozen, slotted dataclasses that hold one example or prediction.

A frozen dataclass sets each field through ``object.__setattr__`` (its own ``__setattr__``
refuses), looked up again for every field; with half a dozen keyword-only fields that makes
building one record about four times slower than building a plain dataclass. Scoring a million
examples builds a few million records, so :func:`fast_init` replaces the generated
``__init__`` with one of the same signature that stores each field through its slot's
descriptor directly. The class is otherwise untouched (still frozen, hashable, compared by
value); a class that it cannot handle exactly (``__post_init__``, ``init=False`` fields, no
slots) keeps the dataclass ``__init__``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")

_FACTORY = object()


def fast_init(cls: type[T]) -> type[T]:
    """Class decorator, applied above ``@dataclass(frozen=True, slots=True, ...)``."""
    if not _supported(cls):
        return cls
    namespace: dict[str, Any] = {"_FACTORY": _FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for index, field in enumerate(dataclasses.fields(cls)):  # type: ignore[arg-type]
        name = field.name
        namespace[f"_set{index}"] = _slot(cls, name).__set__
        params = keyword if field.kw_only else positional
        if field.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = field.default
            params.append(f"{name}=_default{index}")
        elif field.default_factory is not dataclasses.MISSING:
            namespace[f"_factory{index}"] = field.default_factory
            params.append(f"{name}=_FACTORY")
            body.append(f"    if {name} is _FACTORY: {name} = _factory{index}()")
        else:
            params.append(name)
        body.append(f"    _set{index}(self, {name})")
    signature = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    source = f"def __init__({signature}) -> None:\n" + "\n".join(body)
    exec(source, namespace)  # the same technique as dataclasses' own generated methods
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    type.__setattr__(cls, "__init__", init)
    return cls


def _supported(cls: type[Any]) -> bool:
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__:
        return False
    if hasattr(cls, "__post_init__"):
        return False
    fields = dataclasses.fields(cls)
    return all(f.init and _slot(cls, f.name) is not None for f in fields)


def _slot(cls: type[Any], name: str) -> Any:
    """The member descriptor that stores field ``name`` (from the most derived class)."""
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if descriptor is not None:
            return descriptor if hasattr(descriptor, "__set__") else None
    return None
