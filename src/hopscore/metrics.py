"""Per-example scores of each benchmark, on plain values: for notebooks and training loops.

Each function scores one prediction against one gold answer with the benchmark's official
semantics and returns the metrics under the names ``metrics.json`` uses, as fractions
(1.0 is a perfect score). They call the same code as ``hopscore score``, so a mean of their
values over a dataset equals the score of the whole file (``tests/test_api.py`` checks this on
every bundled sample). Nothing here reads a file or the network.

>>> from hopscore import metrics
>>> metrics.hotpotqa_answer("the Eiffel Tower", "Eiffel Tower")
{'em': 1.0, 'f1': 1.0, 'prec': 1.0, 'recall': 1.0}
>>> metrics.fermi_answer("2.2 km", "2200 m")
{'fp_score': 1.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hopscore.text.normalize import normalize_answer

__all__ = [
    "bamboogle_answer",
    "fermi_answer",
    "feverous_claim",
    "hotpotqa_answer",
    "hotpotqa_supporting_facts",
    "hybridqa_answer",
    "quartz_answer",
    "strategyqa_answer",
    "twowiki_answer",
]


def hotpotqa_answer(prediction: str, gold: str) -> dict[str, float]:
    """HotpotQA's answer metrics (``hotpot_evaluate_v1.py``): exact match and token F1,
    precision and recall after SQuAD normalization; "yes", "no" and "noanswer" only match
    themselves.

    >>> hotpotqa_answer("Paris, France", "Paris")
    {'em': 0.0, 'f1': 0.6666666666666666, 'prec': 0.5, 'recall': 1.0}
    >>> hotpotqa_answer("yes", "yes it is")["f1"]
    0.0
    """
    from hopscore.benchmarks.hotpotqa import answer_scores

    em, f1, prec, recall = answer_scores(prediction, gold)
    return {"em": em, "f1": f1, "prec": prec, "recall": recall}


def hotpotqa_supporting_facts(
    predicted: Iterable[Sequence[str | int]], gold: Iterable[Sequence[str | int]]
) -> dict[str, float]:
    """HotpotQA's supporting-fact metrics: the predicted ``[title, sentence index]`` pairs
    against the gold ones, as sets (exact match, F1, precision, recall).

    >>> hotpotqa_supporting_facts([["Ed Wood", 0]], [["Ed Wood", 0], ["Scott Derrickson", 0]])
    {'sp_em': 0.0, 'sp_f1': 0.6666666666666666, 'sp_prec': 1.0, 'sp_recall': 0.5}
    """
    from hopscore.benchmarks.hotpotqa import supporting_fact_scores

    def facts(pairs: Iterable[Sequence[str | int]]) -> set[tuple[str, int]]:
        return {(str(title), int(sentence)) for title, sentence in pairs}

    em, f1, prec, recall = supporting_fact_scores(facts(predicted), facts(gold))
    return {"sp_em": em, "sp_f1": f1, "sp_prec": prec, "sp_recall": recall}


def twowiki_answer(prediction: str, gold: str, aliases: Iterable[str] = ()) -> dict[str, float]:
    """2WikiMultihopQA's answer metrics (``2wikimultihop_evaluate_v1.1.py``): each metric is
    the best over the gold answer and its aliases (``id_aliases.json``).

    >>> twowiki_answer("USA", "United States", aliases=["USA", "America"])["em"]
    1.0
    """
    from hopscore.benchmarks.twowiki import answer_scores

    golds = tuple(dict.fromkeys(normalize_answer(a) for a in (gold, *aliases)))
    em, f1, prec, recall = answer_scores(prediction, golds)
    return {"em": em, "f1": f1, "prec": prec, "recall": recall}


def hybridqa_answer(prediction: str, gold: str) -> dict[str, float]:
    """HybridQA's exact match and F1 (``evaluate_script.py``, the SQuAD 2.0 rules: an empty
    prediction against an empty gold scores 1).

    >>> hybridqa_answer("1,245", "1245")
    {'em': 1.0, 'f1': 1.0}
    """
    from hopscore.benchmarks.hybridqa import exact_and_f1

    em, f1 = exact_and_f1(prediction, normalize_answer(gold))
    return {"em": em, "f1": f1}


def bamboogle_answer(prediction: str, gold: str) -> dict[str, float]:
    """Bamboogle's exact match and F1 as MCR's ``evaluation.py`` computes them: its F1
    intersects token *sets* but divides by token *list* lengths, so an exact answer with a
    repeated word scores F1 below 1.

    >>> bamboogle_answer("Bora Bora", "Bora Bora")
    {'em': 1.0, 'f1': 0.5}
    """
    from hopscore.benchmarks.bamboogle import mcr_scores

    em, f1 = mcr_scores(prediction, normalize_answer(gold))
    return {"em": em, "f1": f1}


def fermi_answer(prediction: str | float, gold: str | float) -> dict[str, float]:
    """Fermi's ``fp_score`` (allenai/fermi): both answers converted to base units with the
    Fermi units, then ``max(0, 1 - |log10(prediction / gold)| / 3)``. A prediction pint
    cannot evaluate scores 0.

    >>> fermi_answer("3 km", "300 m")
    {'fp_score': 0.6666666666666666}
    >>> fermi_answer("about five", "300 m")
    {'fp_score': 0.0}
    """
    from hopscore.benchmarks.fermi import Fermi, FermiExample, FermiPrediction, predicted_quantity
    from hopscore.errors import HopscoreError
    from hopscore.text.quantities import answer_quantity

    gold_value = answer_quantity(gold) if str(gold).strip() else None
    if gold_value is None or gold_value.magnitude is None:
        reason = "an empty answer" if gold_value is None else gold_value.error
        raise HopscoreError(f"cannot evaluate gold answer {gold!r}: {reason}")
    example = FermiExample(id="", answer=str(gold), value=gold_value.magnitude,
                           has_unit=gold_value.has_unit)
    quantity = predicted_quantity(prediction)
    return Fermi().score(example, FermiPrediction(id="", answer=str(prediction),
                                                  value=quantity.magnitude))


def quartz_answer(
    prediction: str, choices: Mapping[str, str] | Sequence[tuple[str, str]] | Sequence[str],
    answer_key: str,
) -> dict[str, float]:
    """QuaRTz accuracy: the prediction counts as the choice it names (the label, "A." or "(A)",
    or exactly one choice's text) and scores 1 when that is the answer key.

    ``choices`` is ``{label: text}``, ``[(label, text), ...]`` or the texts alone, labelled
    A, B, ... in order; an answer key that is not a label is a ``ValueError``.

    >>> choices = {"A": "more", "B": "less"}
    >>> quartz_answer("B. less", choices, "B"), quartz_answer("less", choices, "B")
    ({'accuracy': 1.0}, {'accuracy': 1.0})
    >>> quartz_answer("A", ["increase", "decrease"], "A")
    {'accuracy': 1.0}
    """
    from hopscore.benchmarks.quartz import resolve_choice

    pairs = _choice_pairs(choices)
    labels = [label for label, _ in pairs]
    if answer_key not in labels:
        raise ValueError(f"quartz_answer: the answer key {answer_key!r} is not one of the "
                         f"choice labels {labels}")
    return {"accuracy": float(resolve_choice(prediction, pairs) == answer_key)}


def _choice_pairs(choices: Any) -> tuple[tuple[str, str], ...]:
    """``{label: text}``, ``[(label, text), ...]`` or the texts alone (labelled A, B, ...)."""
    if isinstance(choices, Mapping):
        pairs = tuple(choices.items())
    elif isinstance(choices, str) or not isinstance(choices, Sequence):
        raise TypeError("quartz_answer: choices must be {label: text}, [(label, text), ...] or "
                        f"[text, ...], got {type(choices).__name__}")
    elif all(isinstance(choice, str) for choice in choices):
        if len(choices) > 26:
            raise ValueError("quartz_answer: more than 26 unlabelled choices")
        pairs = tuple((chr(ord("A") + i), text) for i, text in enumerate(choices))
    else:
        pairs = tuple(tuple(choice) for choice in choices if not isinstance(choice, str)
                      and isinstance(choice, Sequence) and len(choice) == 2)
        if len(pairs) != len(choices):
            raise TypeError("quartz_answer: choices must be {label: text}, [(label, text), ...] "
                            f"or [text, ...], got {list(choices)!r}"[:300])
    if not all(isinstance(label, str) and isinstance(text, str) for label, text in pairs):
        raise TypeError(f"quartz_answer: choice labels and texts must be strings, got {pairs!r}"
                        [:300])
    return pairs


def strategyqa_answer(prediction: bool | str, gold: bool | str) -> dict[str, float]:
    """StrategyQA accuracy: a boolean, or yes/no/true/false in any case (as the universal
    prediction format reads them), against the gold boolean; any other string scores 0. The
    gold may be written as a string too (true/false, yes/no, 1/0 in any case: a CSV's cells);
    any other gold is a ``ValueError``.

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


def feverous_claim(
    label: str, evidence: Sequence[str], gold_label: str, gold_evidence: Sequence[Sequence[str]]
) -> dict[str, float]:
    """FEVEROUS per-claim metrics (``feverous_scorer.py``): label accuracy, the FEVEROUS score
    (right label and one complete gold evidence set among the predicted elements), and evidence
    precision, recall and F1. Predicted evidence is cut as officially (the first 5 sentences
    and other non-table elements, the first 25 table elements); ``gold_evidence`` lists the
    alternative evidence sets.

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
