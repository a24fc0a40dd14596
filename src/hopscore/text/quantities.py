"""Quantities with units: answer strings evaluated by pint, in base units, within a size budget.

An answer string is evaluated by pint (``UnitRegistry(system="mks",
autoconvert_offset_to_baseunit=True)`` plus :data:`UNIT_DEFINITIONS`) and converted to base
units; a quantity that cannot be converted is kept *unconverted*, and a string pint cannot
evaluate has no value. The scorers that compare such magnitudes live with their benchmark
(``benchmarks/<name>/``); model answers are read into pint's form by :mod:`hopscore.run.numbers`.

pint computes integer arithmetic exactly, so "10**10**10" would run for hours. Expressions are
evaluated by pint's own tokenizer and evaluation tree with a size budget on the integers that
multiplication and powers produce (:data:`MAX_INT_BITS` per value, :data:`MAX_INT_WORK` in all):
anything within it gets exactly pint's value ("2**2**2**2" is 65536), anything beyond is not
evaluated (no value) where plain pint would hang or run out of memory.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

#: Units that answers use and pint lacks, as an official scorer's units file defines them, line
#: by line. pint can parse the three ``_`` definitions but not resolve them, so a quantity
#: naming one is kept unconverted ("300 people * km ** -2" has magnitude 300) and a sum or
#: difference with one ("5 people + 3 people") has no value.
UNIT_DEFINITIONS = (
    "person = _ = people",
    "sheet = _ = sheets",
    "pa = 1 * pascal",
    "factorial = _",
    "gm = 1 * g",
    "Newton = 1 * newton",
)
#: The largest integer (in bits, about 315,000 digits) a product or power may produce.
MAX_INT_BITS = 1 << 20
#: The bits of all such large integers together, for one answer (bounds the time: under a
#: second for the worst case on one core).
MAX_INT_WORK = 1 << 24
#: Integers below this many bits are never charged (the common case costs nothing).
_FREE_BITS = 256


@dataclass(frozen=True, slots=True)
class Quantity:
    """An evaluated answer: its magnitude in base units (None if it has none), whether it names
    a unit ("$7224" and "3.2E+13" do not), and why it has no value."""

    magnitude: Any
    has_unit: bool
    error: str | None = None


@lru_cache(maxsize=4)
def _registry(extra_units: bool) -> Any:
    import pint

    registry: Any = pint.UnitRegistry(system="mks", autoconvert_offset_to_baseunit=True)
    if extra_units:
        for definition in UNIT_DEFINITIONS:
            registry.define(definition)
    return registry


#: pint tokenizes with Python's ``tokenize``. Up to Python 3.11 a character outside every token
#: (a non-ASCII one that is not a letter, digit or "_": the minus sign "−", a dash, a no-break
#: space) is an error token of its own, which pint passes over ("−5" is 5, as the official
#: scorers of that time read it); from 3.12 on it is read as part of a name ("−5" an unknown
#: unit). Such characters are turned into spaces there, which tokenize as 3.11 did.
_TOKENIZER_JOINS = sys.version_info >= (3, 12)
_OUTSIDE_TOKENS = re.compile(r"[^\w\x00-\x7f]")


class TooCostly(Exception):
    """An answer whose exact integer arithmetic exceeds the size budget."""


class _Budget:
    __slots__ = ("work",)

    def __init__(self) -> None:
        self.work = 0

    def charge(self, bits: float) -> None:
        if bits <= _FREE_BITS:
            return
        if bits > MAX_INT_BITS:
            raise TooCostly(f"an integer of about {bits:.3g} bits (more than {MAX_INT_BITS})")
        self.work += int(bits)
        if self.work > MAX_INT_WORK:
            raise TooCostly(f"integer arithmetic beyond {MAX_INT_WORK} bits in all")


def _int_magnitude(value: Any) -> int | None:
    magnitude = getattr(value, "magnitude", value)
    return magnitude if type(magnitude) is int else None


def _bounded_operators(budget: _Budget) -> dict[str, Any]:
    """pint's binary operators, with products and powers of exact integers charged first."""
    import operator

    from pint import pint_eval

    operators: dict[str, Any] = dict(pint_eval._BINARY_OPERATOR_MAP)
    power, multiply = operators["**"], operators["*"]

    def bounded_power(left: Any, right: Any) -> Any:
        base, exponent = _int_magnitude(left), _int_magnitude(right)
        if base is not None and exponent is not None and exponent > 1 and abs(base) > 1:
            budget.charge(exponent * math.log2(abs(base)))
        return power(left, right)

    def bounded_multiply(left: Any, right: Any) -> Any:
        a, b = _int_magnitude(left), _int_magnitude(right)
        if a is not None and b is not None:
            budget.charge(a.bit_length() + b.bit_length())
        return multiply(left, right)

    operators["**"] = bounded_power
    operators["*"] = bounded_multiply
    if operators.get("") is operator.mul:
        operators[""] = bounded_multiply
    return operators


def bounded_parse(registry: Any, text: str) -> Any:
    """``registry.parse_expression(text)`` (what ``ureg(text)`` does) within the size budget.

    The same preprocessing, tokenizer, evaluation tree and token evaluation as pint; only the
    product and power operators check the size of exact integer results first, raising
    :class:`TooCostly` instead of computing one beyond the budget.
    """
    from pint import pint_eval
    from pint.util import string_preprocessor

    if not text:
        return registry.Quantity(1)
    for preprocessor in registry.preprocessors:
        text = preprocessor(text)
    text = string_preprocessor(text)
    if _TOKENIZER_JOINS:
        text = _OUTSIDE_TOKENS.sub(" ", text)
    tokens = pint_eval.tokenizer(text)
    operators = _bounded_operators(_Budget())
    result = pint_eval.build_eval_tree(tokens).evaluate(
        lambda token: registry._eval_token(token), operators
    )
    return result if isinstance(result, registry.Quantity) else registry.Quantity(result)


def evaluate_quantity(text: str, extra_units: bool = True) -> Quantity:
    """Evaluate an answer string by pint, within the size budget, in base units
    (``extra_units``: with :data:`UNIT_DEFINITIONS`); a string pint cannot evaluate has no
    magnitude and says why."""
    try:
        value = bounded_parse(_registry(extra_units), text)
    except TooCostly as exc:
        return Quantity(None, False, f"not evaluated: {exc}")
    except Exception as exc:  # pint raises many kinds: undefined unit, syntax, dimensionality
        return Quantity(None, False, f"{type(exc).__name__}: {exc}")
    if isinstance(value, (int, float)):  # older pint returns plain numbers
        return Quantity(value, False)
    names = {name for name, _ in value.unit_items()}
    try:
        converted = value.to_base_units()
    except Exception:  # the official keeps the unconverted quantity when conversion fails
        converted = value
    return Quantity(converted.magnitude, bool(names))


@lru_cache(maxsize=1 << 16)
def parse_quantity(text: str) -> Quantity:
    """Evaluate an answer string with the extra units (``"22.3 km"`` -> 22300 m)."""
    return evaluate_quantity(text, True)
