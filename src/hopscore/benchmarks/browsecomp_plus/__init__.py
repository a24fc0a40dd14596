"""BrowseComp-Plus (Chen et al. 2025, texttron/BrowseComp-Plus): deep-research agents over a
fixed corpus of about 100K documents, 830 queries, judged answers and judged documents.

Scored from the official run directory (one ``*.json`` per query: ``query_id``,
``tool_call_counts``, ``status``, ``retrieved_docids``, ``result``; :mod:`.rundir`) against the
decrypted queries and the qrels (:mod:`.gold`):

* ``accuracy``: the judge's verdict, when the run carries verdicts (a ``verdicts.jsonl`` or
  ``judge.jsonl`` in the run directory, or a ``judge`` object per query); a run that did not
  complete, or whose last result item is no ``output_text``, is wrong without a verdict, as in
  ``evaluate_run.py``. ``hopscore score --judge`` grades the responses itself instead
  (``judge_accuracy``) with its preset ``browsecomp`` (:data:`JUDGE_TEMPLATE`, the default
  of ``--judge-preset``), whose four fields hopscore's judge parser reads;
* ``evidence_recall`` / ``gold_recall``: the share of the query's evidence / gold documents
  among ``retrieved_docids``;
* ``search_calls``: calls of the ``search`` tool in ``tool_call_counts``;
* ``completed``: ``status == "completed"``.

**Where we differ from ``evaluate_run.py``:** every query of the gold counts (830 for the full
set): a query without a run file scores 0 on every metric and stays in the denominator, while
the official script divides by the run files it found, so a run that skips hard queries scores
higher there. The calibration error (:func:`.summary.summarize`) counts every bin; the official
one leaves out its last bin (see :mod:`.measures`).

A TREC run file instead (the retrieval-only track) gives ``evidence_ndcg@10``,
``evidence_recall@5/100/1000`` and the same four against the gold qrels, as
``trec_eval -c -m recall.5,100,1000 -m ndcg_cut.10`` does: a query with no run lines scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import Benchmark, ModelAnswer, Predictions, PromptInputs
from hopscore.benchmarks.browsecomp_plus import gold as gold_files
from hopscore.benchmarks.browsecomp_plus import rundir
from hopscore.benchmarks.browsecomp_plus.gold import BrowseCompPlusExample
from hopscore.benchmarks.browsecomp_plus.measures import set_recall
from hopscore.benchmarks.browsecomp_plus.per_example import (
    CUTOFFS,
    NDCG_CUTOFF,
    browsecomp_plus_retrieval,
)
from hopscore.benchmarks.browsecomp_plus.rundir import BrowseCompPlusPrediction
from hopscore.benchmarks.judge_presets import JudgePresetSpec

RUN_METRICS = ("accuracy", "evidence_recall", "gold_recall", "search_calls", "completed")
RETRIEVAL_METRICS = tuple(
    f"{which}_{name}" for which in ("evidence", "gold")
    for name in (f"ndcg@{NDCG_CUTOFF}", *(f"recall@{k}" for k in CUTOFFS)))

#: The judge preset: the four-field BrowseComp layout (``extracted_final_answer``,
#: ``reasoning``, ``correct``, ``confidence``) in hopscore's own words; the placeholders are
#: those of :mod:`hopscore.judge.prompt`.
JUDGE_FILE = "judge_browsecomp.txt"
JUDGE_TEMPLATE = (resources.files(__name__) / JUDGE_FILE).read_text(encoding="utf-8")


class BrowseCompPlus(Benchmark[BrowseCompPlusExample, BrowseCompPlusPrediction]):
    name = "browsecomp-plus"
    title = "BrowseComp-Plus"
    metric_functions = "hopscore.benchmarks.browsecomp_plus.per_example"
    metrics = (*RUN_METRICS, *RETRIEVAL_METRICS)
    headline = ("accuracy", "evidence_recall", "search_calls")
    error_categories = "hopscore.benchmarks.browsecomp_plus.categories"
    gold_formats = ("decrypted JSONL/parquet {query_id, query, answer[, evidence_docs, "
                    "gold_docs]}; a folder with it and/or topics-qrels/qrel_evidence.txt + "
                    "qrel_golds.txt")
    official_gold_suffixes = (".parquet",)
    prediction_formats = ("run directory (one JSON per query; optional verdicts.jsonl); "
                          "JSONL of run records; TREC run file (retrieval-only)")
    predictions_file = "run"
    judge_presets: ClassVar[Mapping[str, JudgePresetSpec]] = {
        "browsecomp": JudgePresetSpec(
            JUDGE_FILE, about="BrowseComp's four fields (extracted_final_answer, reasoning, "
            "correct, confidence); an answer that means the same counts, extra true detail "
            "allowed"),
    }
    judge_preset = "browsecomp"
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore score": (
        "hopscore score browsecomp-plus -g data/ -p runs/my-agent",
        "hopscore score browsecomp-plus -g topics-qrels/ -p bm25.trec",
    )}

    def load_gold(self, path: Path, *, aliases: Path | None = None
                  ) -> list[BrowseCompPlusExample]:
        return gold_files.load_gold(path)

    def load_predictions(self, path: Path) -> Predictions[BrowseCompPlusPrediction]:
        return rundir.load(path)

    def active_metrics(self, predictions: Predictions[BrowseCompPlusPrediction]
                       ) -> tuple[str, ...]:
        if predictions.format == rundir.TREC_RUN:
            return RETRIEVAL_METRICS
        if rundir.has_verdicts(predictions.by_id.values()):
            return RUN_METRICS
        return RUN_METRICS[1:]

    def score(self, example: BrowseCompPlusExample,
              prediction: BrowseCompPlusPrediction | None) -> dict[str, float]:
        if prediction is not None and prediction.ranking is not None:
            return retrieval_scores(example, prediction.ranking)
        if prediction is None:
            return {**dict.fromkeys(RUN_METRICS, 0.0), **dict.fromkeys(RETRIEVAL_METRICS, 0.0)}
        return {
            "accuracy": float(prediction.correct),
            "evidence_recall": set_recall(prediction.retrieved, example.evidence_qrels()),
            "gold_recall": set_recall(prediction.retrieved, example.gold_qrels()),
            "search_calls": float(prediction.calls(rundir.SEARCH_TOOL)),
            "completed": float(prediction.completed),
        }

    note_texts: ClassVar[dict[str, str]] = {
        "search_calls": "search_calls is a count per query, not a share: the table prints "
        "it times 100 like the other metrics (350.00 = 3.5 calls); metrics.json holds the "
        "plain mean",
    }

    def notes(self, values: Mapping[str, float]) -> tuple[str, ...]:
        return ("search_calls",) if values.get("search_calls", 0.0) > 0 else ()

    figure_texts: ClassVar[dict[str, str]] = {
        "calibration_error": "RMS calibration error (%) of the judge's confidences, answers "
        "sorted by confidence in bins of 100 (the remainder joins the last bin), every bin "
        "counted; verdicts of completed runs with a response, a verdict and a confidence",
        "calibration_error_official": "what evaluate_run.py reports for the same verdicts: "
        "0 below 100 verdicts, else the last bin left out of the sum (docs/benchmarks.md)",
    }

    def run_figures(self, examples: Sequence[BrowseCompPlusExample],
                    predictions: Sequence[BrowseCompPlusPrediction | None]
                    ) -> dict[str, float | None]:
        from hopscore.benchmarks.browsecomp_plus.summary import summarize

        by_id = {e.id: p for e, p in zip(examples, predictions, strict=True) if p is not None}
        found = summarize(examples, by_id).calibration
        return {"calibration_error": found.error if found.n else None,
                "calibration_error_official": found.official if found.n else None}

    # --- model runs (hopscore run): one answer per query, written as a run directory ---

    def prompt_variables(self, example: BrowseCompPlusExample, inputs: PromptInputs
                         ) -> dict[str, Any]:
        return {"question": example.question, "mcr_question": example.question}

    def make_prediction(self, example: BrowseCompPlusExample, answer: ModelAnswer
                        ) -> BrowseCompPlusPrediction:
        retrieved = answer.retrieved
        return BrowseCompPlusPrediction(
            id=example.id, answer=answer.output or answer.text or "",
            retrieved=tuple(retrieved or ()),
            tool_calls=(() if retrieved is None else ((rundir.SEARCH_TOOL, 1),)))

    def write_predictions(self, predictions: Sequence[BrowseCompPlusPrediction],
                          path: Path) -> None:
        rundir.write_run_dir(predictions, path)


def retrieval_scores(example: BrowseCompPlusExample, ranking: Sequence[str]
                     ) -> dict[str, float]:
    """One query's retrieval-only metrics against both qrels."""
    return browsecomp_plus_retrieval(ranking, example.evidence_qrels(), example.gold_qrels())
