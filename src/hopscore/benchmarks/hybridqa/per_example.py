"""HybridQA's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from hopscore.text.normalize import normalize_answer

__all__ = ["hybridqa_answer"]


def hybridqa_answer(prediction: str, gold: str) -> dict[str, float]:
    """HybridQA's exact match and F1 (``evaluate_script.py``, the SQuAD 2.0 rules: an empty
    prediction against an empty gold scores 1).

    >>> from hopscore.metrics import hybridqa_answer
    >>> hybridqa_answer("1,245", "1245")
    {'em': 1.0, 'f1': 1.0}
    """
    from hopscore.benchmarks.hybridqa import exact_and_f1

    em, f1 = exact_and_f1(prediction, normalize_answer(gold))
    return {"em": em, "f1": f1}
