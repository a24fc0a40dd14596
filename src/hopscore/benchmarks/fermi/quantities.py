"""Fermi-problem answers: the log-ratio ``fp_score`` of quantities with units.

Official semantics (allenai/fermi ``eval_utils.py``, ``official-metrics.md`` §5): an answer
string is evaluated by pint (``UnitRegistry(system="mks", autoconvert_offset_to_baseunit=True)``
plus the repository's extra units, :data:`hopscore.text.quantities.UNIT_DEFINITIONS`), converted
to base units, and only the *magnitudes* are compared -- units are never checked against each
other. :func:`fp_score` is the accuracy metric; :func:`fermi_score` applies it to two answer
strings as the official pipeline does; :func:`mcr_fermi_score` is the different evaluator of MCR
(Yoran et al. 2023).

Decisions where the official code is broken or can hang (documented in the README):

* The repository's ``units.txt`` is loaded as it is (``person = _ = people``, ``sheet = _ =
  sheets``, ``factorial = _``, ``pa``, ``gm``, ``Newton``). pint can parse the three ``_``
  definitions but not resolve them, so exactly what fails officially fails here: a quantity
  naming one of them cannot be converted to base units and is kept *unconverted* ("300 people *
  km ** -2" has magnitude 300), and a sum or difference with one ("5 people + 3 people", "1 sheet
  + 1") raises, so it has no value and scores 0, as the official pipeline (which raises) does.
* A string pint cannot evaluate (the official raises) has no value and scores 0.
* pint computes integer arithmetic exactly, so "10**10**10" would run for hours. Answers are
  evaluated within a size budget on the integers that multiplication and powers produce
  (:mod:`hopscore.text.quantities`): anything within it gets exactly pint's value
  ("2**2**2**2" is 65536), anything beyond is not evaluated (no value, scores 0) where the
  official code would hang or run out of memory.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from hopscore.text.quantities import Quantity, evaluate_quantity, parse_quantity

#: Exact magnitude types the official metric accepts; anything else (bool, np.int64, complex,
#: Decimal, a pint Quantity) scores 0.
NUMBER_TYPES = (int, float, np.float64)


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
    quantity = evaluate_quantity(text, False)
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
