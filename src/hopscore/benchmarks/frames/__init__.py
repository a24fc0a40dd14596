"""FRAMES (Krishna et al. 2024, arXiv 2409.12941; google/frames-benchmark): 824 questions that
each need 2 to 15 Wikipedia articles, labelled with reasoning types.

**Official metric**: accuracy as judged by an LLM rater that decides whether the ground truth
answer is present in the response (TRUE/FALSE), overall and per reasoning type. No scorer code
exists; the paper gives the rater's prompt. ``hopscore score frames --judge`` runs it with this
benchmark's ``rater`` judge preset (its own wording of the paper's rater, ``judge_rater.txt``,
read by :mod:`hopscore.benchmarks.frames.rater`) and reports ``judge_accuracy`` overall and per
group. A question counts in every reasoning type it carries, so the per-type counts add up to
more than the questions.

**Rule metrics** (no judge): ``em`` and ``f1`` (SQuAD normalization, best over the gold
answers) and ``contains`` (the normalized gold answer occurs as whole words in the normalized
response: the rater's question asked of the text alone). They are not the paper's metric.

Gold: :mod:`hopscore.benchmarks.frames.gold` (the official TSV revisions, CSV, JSON list, JSON
Lines). Predictions: JSON Lines ``{"id", "answer"}`` (``index`` for ``id`` and ``response``
for ``answer`` are accepted: ``{index, Prompt, response}`` rows) or a JSON object
``{id: answer}``.

Settings for ``hopscore run frames``: the question alone (no retrieval, the paper's naive
prompt); ``--corpus pages.jsonl --retrieve-k N`` (BM25 top-N over a user corpus, the paper's
BM25-R with whole articles as documents); the oracle setting, with every linked article in the
prompt, from ``--documents FILE`` (:mod:`hopscore.benchmarks.frames.documents`) or from the
gold's own ``wiki_items``; multi-step retrieval is an agent's (``--agent``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import (
    Benchmark,
    ModelAnswer,
    Prediction,
    Predictions,
    PromptInputs,
)
from hopscore.benchmarks.frames import hub
from hopscore.benchmarks.frames.documents import read_pages
from hopscore.benchmarks.frames.example import GROUP_KEYS, FramesExample
from hopscore.benchmarks.frames.gold import read_gold
from hopscore.benchmarks.frames.per_example import frames_answer
from hopscore.benchmarks.frames.predictions import read_predictions
from hopscore.benchmarks.judge_presets import JudgePresetSpec
from hopscore.files.atomic import write_jsonl_atomic

METRICS = ("em", "f1", "contains")


class Frames(Benchmark[FramesExample, Prediction]):
    name = "frames"
    title = "FRAMES"
    #: answers are phrases whose parentheses and semicolons belong to them
    answer_kind = "text"
    metrics = METRICS
    headline = ("em", "contains")
    group_keys = GROUP_KEYS
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    hub_id_field = "id"
    gold_is_json_list = True
    metric_functions = "hopscore.benchmarks.frames.per_example"
    error_categories = "hopscore.benchmarks.frames.categories"
    gold_formats = ("google/frames-benchmark test.tsv (any revision) or CSV with Prompt, Answer, "
                    "reasoning_types, wiki_links; JSON list or JSON Lines of the same fields "
                    "(Question for Prompt, id; wiki_items)")
    prediction_formats = "JSON Lines {id|index, answer|response}; JSON object {id: answer}"
    predictions_file = "predictions.jsonl"
    judge_presets: ClassVar[dict[str, JudgePresetSpec]] = {
        "rater": JudgePresetSpec("judge_rater.txt", "hopscore.benchmarks.frames.rater",
                                 about="the paper's auto-rater: is the ground truth answer "
                                 "present in the response? Explanation, then Decision: "
                                 "TRUE/FALSE"),
    }
    judge_preset = "rater"
    run_options = ("--documents",)
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore score": (
        "hopscore score frames -g test.tsv -p pred.jsonl --judge --judge-model gpt-4.1",
    )}

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[FramesExample]:
        return read_gold(path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        return read_predictions(path)

    def score(self, example: FramesExample, prediction: Prediction | None) -> dict[str, float]:
        if prediction is None or prediction.answer is None:
            return dict.fromkeys(METRICS, 0.0)
        return frames_answer(prediction.answer, list(example.answers))

    def prompt_variables(self, example: FramesExample, inputs: PromptInputs) -> dict[str, Any]:
        if inputs.documents is not None:
            pages = read_pages(inputs.documents).for_example(example.id, example.wiki_links)
            oracle = [{"title": p.title, "text": p.text} for p in pages]
        else:
            oracle = [{"title": t, "text": x} for t, x in example.articles]
        return {"question": example.question, "mcr_question": example.question,
                "oracle": oracle}

    def make_prediction(self, example: FramesExample, answer: ModelAnswer) -> Prediction:
        return Prediction(id=example.id, answer=answer.text or "")

    def write_predictions(self, predictions: Sequence[Prediction], path: Path) -> None:
        write_jsonl_atomic(path, [{"id": p.id, "answer": p.answer or ""} for p in predictions])
