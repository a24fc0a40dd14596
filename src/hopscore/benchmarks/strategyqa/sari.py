"""SARI (Xu et al., 2016) as the StrategyQA evaluator computes it: the tensor2tensor variant.

SARI compares a system output with the source it was rewritten from and with reference
rewrites. For each n-gram order ``n`` in 1..4 it averages three scores:

* **keep** -- F1 of the source n-grams the output kept, against the source n-grams the
  references kept;
* **add** -- F1 of the n-grams the output added (not in the source), against the n-grams the
  references added;
* **delete** -- *precision* only (beta = 0) of the source n-grams the output dropped, weighted by
  how many references dropped them too.

SARI is the mean of the three order-averaged scores. This module follows the tensor2tensor
definition the StrategyQA evaluator uses, which differs from the original SARI code in two ways:
a fraction 0/0 counts as 1 (so an output that matches the reference exactly scores 1), and the
deletion score uses the corrected formula. N-grams are *sets*: a repeated n-gram counts once.
Tokens are compared case-sensitively. With several references, a reference n-gram weighs the
fraction of (non-empty) references that contain it; StrategyQA always has exactly one.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_ORDER = 4


def ngrams(tokens: Sequence[str], n: int) -> set[tuple[str, ...]]:
    """The distinct n-grams of a token sequence."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _f1(true_positives: float, selected: float, relevant: float) -> float:
    """F1 with the 0/0 = 1 convention for precision and recall; 0 when either is 0."""
    precision = true_positives / selected if selected > 0 else 1.0
    recall = true_positives / relevant if relevant > 0 else 1.0
    if precision > 0 and recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def _reference_weights(references: Sequence[Sequence[str]], n: int) -> dict[tuple[str, ...], float]:
    """Each reference n-gram -> the share of references (with any n-gram) that contain it."""
    counts: dict[tuple[str, ...], int] = {}
    nonempty = 0
    for reference in references:
        grams = ngrams(reference, n)
        if grams:
            nonempty += 1
            for gram in grams:
                counts[gram] = counts.get(gram, 0) + 1
    return {gram: count / nonempty for gram, count in counts.items()}


def sari_components(
    source: Sequence[str],
    output: Sequence[str],
    references: Sequence[Sequence[str]],
    max_order: int = MAX_ORDER,
) -> tuple[float, float, float, float]:
    """``(sari, keep, add, delete)`` for one output; each component averaged over n = 1..max."""
    keep_total = add_total = delete_total = 0.0
    for n in range(1, max_order + 1):
        src = ngrams(source, n)
        out = ngrams(output, n)
        weights = _reference_weights(references, n)

        kept = src & out
        keep_total += _f1(
            sum(weights[g] for g in kept if g in weights),
            len(kept),
            sum(weights[g] for g in src if g in weights),
        )

        added = out - src
        add_total += _f1(
            sum(1 for g in added if g in weights),
            len(added),
            sum(1 for g in weights if g not in src),
        )

        dropped = src - out
        # A dropped n-gram is right to the degree the references dropped it too.
        hits = sum(1.0 - weights.get(g, 0.0) for g in dropped if weights.get(g, 0.0) < 1.0)
        delete_total += hits / len(dropped) if dropped else 1.0

    keep = keep_total / max_order
    add = add_total / max_order
    delete = delete_total / max_order
    return (keep + add + delete) / 3.0, keep, add, delete


def sari(
    source: Sequence[str], output: Sequence[str], references: Sequence[Sequence[str]]
) -> float:
    """SARI of one output in [0, 1] (see the module docstring)."""
    return sari_components(source, output, references)[0]


def strategyqa_tokens(text: str) -> list[str]:
    """StrategyQA's tokenization for SARI: a space before every "?", then whitespace split."""
    return text.replace("?", " ?").split()
