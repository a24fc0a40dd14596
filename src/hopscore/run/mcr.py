"""The MCR protocol (Yoran et al. 2023, ``oriyor/reasoning-on-cots``; ``official-metrics.md`` §4).

Extraction and abstention are :func:`hopscore.run.extract.extract_mcr`. Each dataset has MCR's
evaluator (``Benchmark.mcr_evaluator``), applied to the extracted answer and MCR's gold
(``Benchmark.mcr_gold``). The shared evaluators are here:

* ``wikihop``: the answer F1 of :func:`hopscore.text.normalize.hotpot_prf` (multiset,
  yes/no/noanswer rule) against the single gold answer, no aliases;
* ``em``: ``pred.lower() == gold.lower()`` with gold "Yes"/"No";
* ``hover``: the answer must start with yes or no (a yes/no question asked of a claim, gold Yes
  iff it is supported; ``em`` would differ only on answers that continue after yes/no).

A dataset whose evaluator is its own declares it (``Benchmark.mcr_score``, measuring
``Benchmark.mcr_metric``).

MCR's reported accuracy is the mean over *answered* questions (pandas skips None); hopscore
reports that (``mcr_answered``) and the mean over all questions with abstentions and failed
requests scoring 0 (``mcr_all``), plus the fraction answered (``answered``), overall and per
group, through :class:`McrScoring`, a wrapper around the benchmark's own scorer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, Example, Prediction, Predictions
from hopscore.errors import HopscoreError
from hopscore.text.normalize import hotpot_prf, normalize_answer

Evaluator = Callable[[str, str], "float | None"]
MCR_METRICS = ("mcr_all", "answered")
ANSWERED_METRIC = "mcr_answered"


def wikihop(prediction: str, gold: str) -> float:
    return hotpot_prf(normalize_answer(prediction), normalize_answer(gold))[0]


def exact(prediction: str, gold: str) -> float:
    return float(prediction.lower() == gold.lower())


def hover(prediction: str, gold: str) -> float:
    answer = prediction.lower().strip()
    if not (answer.startswith("yes") or answer.startswith("no")):
        return 0.0
    return float(("yes" if answer.startswith("yes") else "no") == gold.lower())


#: The evaluators several datasets share; a benchmark may bring its own (``mcr_score``).
EVALUATORS: dict[str, Evaluator] = {"wikihop": wikihop, "em": exact, "hover": hover}
#: What each shared evaluator measures, for tables.
METRIC_NAMES = {"wikihop": "F1", "em": "EM", "hover": "EM (yes/no)"}


def metric_name(evaluator: str) -> str:
    """What an evaluator measures, for tables: a shared one's, else the ``mcr_metric`` of the
    benchmark whose own evaluator it is (else the evaluator's name)."""
    if evaluator in METRIC_NAMES:
        return METRIC_NAMES[evaluator]
    for bench in _covered():
        if bench.mcr_evaluator == evaluator and bench.mcr_metric:
            return bench.mcr_metric
    return evaluator


def _covered() -> list[Benchmark[Any, Any]]:
    """The benchmarks MCR evaluated, in the order of its table."""
    found = [bench for bench in map(benchmarks.get, benchmarks.names()) if bench.mcr_evaluator]
    return sorted(found, key=lambda b: b.suite_files.position if b.suite_files else len(found))


def evaluator_of(benchmark: Benchmark[Any, Any]) -> Evaluator:
    name = benchmark.mcr_evaluator
    if name and benchmark.mcr_metric:
        return benchmark.mcr_score
    if name not in EVALUATORS:
        titles = [bench.title.split(" (")[0] for bench in _covered()]
        raise HopscoreError(f"MCR did not evaluate {benchmark.title}: --protocol mcr covers "
                            f"{', '.join(titles[:-1])} and {titles[-1]}")
    return EVALUATORS[name]


@dataclass(frozen=True, slots=True, kw_only=True)
class McrPrediction(Prediction):
    #: the benchmark's own prediction (None: abstained or the request failed)
    inner: Any = None
    #: MCR's score; None when the question was not answered
    mcr: float | None = None

    def answer_text(self) -> str | None:
        return self.inner.answer_text() if self.inner is not None else None


class McrScoring(Benchmark[Example, McrPrediction]):
    """The benchmark's metrics plus MCR's, over the examples of one run."""

    def __init__(self, inner: Benchmark[Any, Any]) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]
        self.title = inner.title  # type: ignore[misc]
        self.metrics = (*inner.metrics, *MCR_METRICS)  # type: ignore[misc]
        self.headline = (ANSWERED_METRIC, "mcr_all", *inner.headline)  # type: ignore[misc]
        self.group_keys = inner.group_keys  # type: ignore[misc]

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[Example]:
        return self.inner.load_gold(path, aliases=aliases)

    def load_predictions(self, path: Path) -> Predictions[McrPrediction]:
        raise HopscoreError("MCR scores come from a run's samples, not a predictions file")

    def active_metrics(self, predictions: Predictions[McrPrediction]) -> tuple[str, ...]:
        inner = Predictions(
            {k: p.inner for k, p in predictions.by_id.items() if p.inner is not None},
            predictions.source, predictions.format,
        )
        return (*self.inner.active_metrics(inner), *MCR_METRICS)

    def score(self, example: Example, prediction: McrPrediction | None) -> dict[str, float]:
        inner = prediction.inner if prediction is not None else None
        values = dict(self.inner.score(example, inner))
        answered = prediction is not None and prediction.mcr is not None
        values["mcr_all"] = prediction.mcr if answered and prediction is not None and \
            prediction.mcr is not None else 0.0
        values["answered"] = 1.0 if answered else 0.0
        return values

    def is_missing(self, example: Example, prediction: McrPrediction | None) -> bool:
        return prediction is None or prediction.inner is None or self.inner.is_missing(
            example, prediction.inner
        )

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        """``mcr_answered`` = mean over answered questions; left out when none was answered."""
        inner = self.inner.finalize({k: v for k, v in means.items() if k not in MCR_METRICS})
        out: dict[str, float] = {}
        if means.get("answered", 0.0) > 0:
            out[ANSWERED_METRIC] = means["mcr_all"] / means["answered"]
        out["mcr_all"] = means.get("mcr_all", 0.0)
        out["answered"] = means.get("answered", 0.0)
        out.update(inner)
        return out


def mcr_summary(
    evaluator: str, n: int, answered: int, abstained: int, errors: int, total_score: float
) -> dict[str, Any]:
    """The ``mcr`` block of a run's metrics.json."""
    return {
        "evaluator": evaluator,
        "metric": metric_name(evaluator),
        "n": n,
        "answered": answered,
        "abstained": abstained,
        "errors": errors,
        "score_answered": total_score / answered if answered else None,
        "score_all": total_score / n if n else None,
    }
