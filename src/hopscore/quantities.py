"""Fermi-problem answers: quantities with units, and the log-ratio ``fp_score``.

Official semantics (allenai/fermi ``eval_utils.py``, ``official-metrics.md`` §5): an answer
string is evaluated by pint (``UnitRegistry(system="mks", autoconvert_offset_to_baseunit=True)``
plus the repository's extra units), converted to base units, and only the *magnitudes* are
compared -- units are never checked against each other. :func:`fp_score` is the accuracy metric;
:func:`fermi_score` applies it to two answer strings as the official pipeline does;
:func:`mcr_fermi_score` is the different evaluator of MCR (Yoran et al. 2023).

Decisions where the official code is broken or can hang (documented in the README):

* The repository's ``units.txt`` declares ``person``/``people``, ``sheet(s)`` and ``factorial``
  with a definition pint can parse but not resolve (``'_' is not defined``, under Pint 0.17 and
  0.25 alike). A quantity naming one of them therefore fails ``to_base_units()`` and the official
  code keeps it *unconverted*: "300 people * km ** -2" has magnitude 300, not 3e-4. We reproduce
  that (they are declared as counts, and such quantities are not converted); ``pa``, ``gm`` and
  ``Newton`` are pascal, gram and newton.
* A string pint cannot evaluate (the official raises) has no value and scores 0.
* A string longer than 100 characters, with chained powers ("10**10**10"), with a power whose
  exponent is not a plain number, or whose exponents multiply to more than 10,000, is not
  evaluated (scores 0): pint computes integer powers exactly and such input could hang.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

#: Units the Fermi repository adds to pint (see the module docstring).
FERMI_UNIT_DEFINITIONS = (
    "person = 1 = _ = people",
    "sheet = 1 = _ = sheets",
    "factorial = 1",
    "pa = pascal",
    "gm = gram",
    "Newton = newton",
)
#: Quantities naming one of these units are not converted to base units, as officially.
UNCONVERTED_UNITS = frozenset({"person", "sheet", "factorial"})
#: Exact magnitude types the official metric accepts; anything else (bool, np.int64, complex,
#: Decimal, a pint Quantity) scores 0.
NUMBER_TYPES = (int, float, np.float64)
MAX_ANSWER_CHARS = 100
#: Bound on the product of all exponents in one answer, so that exact integer powers stay small.
MAX_EXPONENT_PRODUCT = 10_000

_LITERAL = r"[-+]?\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_EXPONENT = re.compile(rf"\*\*\s*(?:\(\s*({_LITERAL})\s*\)|({_LITERAL}))")
_CHAINED = re.compile(rf"\*\*\s*(?:\(\s*{_LITERAL}\s*\)|{_LITERAL})\s*\*\*")


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


def too_costly(text: str) -> str | None:
    """Why pint should not evaluate ``text`` (it could hang), or None when it is safe."""
    if len(text) > MAX_ANSWER_CHARS:
        return f"longer than {MAX_ANSWER_CHARS} characters"
    from pint.util import string_preprocessor

    expression = string_preprocessor(text)
    if "**" not in expression:
        return None
    if _CHAINED.search(expression):
        return "chained powers"
    exponents = [a or b for a, b in _EXPONENT.findall(expression)]
    if len(exponents) != expression.count("**"):
        return "a power whose exponent is not a plain number"
    product = 1.0
    for exponent in exponents:
        product *= max(1.0, abs(float(exponent.replace(" ", ""))))
    if product > MAX_EXPONENT_PRODUCT:
        return f"exponents multiplying to more than {MAX_EXPONENT_PRODUCT}"
    return None


def _evaluate(text: str, fermi_units: bool) -> Quantity:
    reason = too_costly(text)
    if reason is not None:
        return Quantity(None, False, f"not evaluated: {reason}")
    try:
        value = _registry(fermi_units).parse_expression(text)
    except Exception as exc:  # pint raises many kinds: undefined unit, syntax, dimensionality
        return Quantity(None, False, f"{type(exc).__name__}: {exc}")
    if isinstance(value, (int, float)):  # older pint returns plain numbers
        return Quantity(value, False)
    names = {name for name, _ in value.unit_items()}
    converted = value
    if not (fermi_units and names & UNCONVERTED_UNITS):
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
