"""StrategyQA's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

__all__ = ["strategyqa_answer"]


def strategyqa_answer(prediction: bool | str, gold: bool | str) -> dict[str, float]:
    """StrategyQA accuracy: a boolean, or yes/no/true/false in any case (as the universal
    prediction format reads them), against the gold boolean; any other string scores 0. The
    gold may be written as a string too (true/false, yes/no, 1/0 in any case: a CSV's cells);
    any other gold is a ``ValueError``.

    >>> from hopscore.metrics import strategyqa_answer
    >>> strategyqa_answer("Yes", True), strategyqa_answer(False, True)
    ({'accuracy': 1.0}, {'accuracy': 0.0})
    >>> strategyqa_answer("yes", "yes"), strategyqa_answer("no", "True")
    ({'accuracy': 1.0}, {'accuracy': 0.0})
    """
    from hopscore.benchmarks.strategyqa import _BOOLEAN_WORDS, gold_boolean

    gold_value = gold_boolean(gold)
    if gold_value is None:
        raise ValueError(f"strategyqa_answer: the gold must be a boolean or true/false, yes/no, "
                         f"1/0; got {gold!r}"[:200])

    value = _BOOLEAN_WORDS.get(prediction.strip().lower()) if isinstance(prediction, str) \
        else prediction
    return {"accuracy": float(value is not None and value == gold_value)}
