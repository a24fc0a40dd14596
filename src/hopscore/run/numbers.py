"""Reading a number with its unit out of free text, for answers of the ``number`` kind.

Models write quantities in many ways: ``3.2 × 10^13 kg``, ``3.2e13``, ``\\approx 1.5 \\times
10^{9}\\,\\text{m}^3``, ``$7,224``, ``about 5 million liters``, ``60 km/h × 16 h = 960 km``.
:func:`parse_number_answer` turns such text into a plain string pint reads (``3.2e+13 kg``), so
a benchmark's official scorer can evaluate it. The unit is the longest run of up to three
words after the number that pint (with the units of :mod:`hopscore.text.quantities`) accepts;
common words that pint would take for units ("a" = year, "in" = inch, "at") never start a
unit. A bare number gets the unit the question asked for, when there is one ("$" is not a
unit: pint reads "$7224" as 7224).
"""

from __future__ import annotations

import math
import re

_NUMBER = re.compile(
    r"(?P<pow>(?<![\d.])10\s*(?:\^|\*\*)\s*\{?\s*(?P<pexp>[-+]?\d+)\s*\}?)"
    r"|(?P<mant>[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-+]?\.\d+)"
    r"(?:\s*(?:[x×*])\s*10\s*(?:\^|\*\*)\s*\{?\s*(?P<exp>[-+]?\d+)\s*\}?"
    r"|\s*[eE]\s*(?P<eexp>[-+]?\d+)(?![A-Za-z]))?"
)
_SCALE = re.compile(r"^\s*(thousand|million|billion|trillion|quadrillion)\b", re.I)
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "quadrillion": 1e15}
_APPROXIMATELY = re.compile(
    r"\b(?:approximately|approx\.?|about|around|roughly|nearly|almost|estimated|some)\b|[~≈≃∼]",
    re.I,
)
#: Words that pint would read as units but that start no unit in an answer.
_NOT_UNITS = frozenset(
    {"a", "an", "in", "at", "of", "per", "to", "for", "on", "is", "or", "and", "the", "by",
     "each", "with", "from", "as", "it", "that", "this", "which", "are", "be", "was", "if"}
)  # fmt: skip
MAX_UNIT_WORDS = 3


def _prepare(text: str) -> str:
    text = text.replace("−", "-").replace("\\times", "×").replace("\\cdot", "×").replace("·", "×")
    text = re.sub(r"\\(?:text|mathrm|mathbf|textbf)\{([^{}]*)\}", r"\1", text)
    text = text.replace("\\,", " ").replace("\\ ", " ").replace("\\$", "$").replace("\\%", "%")
    text = text.replace("$", " ").replace("\\approx", " ")
    return _APPROXIMATELY.sub(" ", text)


def _value(match: re.Match[str]) -> float | None:
    try:
        if match.group("pow"):
            return 10.0 ** int(match.group("pexp"))
        mantissa = float(match.group("mant").replace(",", ""))
        exponent = match.group("exp") or match.group("eexp")
        value = mantissa * 10.0 ** int(exponent) if exponent else mantissa
    except (OverflowError, ValueError):
        return None
    return value if math.isfinite(value) else None


def format_number(value: float) -> str:
    """Ten significant digits, no trailing zeros: ``3.2e+13``, ``22.3``, ``7224``."""
    return format(value, ".10g")


def _unit_after(number: str, rest: str) -> str | None:
    words: list[str] = []
    for raw in rest.split():
        word = raw.strip(".,;:!?)(\"'")
        if not word or not re.search(r"[A-Za-z°µ%]", word):
            break
        if word.lower() in _NOT_UNITS and (word.lower() != "per" or not words):
            break  # "16 hours a day": "a" (pint: a year) ends the unit
        words.append(word)
        if len(words) == MAX_UNIT_WORDS or raw[-1:] in ".,;:!?":
            break
    if not words:
        return None
    from hopscore.text.quantities import parse_quantity  # imports numpy: only when units are read

    for count in range(len(words), 0, -1):
        if words[count - 1].lower() in _NOT_UNITS:
            continue
        unit = " ".join(words[:count])
        quantity = parse_quantity(f"{number} {unit}")
        if quantity.error is None and quantity.has_unit:
            return unit
    return None


def parse_number_answer(value: str, unit: str | None = None, *, last: bool = False) -> str | None:
    """``value`` as ``"<number> [unit]"`` for pint, or None when it holds no number.

    The number is the first one after the last "=" (``last``: the last one in the text).
    ``unit`` is appended to a number that has no unit of its own.
    """
    text = _prepare(value)
    if "=" in text and not last:
        text = text.rsplit("=", 1)[1]
    matches = list(_NUMBER.finditer(text))
    if not matches:
        return None
    match = matches[-1] if last else matches[0]
    number = _value(match)
    if number is None:
        return None
    rest = text[match.end():]
    scale = _SCALE.match(rest)
    if scale:
        number *= _SCALES[scale.group(1).lower()]
        rest = rest[scale.end():]
    written = format_number(number)
    found = _unit_after(written, rest)
    if found is None and unit and unit.strip() not in ("", "$"):
        from hopscore.text.quantities import parse_quantity

        check = parse_quantity(f"{written} {unit}")
        found = unit if check.error is None else None
    return f"{written} {found}" if found else written
