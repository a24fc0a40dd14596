"""Fermi-problem answers: quantities with units, and the log-ratio ``fp_score``.

Official semantics (allenai/fermi ``eval_utils.py``, ``official-metrics.md`` §5): an answer
string is evaluated by pint (``UnitRegistry(system="mks", autoconvert_offset_to_baseunit=True)``
plus the repository's extra units), converted to base units, and only the *magnitudes* are
compared -- units are never checked against each other. :func:`fp_score` is the accuracy metric;
:func:`fermi_score` applies it to two answer strings as the official pipeline does;
:func:`mcr_fermi_score` is the different evaluator of MCR (Yoran et al. 2023).

Decisions where the official code is broken or can hang (documented in the README):

* The repository's ``units.txt`` is loaded as it is (``person = _ = people``, ``sheet = _ =
  sheets``, ``factorial = _``, ``pa``, ``gm``, ``Newton``). pint can parse the three ``_``
  definitions but not resolve them, so exactly what fails officially fails here: a quantity
  naming one of them cannot be converted to base units and is kept *unconverted* ("300 people *
  km ** -2" has magnitude 300), and a sum or difference with one ("5 people + 3 people", "1 sheet
  + 1") raises, so it has no value and scores 0, as the official pipeline (which raises) does.
* A string pint cannot evaluate (the official raises) has no value and scores 0.
* pint computes integer arithmetic exactly, so "10**10**10" would run for hours. Expressions are
  evaluated by pint's own tokenizer and evaluation tree with a size budget on the integers that
  multiplication and powers produce (:data:`MAX_INT_BITS` per value, :data:`MAX_INT_WORK` in
  all): anything within it gets exactly pint's value ("2**2**2**2" is 65536), anything beyond is
  not evaluated (no value, scores 0) where the official code would hang or run out of memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

#: The Fermi repository's ``units.txt``, line by line (see the module docstring).
FERMI_UNIT_DEFINITIONS = (
    "person = _ = people",
    "sheet = _ = sheets",
    "pa = 1 * pascal",
    "factorial = _",
    "gm = 1 * g",
    "Newton = 1 * newton",
)
#: Exact magnitude types the official metric accepts; anything else (bool, np.int64, complex,
#: Decimal, a pint Quantity) scores 0.
NUMBER_TYPES = (int, float, np.float64)
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


def fp_score(gold: Any, pred: Any) -> float:
    """The Fermi accuracy metric of two magnitudes, in [0, 1].

    ``max(0, 3 - |log10(gold/pred)|) / 3``: a factor of 10 off gives 2/3, 100 gives 1/3, 1000 or
    more 0. Negative values score 0; two zeros score 1; when exactly one side is 0 the score is
    ``max(0, 1 - |log10(|gold - pred|)|)`` (so 0 against 1 scores 1, as in the original).
    Values whose exact type is not int, float or numpy float64 score 0.
    """
    if type(gold) not in NUMBER_TYPES or type(pred) not in NUMBER_TYPES:
        return 0.0
    if gold < 0 or pred < 0:
        return 0.0
    if gold == 0 and pred == 0:
        return 1.0
    if gold == 0 or pred == 0:
        return max(0.0, 1 - abs(_log10(abs(gold - pred))))
    try:
        ratio = gold / pred
    except (OverflowError, ZeroDivisionError):
        return 0.0
    return max(0.0, 3 - abs(_log10(ratio))) / 3


def _log10(value: Any) -> float:
    """log10 that follows numpy for the edge values: 0 -> -inf, inf -> inf, nan -> nan."""
    if value == 0:
        return -math.inf
    try:
        return math.log10(value)
    except (ValueError, OverflowError):
        return math.nan


@lru_cache(maxsize=4)
def _registry(fermi_units: bool) -> Any:
    import pint

    registry: Any = pint.UnitRegistry(system="mks", autoconvert_offset_to_baseunit=True)
    if fermi_units:
        for definition in FERMI_UNIT_DEFINITIONS:
            registry.define(definition)
    return registry


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
    tokens = pint_eval.tokenizer(string_preprocessor(text))
    operators = _bounded_operators(_Budget())
    result = pint_eval.build_eval_tree(tokens).evaluate(
        lambda token: registry._eval_token(token), operators
    )
    return result if isinstance(result, registry.Quantity) else registry.Quantity(result)


def _evaluate(text: str, fermi_units: bool) -> Quantity:
    try:
        value = bounded_parse(_registry(fermi_units), text)
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
    """Evaluate an answer string with the Fermi units (``"22.3 km"`` -> 22300 m)."""
    return _evaluate(text, True)


def answer_quantity(answer: str | int | float) -> Quantity:
    """An answer as the official pipeline reads it: strings through pint, numbers as they are."""
    if isinstance(answer, str):
        return parse_quantity(answer)
    return Quantity(answer, False)


def fermi_score(gold: str | int | float, prediction: str | int | float) -> float:
    """Official Fermi score of a predicted answer against a gold answer (strings or numbers)."""
    return fp_score(answer_quantity(gold).magnitude, answer_quantity(prediction).magnitude)


# --- MCR's evaluator (oriyor/reasoning-on-cots, pred_evaluators/fermi_evaluator.py) ---

#: MCR scales a prediction containing these words. Its "trillion" factor is 1e9, a bug that is
#: reproduced here on purpose: "5 trillion" against "5e12" scores 0.
MCR_SCALE_WORDS = {"million": 1e6, "trillion": 1e9}
MCR_TRILLION_BUG_FACTOR = MCR_SCALE_WORDS["trillion"]


@lru_cache(maxsize=1 << 16)
def _mcr_magnitude(text: str) -> Any:
    """MCR's ``convert_units``: pint without the Fermi units, else ``float`` of the first word
    with "$" removed, else None."""
    quantity = _evaluate(text, False)
    if quantity.error is None:
        return quantity.magnitude
    try:
        return float(text.replace("$", "").split(" ")[0])
    except ValueError:
        return None


def mcr_fermi_score(prediction: str, gold: str) -> float:
    """MCR's Fermi evaluator, reproduced with its quirks.

    * The prediction is the text after its last "=".
    * If the gold has a unit (more than one space-separated word) and the prediction is a single
      word not ending with that unit, the gold's last word is appended to the prediction.
    * Both sides are evaluated by pint *without* the Fermi units (MCR does not load them),
      falling back to ``float`` of the first word without "$".
    * A prediction containing "million" is evaluated without that word and multiplied by 1e6;
      one containing "trillion" by 1e9 (sic; see :data:`MCR_TRILLION_BUG_FACTOR`).
    * Then :func:`fp_score`.
    """
    pred = prediction.split("=")[-1]
    gold_words, pred_words = gold.split(" "), pred.split(" ")
    if len(gold_words) > 1 and len(pred_words) == 1 and not pred_words[-1].endswith(gold_words[-1]):
        pred += " " + gold_words[-1]
    value = _mcr_magnitude(pred)
    for word, factor in MCR_SCALE_WORDS.items():
        if word in pred:
            scaled = _mcr_magnitude(pred.replace(word, ""))
            if scaled is not None:
                try:
                    value = scaled * factor
                except (OverflowError, TypeError):  # MCR crashes; no value instead
                    value = None
    return fp_score(value, _mcr_magnitude(gold))
