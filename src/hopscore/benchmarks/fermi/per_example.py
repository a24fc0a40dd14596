"""Fermi's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

__all__ = ["fermi_answer"]


def fermi_answer(prediction: str | float, gold: str | float) -> dict[str, float]:
    """Fermi's ``fp_score`` (allenai/fermi): both answers converted to base units with the
    Fermi units, then ``max(0, 1 - |log10(prediction / gold)| / 3)``. A prediction pint
    cannot evaluate scores 0.

    >>> from hopscore.metrics import fermi_answer
    >>> fermi_answer("3 km", "300 m")
    {'fp_score': 0.6666666666666666}
    >>> fermi_answer("about five", "300 m")
    {'fp_score': 0.0}
    """
    from hopscore.benchmarks.fermi import Fermi, FermiExample, FermiPrediction, predicted_quantity
    from hopscore.benchmarks.fermi.quantities import answer_quantity
    from hopscore.errors import HopscoreError

    gold_value = answer_quantity(gold) if str(gold).strip() else None
    if gold_value is None or gold_value.magnitude is None:
        reason = "an empty answer" if gold_value is None else gold_value.error
        raise HopscoreError(f"cannot evaluate gold answer {gold!r}: {reason}")
    example = FermiExample(id="", answer=str(gold), value=gold_value.magnitude,
                           has_unit=gold_value.has_unit)
    quantity = predicted_quantity(prediction)
    return Fermi().score(example, FermiPrediction(id="", answer=str(prediction),
                                                  value=quantity.magnitude))
