"""QuaRTz: multiple-choice accuracy (``official-metrics.md`` §4).

Gold: the QuaRTz JSON Lines release (``quartz-dataset-v1-aug2019/{train,dev,test}.jsonl``), one
``{"id", "question": {"stem", "choices": [{"label", "text"}, ...]}, "answerKey", "para",
"para_id", ...}`` per line. ``answerKey`` must be one of the question's choice labels.

Predictions, any of:

* universal JSON Lines ``{"id", "answer"}`` (or ``{"id", "label"}`` with a choice label);
* the AllenAI leaderboard CSV: one ``question_id,answer_label`` per line, no header (the format
  of the ARC, OpenBookQA and QASC leaderboards; a first line whose first cell is ``id``,
  ``question_id`` or ``questionID`` is taken as a header and skipped).

How a predicted answer becomes a choice (``label`` is used as is):

1. the stripped text is a choice label (``"A"``);
2. it starts with a choice label followed by ``.``, ``)`` or ``:`` (``"A. decrease"``,
   ``"B) increase"``), or with ``(A)``; the label decides, whatever follows;
3. its SQuAD-normalized text equals the normalized text of exactly one choice (``"Decrease."``).

Anything else (an empty answer, "Because ...", text naming both choices) matches no choice and
scores 0; it still counts as a prediction. Labels are case-sensitive, as in the data.

MCR's ``quartz`` evaluator takes the first character of the text before the first ``.``
(newlines removed) and compares it with ``answerKey``. On answers of forms 1 and 2 (except
``(A)``) it agrees with us. It differs elsewhere: it counts any answer starting with the letter
of the key ("Because ..." for B), misses choice texts ("decrease"), and treats an empty answer as
an abstention left out of its mean, where we score 0 and keep the question in the denominator.
There is no official QuaRTz scorer beyond leaderboard accuracy on labels; we follow that.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import (
    Benchmark,
    Example,
    ModelAnswer,
    Prediction,
    Predictions,
    PromptInputs,
    SuiteFiles,
    check_unique_ids,
    load_universal,
)
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.quartz import hub
from hopscore.errors import InputError, Location
from hopscore.files.atomic import write_text_atomic
from hopscore.files.fields import Fields
from hopscore.files.io import csv_rows, iter_jsonl, read_text
from hopscore.text.normalize import normalize_answer

Choice = tuple[str, str]
_LABEL_PREFIX = re.compile(r"\(?(?P<label>[^\s.():]+)[.):]")
_HEADER_CELLS = frozenset({"id", "question_id", "questionid", "qid"})


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class QuartzExample(Example):
    answer_key: str
    choices: tuple[Choice, ...]
    para: str = ""

    def gold_answers(self) -> tuple[str, ...]:
        text = dict(self.choices)[self.answer_key]
        return (f"{self.answer_key}. {text}",)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class QuartzPrediction(Prediction):
    label: str | None = None

    def answer_text(self) -> str | None:
        return self.label if self.label is not None else self.answer


def resolve_choice(answer: str, choices: tuple[Choice, ...]) -> str | None:
    """The label a free-text answer names, or None when it names no single choice."""
    labels = {label for label, _ in choices}
    stripped = answer.strip()
    if stripped in labels:
        return stripped
    prefix = _LABEL_PREFIX.match(stripped)
    if prefix and prefix.group("label") in labels:
        return prefix.group("label")
    normalized = normalize_answer(stripped)
    matches = [label for label, text in choices if normalize_answer(text) == normalized]
    return matches[0] if len(matches) == 1 else None


class QuaRTz(Benchmark[QuartzExample, QuartzPrediction]):
    name = "quartz"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    hub_id_field = "id"
    title = "QuaRTz"
    metric_functions = "hopscore.benchmarks.quartz.per_example"
    error_categories = "hopscore.benchmarks.quartz.categories"
    metrics = ("accuracy",)
    headline = ("accuracy",)
    gold_formats = "QuaRTz JSONL (id, question {stem, choices [{label, text}]}, answerKey, para)"
    prediction_formats = (
        "universal JSONL (answer = label or choice text); AllenAI leaderboard CSV id,label"
    )

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[QuartzExample]:
        examples = [_gold_record(Fields(value, where)) for where, value in iter_jsonl(path)]
        if not examples:
            raise InputError(path, "no questions found")
        return check_unique_ids(examples, path)

    def load_predictions(self, path: Path) -> Predictions[QuartzPrediction]:
        text = read_text(path)
        if text.lstrip()[:1] in ("{", "["):
            if text.lstrip()[:1] == "[":
                raise InputError(
                    path, "expected JSON Lines (one object per line) or a CSV of id,label"
                )
            return Predictions(load_universal(path, _universal_record), str(path), "universal")
        return Predictions(_read_leaderboard_csv(path, text), str(path), "leaderboard-csv")

    def score(
        self, example: QuartzExample, prediction: QuartzPrediction | None
    ) -> dict[str, float]:
        if prediction is None:
            return {"accuracy": 0.0}
        if prediction.label is not None:
            chosen: str | None = prediction.label
        elif prediction.answer is not None:
            chosen = resolve_choice(prediction.answer, example.choices)
        else:
            chosen = None
        return {"accuracy": float(chosen == example.answer_key)}

    def is_missing(self, example: QuartzExample, prediction: QuartzPrediction | None) -> bool:
        return prediction is None or (prediction.answer is None and prediction.label is None)

    answer_kind = "choice"
    mcr_evaluator = "quartz"
    predictions_file = "predictions.csv"

    answer_metric = "accuracy"
    demo_position = 2
    suite_files = SuiteFiles(2, ("quartz", "quartz-dataset-v1-aug2019"),
                             ("dev.jsonl", "quartz-dataset-v1-aug2019/dev.jsonl"))
    suite_layout = "quartz/dev.jsonl"
    mcr_metric = "accuracy"

    def mcr_score(self, prediction: str, gold: str) -> float | None:
        """MCR's rule: the first character of the text before the first "." equals the answer
        key; an empty answer is None (MCR counts it as an abstention)."""
        first = prediction.split(".")[0].replace("\n", "")[:1]
        if not first:
            return None
        return float(first == gold)

    def prompt_variables(self, example: QuartzExample, inputs: PromptInputs) -> dict[str, Any]:
        """Paragraph, question and choices; MCR's question appends "A. text B. text"."""
        listed = " ".join(f"{label}. {text}" for label, text in example.choices)
        return {
            "question": example.question, "mcr_question": f"{example.question} {listed}",
            "para": example.para,
            "choices": [{"label": label, "text": text} for label, text in example.choices],
        }  # fmt: skip

    def mcr_gold(self, example: QuartzExample) -> str:
        return example.answer_key

    def make_prediction(self, example: QuartzExample, answer: ModelAnswer) -> QuartzPrediction:
        """The label the answer names ("" when it names none, which scores 0)."""
        label = resolve_choice(answer.text, example.choices) if answer.text else None
        return QuartzPrediction(id=example.id, label=label or "")

    def write_predictions(self, predictions: Sequence[QuartzPrediction], path: Path) -> None:
        """The AllenAI leaderboard CSV: ``question_id,answer_label`` lines, no header."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        for p in predictions:
            writer.writerow([p.id, p.label or ""])
        write_text_atomic(path, buffer.getvalue())


def _gold_record(record: Fields) -> QuartzExample:
    question = Fields(record.dict("question"), record.where)
    choices = []
    for index, item in enumerate(question.list("choices")):
        label = item.get("label") if isinstance(item, dict) else None
        text = item.get("text") if isinstance(item, dict) else None
        if not isinstance(label, str) or not isinstance(text, str):
            raise record.error(
                f"question.choices[{index}]",
                f'expected {{"label": str, "text": str}}, got {item!r}',
            )
        choices.append((label, text))
    labels = [label for label, _ in choices]
    if len(set(labels)) != len(labels):
        raise record.error("question.choices", f"repeated labels {labels}")
    answer_key = record.str("answerKey")
    if answer_key not in labels:
        raise record.error("answerKey", f"{answer_key!r} is not a choice label ({labels})")
    return QuartzExample(
        id=record.id("id"),
        question=question.str("stem", ""),
        answer_key=answer_key,
        choices=tuple(choices),
        para=record.str("para", ""),
    )


def _universal_record(record: Fields, example_id: str) -> QuartzPrediction:
    if record.has("label"):
        return QuartzPrediction(id=example_id, label=record.str("label"))
    return QuartzPrediction(id=example_id, answer=record.str("answer"))


def _read_leaderboard_csv(path: Path, text: str) -> dict[str, QuartzPrediction]:
    out: dict[str, QuartzPrediction] = {}
    seen: dict[str, int] = {}
    for line, row in csv_rows(path, text.lstrip("\ufeff").splitlines(keepends=True)):
        if not any(cell.strip() for cell in row):
            continue
        where = Location(str(path), line=line)
        if not seen and not out and row[0].strip().lower() in _HEADER_CELLS:
            continue
        if len(row) != 2:
            raise InputError(where, f"expected question_id,answer_label; got {len(row)} cells")
        qid, label = row[0].strip(), row[1].strip()
        if not qid:
            raise InputError(where, "empty question id")
        if qid in seen:
            raise InputError(where, f"duplicate id {qid!r} (first seen at line {seen[qid]})")
        seen[qid] = line
        out[qid] = QuartzPrediction(id=qid, label=label)
    if not out:
        raise InputError(path, "no predictions found")
    return out
