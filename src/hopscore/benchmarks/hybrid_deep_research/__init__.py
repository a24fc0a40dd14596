"""HybridDeepResearch: end-to-end accuracy per task family, from graded attempts.

HDR answers are graded by an LLM judge (SQL2S, Parallel) or by SQL execution match (S2SQL),
which needs a model and databases; ``hopscore run hybrid-deep-research`` does that and writes
the verdicts to ``grades.jsonl`` in its run directory. This module scores those verdicts, so
``metrics.json`` / ``scores.jsonl`` (and ``hopscore score``, ``compare``, ``report``) work on
HDR as on every other benchmark.

Gold: an HDR task file (release JSONL or category folder, :mod:`.tasks`).
Predictions: ``grades.jsonl``, one row per attempt: ``instance_id``, ``attempt`` (0-based),
``repeats`` (k, the attempts per task), ``correct`` (true, false, or null when the attempt was
not graded) and optionally ``final_answer``.

Metrics, per task over its k attempts (an attempt that is absent or not graded counts as a
failure):

* ``accuracy``: the share of the task's attempts that are correct. Its mean over tasks is
  Avg@k, the mean success over all k*N attempts (plain accuracy when k = 1);
* ``pass_at_k`` (reported when k > 1): 1 when at least one attempt is correct. Its mean is
  Pass@k;
* ``pass@1`` ... ``pass@k`` (reported when k > 1): the unbiased estimate of the chance that at
  least one of j attempts drawn from the task's k is correct, 1 - C(k-c, j) / C(k, j) for c
  correct attempts (:mod:`hopscore.inference.passk`); ``pass@1`` equals ``accuracy`` and
  ``pass@k`` equals ``pass_at_k``.

Means over tasks are task-weighted (micro), as the HDR leaderboard computes "overall"; the
groups are the families (``family``: SQL2S, S2SQL, Parallel).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hopscore.benchmarks.base import Benchmark, Example, Prediction, Predictions
from hopscore.benchmarks.fast_init import fast_init
from hopscore.errors import InputError
from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl
from hopscore.inference.passk import pass_curve, pass_names

if TYPE_CHECKING:
    from hopscore.benchmarks.agent_tasks import HdrTask


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HdrExample(Example):
    #: the family label: SQL2S, S2SQL or Parallel
    family: str = ""
    #: gold answer (SQL2S, Parallel) or gold SQL (S2SQL)
    gold: str = ""

    def groups(self) -> dict[str, str]:
        return {"family": self.family}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.gold,) if self.gold else ()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HdrPrediction(Prediction):
    #: one verdict per attempt (index = attempt); None: not graded
    verdicts: tuple[bool | None, ...] = ()
    #: attempts per task
    repeats: int = 1

    @property
    def solved(self) -> int:
        return sum(verdict is True for verdict in self.verdicts)


class HybridDeepResearch(Benchmark[HdrExample, HdrPrediction]):
    name = "hybrid-deep-research"
    title = "HybridDeepResearch"
    also_called = ("hybriddeepresearch", "hdr")
    metrics = ("accuracy", "pass_at_k")
    headline = ("accuracy",)
    group_keys = ("family",)
    gold_formats = "HDR task JSONL (release/preview) or a folder with the three category files"
    prediction_formats = "grades.jsonl of hopscore run hybrid-deep-research (one row per attempt)"
    predictions_file = "grades.jsonl"
    runner = "agent"
    #: the invented world ``hopscore agent`` runs on without task files (docs/hdr-world.md)
    agent_world = "world"
    agent_key = "hdr"
    short_title = "HDR"

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[HdrExample]:
        from hopscore.benchmarks.agent_tasks import read_tasks

        return [self.task_example(t) for t in read_tasks(path)]

    def task_example(self, task: HdrTask) -> HdrExample:
        return HdrExample(id=task.id, question=task.final_question, family=task.family.label,
                          gold=task.gold or "")

    def load_predictions(self, path: Path) -> Predictions[HdrPrediction]:
        verdicts: dict[str, dict[int, bool | None]] = {}
        answers: dict[str, str | None] = {}
        repeats = 1
        for where, value in iter_jsonl(path):
            record = Fields(value, where)
            task_id = record.id("instance_id")
            attempt = record.int("attempt", 0)
            repeats = max(repeats, record.int("repeats", 1), attempt + 1)
            if attempt < 0:
                raise record.error("attempt", "must be >= 0")
            correct = record.bool("correct", None, nullable=True)
            seen = verdicts.setdefault(task_id, {})
            if attempt in seen:
                raise InputError(where, f"a second row for {task_id!r} attempt {attempt}",
                                 field="attempt")
            seen[attempt] = correct
            if attempt == 0:
                answers[task_id] = record.str("final_answer", None, nullable=True)
        by_id = {
            task_id: HdrPrediction(id=task_id, answer=answers.get(task_id),
                                   verdicts=tuple(seen.get(i) for i in range(repeats)),
                                   repeats=repeats)
            for task_id, seen in verdicts.items()
        }
        return Predictions(by_id, str(path), "hdr-grades")

    #: attempts per task of the predictions being scored (set by :meth:`active_metrics`)
    _repeats = 1

    def active_metrics(self, predictions: Predictions[HdrPrediction]) -> tuple[str, ...]:
        k = max((p.repeats for p in predictions.by_id.values()), default=1)
        self._repeats = k
        return (*self.metrics, *pass_names(k)) if k > 1 else ("accuracy",)

    def score(self, example: HdrExample, prediction: HdrPrediction | None) -> dict[str, float]:
        k = max(self._repeats, prediction.repeats if prediction is not None else 1)
        solved = prediction.solved if prediction is not None else 0
        values = {"accuracy": solved / k, "pass_at_k": float(solved > 0)}
        if k > 1:
            values.update(zip(pass_names(k), pass_curve(k, solved), strict=True))
        return values
