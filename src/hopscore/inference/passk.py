"""Pass@k and Avg@k over repeated attempts (``--repeats k``).

For one question with ``n`` attempts of which ``c`` are right, the unbiased estimator of the
chance that at least one of ``k`` attempts drawn without replacement is right is
``1 - C(n - c, k) / C(n, k)`` (Chen et al., 2021, "Evaluating large language models trained on
code"). It is computed as the product ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)``, which
needs no large binomial coefficients. Pass@k of a run is its mean over questions, so its
interval (a mean of per-question values) is clustered by question by construction; Avg@k is
the plain mean over all n attempts of each question (pass@1 of a right/wrong metric).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hopscore.inference.ci import is_binary

#: right/wrong metrics looked for after the benchmark's headline metrics
PREFERRED = ("em", "exact_match", "accuracy", "label_accuracy")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate of one question: ``n`` attempts, ``c`` right."""
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n (k={k}, n={n})")
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n (c={c}, n={n})")
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_curve(n: int, c: int) -> list[float]:
    """``[pass@1, ..., pass@n]`` of one question."""
    return [pass_at_k(n, c, k) for k in range(1, n + 1)]


def pass_names(k: int) -> list[str]:
    """The metric names ``pass@1`` ... ``pass@k``."""
    return [f"pass@{j}" for j in range(1, k + 1)]


def right_wrong_metric(headline: Sequence[str], metrics: Sequence[str],
                       values: Mapping[str, Sequence[float]]) -> str | None:
    """The metric pass@k counts with: the first of the benchmark's ``headline`` metrics, then
    of :data:`PREFERRED`, then of its other ``metrics``, whose every value over every attempt
    is 0 or 1 (None: no metric is right/wrong, e.g. a graded score between 0 and 1)."""
    candidates = [*headline, *(m for m in PREFERRED if m in metrics), *metrics]
    for metric in dict.fromkeys(candidates):
        if metric in values and len(values[metric]) > 0 and is_binary(values[metric]):
            return metric
    return None
