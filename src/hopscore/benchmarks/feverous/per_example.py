"""FEVEROUS's per-example functions on plain values, offered by :mod:`hopscore.metrics`
(the names in ``__all__``; the benchmark declares this module as its ``metric_functions``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["feverous_claim"]


def feverous_claim(
    label: str, evidence: Sequence[str], gold_label: str, gold_evidence: Sequence[Sequence[str]]
) -> dict[str, float]:
    """FEVEROUS per-claim metrics (``feverous_scorer.py``): label accuracy, the FEVEROUS score
    (right label and one complete gold evidence set among the predicted elements), and evidence
    precision, recall and F1. Predicted evidence is cut as officially (the first 5 sentences
    and other non-table elements, the first 25 table elements); ``gold_evidence`` lists the
    alternative evidence sets.

    >>> from hopscore.metrics import feverous_claim
    >>> feverous_claim("SUPPORTS", ["Berlin_sentence_0"], "SUPPORTS", [["Berlin_sentence_0"]])
    ... # doctest: +NORMALIZE_WHITESPACE
    {'label_accuracy': 1.0, 'feverous_score': 1.0, 'evidence_precision': 1.0,
     'evidence_recall': 1.0, 'evidence_f1': 1.0}

    Over a dataset, ``evidence_f1`` is computed from the mean precision and recall (as the
    official scorer does), not averaged per claim.
    """
    from hopscore.benchmarks.feverous import (
        FEVEROUS,
        FeverousExample,
        FeverousPrediction,
        parse_element,
        truncate,
    )
    from hopscore.errors import HopscoreError

    def elements(ids: Iterable[str]) -> list[tuple[str, str, str]]:
        out = []
        for element_id in ids:
            parsed = parse_element(element_id)
            if parsed is None:
                raise HopscoreError(f"evidence element {element_id!r} has no '_' (expected "
                                    "e.g. 'Page_sentence_0')")
            out.append(parsed)
        return out

    sets = tuple(tuple(elements(group)) for group in gold_evidence)
    example = FeverousExample(id="", label=gold_label, evidence=sets,
                              elements=frozenset(e for group in sets for e in group))
    prediction = FeverousPrediction(id="", answer=label, evidence=truncate(elements(evidence)))
    return FEVEROUS().score(example, prediction)
