"""Open-domain QA as Search-R1, FlashRAG and R1-Searcher score it: EM, sub-EM, F1 and
cover-EM side by side, each equal to its reference (``new-benchmarks.md`` §5, §6).

Any of the seven datasets of the Search-R1 / FlashRAG suite (NQ, TriviaQA, PopQA, HotpotQA,
2WikiMultihopQA, MuSiQue, Bamboogle) in FlashRAG's ``{id, question, golden_answers}`` JSONL, or
R1-Searcher's ``eval_set`` / ``eval_results`` files (:mod:`.records`). Metrics, each a rule of
:mod:`.rules`:

* ``em``: FlashRAG ``em`` = Search-R1 ``em_check`` (SQuAD normalization, any gold);
* ``sub_em``: FlashRAG ``acc`` = Search-R1 ``subem_check`` (a gold is a character substring);
* ``f1``: FlashRAG ``f1`` (F1, precision and recall maxed over golds independently);
* ``cover_em``: R1-Searcher's ACC_R (``cover_exact_match_score_1``);
* ``r1_em``, ``r1_f1``: R1-Searcher's EM and F1 (its own normalization: punctuation becomes
  a space);
* ``qa_em`` (when replies carry ``<answer>`` tags): Search-R1's reward, the last complete
  ``<answer>`` span scored by ``em_check``, 0 without one;
* ``acc_l`` (when the predictions carry a judge's verdict, R1-Searcher's ``gpt4o_output``):
  the share judged "True"; ``hopscore score --judge`` adds ``judge_accuracy`` for any file,
  by default with the ``acc_l`` preset (R1-Searcher's True/False protocol, our own wording).

A reply holding ``<answer>`` is scored on its last span (R1-Searcher's extraction) by every
metric but ``qa_em``. Unlike R1-Searcher (first 2,000 rows) and FlashRAG papers (often the first
1,000), every gold row is scored; a missing prediction scores 0 and stays in the denominator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import (
    Benchmark,
    ModelAnswer,
    Predictions,
    PromptInputs,
)
from hopscore.benchmarks.judge_presets import JudgePresetSpec
from hopscore.benchmarks.openqa import hub, presets
from hopscore.benchmarks.openqa.predictions import read_predictions
from hopscore.benchmarks.openqa.records import (
    DATASETS,
    OpenQAExample,
    OpenQAPrediction,
    read_gold,
)
from hopscore.benchmarks.openqa.rules import (
    exact_em,
    flashrag_prf,
    r1_scores,
    search_r1_answer,
    squad_golds,
    sub_em,
)
from hopscore.errors import HopscoreError
from hopscore.files.atomic import write_jsonl_atomic
from hopscore.text.normalize import normalize_answer

#: The metrics every prediction file gets, in display order.
BASE_METRICS = ("em", "sub_em", "f1", "cover_em", "r1_em", "r1_f1")
#: How far apart (as a fraction) two accuracies may be before the table says why.
GAP = 0.05


class OpenQA(Benchmark[OpenQAExample, OpenQAPrediction]):
    name = "openqa"
    title = "Open-domain QA (the Search-R1 suite)"
    short_title = "Open QA"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    metric_functions = "hopscore.benchmarks.openqa.per_example"
    error_categories = "hopscore.benchmarks.openqa.categories"
    metrics: ClassVar[tuple[str, ...]] = (*BASE_METRICS, "qa_em", "acc_l")
    headline = ("em", "cover_em", "f1")
    group_keys: ClassVar[tuple[str, ...]] = ("dataset",)
    predictions_file = "predictions.jsonl"
    gold_formats = (
        "FlashRAG JSONL {id, question, golden_answers} (nq, triviaqa, popqa, hotpotqa, "
        "2wikimultihopqa, musique, bamboogle: from a dataset/data_source field or the path); "
        "R1-Searcher eval_set {idx, question, answer} or eval_results")
    prediction_formats = (
        "universal JSONL {id, answer[, reply]} (<answer> tags read); R1-Searcher eval_results "
        "{question, answer, pred_ans, gpt4o_output} (ids = line positions); FlashRAG "
        "intermediate_data.json")
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore score": (
        "hopscore score openqa -g nq/test.jsonl -p pred.jsonl",
        "hopscore score openqa -g bamboogle_qwen.jsonl -p bamboogle_qwen.jsonl",
    ), "hopscore suite preset": (
        "hopscore suite preset search-r1 -d FlashRAG_datasets --model openai/gpt-4o-mini",
        "hopscore suite preset r1-searcher -d R1-Searcher/data/eval_set --model "
        "local/smollm2 --limit 3",
    )}

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[OpenQAExample]:
        return read_gold(path)

    def load_predictions(self, path: Path) -> Predictions[OpenQAPrediction]:
        return read_predictions(path)

    def active_metrics(self, predictions: Predictions[OpenQAPrediction]) -> tuple[str, ...]:
        found = predictions.by_id.values()
        tagged = ("qa_em",) if any(p.reply is not None for p in found) else ()
        judged = ("acc_l",) if any(p.verdict is not None for p in found) else ()
        return (*BASE_METRICS, *tagged, *judged)

    def score(self, example: OpenQAExample, prediction: OpenQAPrediction | None
              ) -> dict[str, float]:
        if prediction is None or prediction.answer is None:
            return dict.fromkeys(self.metrics, 0.0)
        if prediction.question is not None and not _same_question(prediction.question,
                                                                  example.question):
            raise HopscoreError(
                f"{prediction.source}: prediction {example.id} asks {prediction.question!r} "
                f"but gold {example.id} asks {example.question!r}: the predictions have no ids "
                "and are read by position; give the same file as the gold too (an R1-Searcher "
                "results file holds its gold answers)")
        return answer_scores(prediction.answer, example.answers, prediction.reply,
                             prediction.verdict)

    note_texts: ClassVar[dict[str, str]] = {
        "cover_gap": "cover-EM (R1-Searcher's ACC_R) is well above EM: answers hold every gold "
        "word but say more (\"Paris, France\"), which EM counts wrong; papers quoting \"EM\" "
        "may mean either (docs/benchmarks.md, Open QA)",
        "sub_gap": "sub-EM (FlashRAG's acc) is well above EM: a gold answer is inside a longer "
        "answer, or a digit inside a number (\"1\" in \"1990\")",
        "judge_gap": "the judge and EM differ by more than 5 points: a judge accepts aliases "
        "and verbose answers EM rejects (and may accept wrong ones); report both",
    }

    def summary_notes(self, metrics: Mapping[str, float]) -> tuple[str, ...]:
        em = metrics.get("em", 0.0)
        notes = []
        if metrics.get("cover_em", 0.0) - em > GAP:
            notes.append("cover_gap")
        if metrics.get("sub_em", 0.0) - em > GAP:
            notes.append("sub_gap")
        judged = [metrics[k] for k in ("judge_accuracy", "acc_l") if k in metrics]
        if any(abs(value - em) > GAP for value in judged):
            notes.append("judge_gap")
        return tuple(notes)

    suite_presets = presets.PRESETS
    judge_presets: ClassVar[dict[str, JudgePresetSpec]] = {
        "acc_l": JudgePresetSpec(
            "judge_acc_l.txt", "hopscore.benchmarks.openqa.judge_verdict",
            about="R1-Searcher's ACC_L: is the answer's meaning the reference's? True/False"),
    }
    judge_preset = "acc_l"
    answer_kind = "span"

    def prompt_variables(self, example: OpenQAExample, inputs: PromptInputs) -> dict[str, Any]:
        question = example.question.strip()
        if not question.endswith("?"):  # as Search-R1's qa_search_test_merge.py asks it
            question += "?"
        return {"question": question, "mcr_question": question}

    def make_prediction(self, example: OpenQAExample, answer: ModelAnswer) -> OpenQAPrediction:
        reply = answer.output if "<answer>" in answer.output else None
        if reply is not None:
            from hopscore.benchmarks.openqa.rules import r1searcher_answer

            return OpenQAPrediction(id=example.id, answer=r1searcher_answer(reply), reply=reply)
        return OpenQAPrediction(id=example.id, answer=answer.text or "")

    def prediction_details(self, prediction: OpenQAPrediction) -> dict[str, Any]:
        return {"reply": prediction.reply} if prediction.reply is not None else {}

    def write_predictions(self, predictions: Sequence[OpenQAPrediction], path: Path) -> None:
        write_jsonl_atomic(path, (_universal(p) for p in predictions))


def answer_scores(answer: str, golds: Sequence[str], reply: str | None = None,
                  verdict: bool | None = None) -> dict[str, float]:
    """Every metric of one answer against its golds (``reply``: the whole tagged reply, for
    ``qa_em``; ``verdict``: a recorded judge verdict, for ``acc_l``)."""
    squad = squad_golds(golds)
    pred = normalize_answer(answer)
    r1_em, r1_f1, covered = r1_scores(answer, golds)
    tagged = search_r1_answer(reply) if reply is not None else None
    return {
        "em": exact_em(pred, squad),
        "sub_em": sub_em(pred, squad),
        "f1": flashrag_prf(pred, squad)[0],
        "cover_em": covered,
        "r1_em": r1_em,
        "r1_f1": r1_f1,
        "qa_em": 0.0 if tagged is None else exact_em(normalize_answer(tagged), squad),
        "acc_l": float(verdict is True),
    }


def _same_question(left: str, right: str) -> bool:
    return " ".join(left.split()) == " ".join(right.split())


def _universal(prediction: OpenQAPrediction) -> dict[str, Any]:
    out: dict[str, Any] = {"id": prediction.id, "answer": prediction.answer or ""}
    if prediction.reply is not None:
        out["reply"] = prediction.reply
    return out


__all__ = ["DATASETS", "OpenQA", "OpenQAExample", "OpenQAPrediction", "answer_scores"]
