"""``fast_init`` gives frozen record dataclasses the same constructor, only faster."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from hopscore import benchmarks
from hopscore.benchmarks import base
from hopscore.benchmarks.fast_init import fast_init
from hopscore.scores.scoring import ExampleScore


@dataclass(frozen=True, slots=True, kw_only=True)
class Plain:
    id: str
    text: str = ""
    tags: tuple[str, ...] = ()
    seen: list[int] = field(default_factory=list)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Fast:
    id: str
    text: str = ""
    tags: tuple[str, ...] = ()
    seen: list[int] = field(default_factory=list)


def test_same_values_defaults_and_fresh_factories() -> None:
    a = Fast(id="x")
    assert (a.id, a.text, a.tags, a.seen) == ("x", "", (), [])
    assert Fast(id="x").seen is not a.seen
    b = Fast(id="y", text="t", tags=("u",), seen=[1])
    assert (b.id, b.text, b.tags, b.seen) == ("y", "t", ("u",), [1])
    assert Fast.__init__ is not Plain.__init__
    assert Fast.__init__.__qualname__ == "Fast.__init__"


def test_same_errors_as_the_dataclass_constructor() -> None:
    for cls in (Plain, Fast):
        with pytest.raises(TypeError):
            cls()  # type: ignore[call-arg]
        with pytest.raises(TypeError):
            cls("x")  # type: ignore[misc]
        with pytest.raises(TypeError):
            cls(id="x", nope=1)  # type: ignore[call-arg]
        record = cls(id="x")
        with pytest.raises(dataclasses.FrozenInstanceError):
            record.id = "y"  # type: ignore[misc]


def test_positional_and_keyword_fields_keep_their_places() -> None:
    @fast_init
    @dataclass(frozen=True, slots=True)
    class Mixed:
        a: int
        b: int = 2
        _: dataclasses.KW_ONLY
        c: int
        d: int = 4

    assert Mixed.__init__.__qualname__.endswith("Mixed.__init__")
    m = Mixed(1, c=3)
    assert (m.a, m.b, m.c, m.d) == (1, 2, 3, 4)
    assert Mixed(a=1, b=5, c=3, d=6) == Mixed(1, 5, c=3, d=6)
    with pytest.raises(TypeError):
        Mixed(1, 2, 3)  # type: ignore[misc]


def test_classes_it_cannot_handle_keep_their_constructor() -> None:
    @dataclass(frozen=True, slots=True, kw_only=True)
    class Checked:
        id: str

        def __post_init__(self) -> None:
            if not self.id:
                raise ValueError("empty")

    original = Checked.__init__
    assert fast_init(Checked).__init__ is original
    with pytest.raises(ValueError):
        Checked(id="")


def _record_classes() -> list[type]:
    found: set[type] = {base.Example, base.Prediction, ExampleScore}
    for name in benchmarks.names():
        module = type(benchmarks.get(name)).__module__
        for value in vars(__import__(module, fromlist=["_"])).values():
            if isinstance(value, type) and issubclass(value, (base.Example, base.Prediction)):
                found.add(value)
    return sorted(found, key=lambda c: (c.__module__, c.__qualname__))


@pytest.mark.parametrize("cls", _record_classes(), ids=lambda c: c.__qualname__)
def test_every_record_class_builds_equal_records_both_ways(cls: type) -> None:
    """The fast constructor and the dataclass one agree, field by field, on every record type."""
    fields = dataclasses.fields(cls)
    assert cls.__init__.__module__ == cls.__module__
    kwargs = {}
    for f in fields:
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs[f.name] = f"value of {f.name}"
    fast = cls(**kwargs)
    slow = cls.__new__(cls)
    for f in fields:
        if f.name in kwargs:
            value = kwargs[f.name]
        elif f.default is not dataclasses.MISSING:
            value = f.default
        else:
            value = f.default_factory()
        object.__setattr__(slow, f.name, value)
    assert fast == slow
    assert [getattr(fast, f.name) for f in fields] == [getattr(slow, f.name) for f in fields]
