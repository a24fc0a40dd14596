"""MuSiQue (Ans and Full): answer, support and sufficiency metrics of ``evaluate_v1.0.py``.

Gold: the official JSON Lines (``musique_ans_v1.0_dev.jsonl``, ``musique_full_v1.0_dev.jsonl``:
``id, paragraphs[{idx, title, paragraph_text, is_supporting}], question,
question_decomposition, answer, answer_aliases, answerable``), or a JSON list of the same
records; Hub copies and FlashRAG's ``musique/dev.jsonl`` through :mod:`.hub`.
Predictions: the official JSON Lines ``{id, predicted_answer, predicted_support_idxs,
predicted_answerable}`` (two lines per id for MuSiQue-Full), or the universal
``{id, answer, support, answerable}``.

Metrics (StonyBrookNLP/musique @ 922ac98, :mod:`.official_scores`): ``answer_em`` and
``answer_f1`` over the answer and its aliases, ``support_em/f1/prec/recall`` over paragraph
indices, each on the answerable line of a question; with MuSiQue-Full predictions (two lines per
id) also ``sufficiency`` (both lines' ``predicted_answerable`` right, in file order) and the
group metrics ``group_answer_sufficiency_em/f1`` and ``group_support_sufficiency_em/f1``
(the answerable line's scores, zeroed unless the sufficiency is right). Every one is a mean over
questions, which is the official mean over answerable lines. The official script prints only
``answer_f1``, ``answer_em``, ``support_f1`` and the two group F1s, rounded to 3 decimals; the
others are its own intermediate values.

Where we differ: the official script aligns the prediction lines with the gold lines by
position and aborts on a missing, extra or reordered line; hopscore joins them by id (a question
without a prediction scores 0 and stays in the denominator; the two lines of one id keep their
file order). A null or non-string answer, or a paragraph index ``int()`` rejects, crashes the
official script and is an error naming the line here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import Benchmark, ModelAnswer, Predictions, PromptInputs
from hopscore.benchmarks.citations import CitedPart
from hopscore.benchmarks.formats import warn_unpredicted
from hopscore.benchmarks.musique import files, hub
from hopscore.benchmarks.musique.example import Line, MusiqueExample, MusiquePrediction
from hopscore.benchmarks.musique.official_scores import (
    ZERO4,
    answer_scores,
    sufficient,
    support_scores,
)
from hopscore.benchmarks.musique.reply import cited_support, evidence_support, paragraph_variables
from hopscore.errors import HopscoreError, InputError
from hopscore.files.atomic import write_jsonl_atomic

ANS_METRICS = ("answer_em", "answer_f1", "support_em", "support_f1", "support_prec",
               "support_recall")
FULL_METRICS = ("sufficiency", "group_answer_sufficiency_em", "group_answer_sufficiency_f1",
                "group_support_sufficiency_em", "group_support_sufficiency_f1")


class MuSiQue(Benchmark[MusiqueExample, MusiquePrediction]):
    name = "musique"
    title = "MuSiQue"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    hub_id_field = "id"
    metric_functions = "hopscore.benchmarks.musique.per_example"
    error_categories = "hopscore.benchmarks.musique.categories"
    cited_parts: ClassVar[tuple[CitedPart, ...]] = (
        CitedPart("support", "support metrics",
                  'paragraph numbers after a "Supporting paragraphs:" line'),
    )
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {
        "hopscore score": (
            "hopscore score musique -g musique_ans_v1.0_dev.jsonl -p predictions.jsonl",
            "hopscore score musique -g musique_full_v1.0_dev.jsonl -p full_predictions.jsonl",
        ),
        "hopscore run": (
            "hopscore run musique --gold musique_ans_v1.0_dev.jsonl "
            "--model openai/gpt-4o-mini --limit 200",
        ),
    }
    metrics = (*ANS_METRICS, *FULL_METRICS)
    headline = ("answer_em", "answer_f1", "support_f1")
    group_keys = ("hops", "type")
    #: its examples depend on the gold file alone: scoring keeps them between runs
    gold_examples_kept = True
    adds_one_by_one = True  # the official metric classes' ``self._total_f1 += f1``
    gold_formats = ("official JSON Lines (musique_ans/full_v1.0_dev.jsonl) or a JSON list of "
                    "its records")
    prediction_formats = ("official JSONL {id, predicted_answer, predicted_support_idxs, "
                          "predicted_answerable}; universal JSONL {id, answer, support, "
                          "answerable}")
    predictions_file = "predictions.jsonl"
    answer_metric = "answer_f1"
    mcr_evaluator = "em"
    evidence = "context"

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[MusiqueExample]:
        return files.load_gold(path)

    def load_predictions(self, path: Path) -> Predictions[MusiquePrediction]:
        by_id, official = files.load_predictions(path)
        predictions = Predictions(by_id, str(path), "official" if official else "universal")
        warn_unpredicted(predictions, "support", _has_support, "support metrics")
        return predictions

    def active_metrics(self, predictions: Predictions[MusiquePrediction]) -> tuple[str, ...]:
        """The group metrics exist for MuSiQue-Full predictions: two lines for some id."""
        if any(len(p.lines) == 2 for p in predictions.by_id.values()):
            return self.metrics
        return ANS_METRICS

    def score(self, example: MusiqueExample, prediction: MusiquePrediction | None
              ) -> dict[str, float]:
        lines = prediction.lines if prediction is not None else ()
        if prediction is not None and prediction.second_at and not example.is_full:
            raise InputError(prediction.second_at, f"duplicate id {example.id!r}: a "
                             "MuSiQue-Ans question has one prediction line (two only for a "
                             "MuSiQue-Full question's twins)", field="id")
        position = example.answerable_order.index(True)
        line = lines[position] if position < len(lines) else None
        answer = (0.0, 0.0)
        support = ZERO4
        if line is not None and line.answer is not None:
            answer = answer_scores(line.answer, example.answers_normalized)
        if line is not None and line.support is not None:
            support = support_scores(line.support, example.support)
        suff = prediction is not None and sufficient([x.answerable for x in lines],
                                                     example.answerable_order)
        keep = 1.0 if suff else 0.0
        return {
            "answer_em": answer[0], "answer_f1": answer[1],
            "support_em": support[0], "support_f1": support[1],
            "support_prec": support[2], "support_recall": support[3],
            "sufficiency": keep,
            "group_answer_sufficiency_em": answer[0] * keep,
            "group_answer_sufficiency_f1": answer[1] * keep,
            "group_support_sufficiency_em": support[0] * keep,
            "group_support_sufficiency_f1": support[1] * keep,
        }  # fmt: skip

    def is_missing(self, example: MusiqueExample, prediction: MusiquePrediction | None) -> bool:
        return prediction is None or all(line.answer is None for line in prediction.lines)

    # --- model runs ---

    def prompt_variables(self, example: MusiqueExample, inputs: PromptInputs) -> dict[str, Any]:
        if example.is_full:
            raise HopscoreError(
                f"{example.id}: hopscore run asks one prompt per question, and a MuSiQue-Full "
                "question is two (its answerable and unanswerable twins); run the model on "
                "MuSiQue-Ans, or score MuSiQue-Full predictions made elsewhere")
        return paragraph_variables(example.question, example.paragraphs)

    def make_prediction(self, example: MusiqueExample, answer: ModelAnswer) -> MusiquePrediction:
        """The answer, and as support the paragraphs the reply cites (else, for the chain
        strategies, the paragraphs their contexts came from)."""
        support = (cited_support(answer.output, example.paragraphs)
                   or evidence_support(answer.evidence_ids, example.paragraphs))
        line = Line(answer.text or "", support, True)
        return MusiquePrediction(id=example.id, answer=line.answer, lines=(line,))

    def prediction_details(self, prediction: MusiquePrediction) -> dict[str, Any]:
        line = prediction.lines[0] if prediction.lines else None
        return {"support": list(line.support or ()) if line else []}

    def write_predictions(self, predictions: Sequence[MusiquePrediction], path: Path) -> None:
        """The official prediction JSON Lines, in the order given (a run's: the gold's)."""
        write_jsonl_atomic(path, (
            {"id": p.id, "predicted_answer": line.answer or "",
             "predicted_support_idxs": list(line.support or ()),
             "predicted_answerable": True if line.answerable is None else line.answerable}
            for p in predictions for line in p.lines))


def _has_support(prediction: MusiquePrediction) -> bool:
    return any(line.support is not None for line in prediction.lines)
