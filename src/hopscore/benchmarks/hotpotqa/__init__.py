"""HotpotQA: answer, supporting-fact and joint metrics of ``hotpot_evaluate_v1.py``.

Gold: the official JSON list (``_id, question, answer, supporting_facts, context, type, level``).
Predictions: the official ``{"answer": {id: str}, "sp": {id: [[title, sent_id], ...]}}`` object,
or universal JSON Lines ``{"id", "answer", "sp"}``.

Parity notes (``official-metrics.md`` §1): answers use SQuAD normalization with the
yes/no/noanswer rule; supporting facts are exact ``(title, sent_id)`` sets; joint precision and
recall are products of the answer and sp precision/recall; every sum is divided by the number of
gold examples. Where the official script crashes we do not: a prediction object without ``"sp"``
is read as answer-only (sp metrics 0, with a warning), and a non-string answer or a sent_id that
is not an integer is an error naming the record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from hopscore.benchmarks.base import (
    Benchmark,
    ModelAnswer,
    Predictions,
    PromptInputs,
    SuiteFiles,
    check_unique_ids,
    load_universal,
)
from hopscore.benchmarks.citations import CitedPart
from hopscore.benchmarks.formats import (
    UNIVERSAL,
    official_ids,
    read_official_parts,
    universal_or_json,
    warn_unpredicted,
)
from hopscore.benchmarks.hotpotqa import hub
from hopscore.benchmarks.hotpotqa.example import (
    HotpotExample,
    HotpotPrediction,
    parse_context,
    parse_facts,
    quick_facts,
)
from hopscore.benchmarks.hotpotqa.official_scores import (
    ZERO4,
    answer_scores,
    joint_scores,
    supporting_fact_scores,
)
from hopscore.benchmarks.hotpotqa.reply_facts import (
    cited_facts,
    evidence_facts,
    paragraph_variables,
)
from hopscore.benchmarks.hotpotqa.stream import GoldReader, stream_gold
from hopscore.errors import InputError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json
from hopscore.files.jsonstream import is_json_list

#: official predictions files from this size on are indexed (numpy, a few bytes an id); a
#: smaller one is read whole by the checked reader, as fast as the index and without the
#: numpy import (0.08 s, a sixth of a 7,405-example score)
INDEX_MIN_BYTES = 4 << 20


class HotpotQA(Benchmark[HotpotExample, HotpotPrediction]):
    name = "hotpotqa"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    cited_parts: ClassVar[tuple[CitedPart, ...]] = (
        CitedPart("sp", "supporting-fact and joint metrics",
                  '[title, n] citations after a "Supporting facts:" line'),
    )
    hub_id_field = "_id"
    gold_is_json_list = True
    title = "HotpotQA"
    metric_functions = "hopscore.benchmarks.hotpotqa.per_example"
    error_categories = "hopscore.benchmarks.hotpotqa.categories"
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {
        "hopscore": (
            "hopscore score hotpotqa --gold hotpot_dev_distractor_v1.json --predictions pred.json "
            "--output-dir out/",
            "hopscore run hotpotqa --gold hotpot_dev_distractor_v1.json "
            "--model openai/gpt-4o-mini --limit 200",
        ),
        "hopscore score": (
            "hopscore score hotpotqa --gold hotpot_dev_distractor_v1.json --predictions pred.json "
            "--output-dir runs/score",
            "hopscore score hotpotqa -g hf:hotpotqa/hotpot_qa:distractor@validation "
            "-p samples.jsonl --from lm-eval",
        ),
        "hopscore run": (
            "hopscore run hotpotqa --gold hotpot_dev_distractor_v1.json "
            "--model openai/gpt-4o-mini --limit 200",
        ),
    }
    metrics = (
        "em", "f1", "prec", "recall",
        "sp_em", "sp_f1", "sp_prec", "sp_recall",
        "joint_em", "joint_f1", "joint_prec", "joint_recall",
    )  # fmt: skip
    headline = ("em", "f1", "sp_f1", "joint_f1")
    group_keys = ("type", "level")
    #: its examples depend on the gold file alone: scoring keeps them between runs
    gold_examples_kept = True
    adds_one_by_one = True  # the official script's ``metrics[name] += value``
    gold_formats = "official JSON list (hotpot_dev_distractor_v1.json, fullwiki)"
    prediction_formats = (
        'official {"answer": {id: str}, "sp": {id: [[title, sent_id]]}}; universal JSONL'
    )

    def iter_gold(self, path: Path, *, aliases: Path | None = None) -> Iterable[HotpotExample]:
        """The gold examples for scoring, without their paragraphs (``context``), streamed.

        Scoring reads no paragraph, and the paragraphs are nine tenths of the official file, so
        the records are decoded with typed msgspec structs that skip them, a window of the file
        at a time (:func:`stream.stream_gold`: a million records in bounded memory); a
        record that the quick reading rejects is checked as :meth:`load_gold` checks it, which
        names the problem. A file that is not a JSON list goes to :meth:`load_gold` at once.
        """
        if not is_json_list(path):
            return self.load_gold(path)
        return stream_gold(path, _GOLD_READER)  # type: ignore[return-value]

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[HotpotExample]:
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of examples, got {json_type(data)}")
        examples = [
            self._gold_record(Fields.at_index(item, str(path), i))
            for i, item in enumerate(data)
        ]
        return check_unique_ids(examples, path)

    @staticmethod
    def _gold_record(record: Fields) -> HotpotExample:
        return HotpotExample(
            id=record.id("_id"),
            question=record.str("question", ""),
            answer=record.str("answer"),
            supporting_facts=parse_facts(
                record.raw("supporting_facts", []), record, "supporting_facts"
            ),
            context=parse_context(record),
            type=record.str("type", None, nullable=True),
            level=record.str("level", None, nullable=True),
        )

    def predictions_for_scoring(self, path: Path) -> Predictions[HotpotPrediction]:
        """Official predictions of :data:`INDEX_MIN_BYTES` or more indexed compactly
        (:func:`official_index.read_predictions_quickly`), else (a smaller file, JSON Lines,
        anything unusual) :meth:`load_predictions`."""
        try:
            large = path.stat().st_size >= INDEX_MIN_BYTES
        except OSError:
            large = False  # the checked reader names the problem
        if large:
            from hopscore.benchmarks.hotpotqa.official_index import read_predictions_quickly

            return read_predictions_quickly(path, HotpotPrediction) or \
                self.load_predictions(path)
        return self.load_predictions(path)

    def load_predictions(self, path: Path) -> Predictions[HotpotPrediction]:
        data = universal_or_json(path)
        if data is UNIVERSAL:
            predictions = Predictions(load_universal(path, _parse_universal), str(path),
                                      "universal")
        else:
            predictions = read_official_predictions(path, data, ("answer", "sp"))
        warn_unpredicted(predictions, "sp", lambda p: p.sp is not None,
                         "supporting-fact and joint metrics",
                         key_missing=data is not UNIVERSAL and "sp" not in data)
        return predictions

    def score(
        self, example: HotpotExample, prediction: HotpotPrediction | None
    ) -> dict[str, float]:
        answer = sp = joint = ZERO4
        if prediction is not None:
            text, facts = prediction.answer, prediction.sp
            if text is not None:
                answer = answer_scores(text, example.answer)
            if facts is not None:
                sp = supporting_fact_scores(set(facts), set(example.supporting_facts))
                if text is not None:
                    joint = joint_scores(answer, sp)
        return {
            "em": answer[0], "f1": answer[1], "prec": answer[2], "recall": answer[3],
            "sp_em": sp[0], "sp_f1": sp[1], "sp_prec": sp[2], "sp_recall": sp[3],
            "joint_em": joint[0], "joint_f1": joint[1],
            "joint_prec": joint[2], "joint_recall": joint[3],
        }  # fmt: skip

    def is_missing(self, example: HotpotExample, prediction: HotpotPrediction | None) -> bool:
        return prediction is None or prediction.answer is None

    mcr_evaluator = "wikihop"

    answer_metric = "f1"
    evidence = "context"
    demo_position = 0
    suite_files = SuiteFiles(3, ("hotpotqa", "hotpot"),
                             ("hotpot_dev_fullwiki_v1.json", "hotpot_dev_distractor_v1.json"))

    def prompt_variables(self, example: HotpotExample, inputs: PromptInputs) -> dict[str, Any]:
        return paragraph_variables(example.question, example.context)

    def make_prediction(self, example: HotpotExample, answer: ModelAnswer) -> HotpotPrediction:
        """Answer and supporting facts: the reply's ``[title, n]`` citations, else (the chain
        strategies) the sentences their contexts came from (:func:`evidence_facts`)."""
        titles = [title for title, _ in example.context]
        return HotpotPrediction(
            id=example.id, answer=answer.text or "",
            sp=cited_facts(answer.output, titles) or evidence_facts(answer.evidence_ids, titles),
        )

    def prediction_details(self, prediction: HotpotPrediction) -> dict[str, Any]:
        return {"sp": [list(fact) for fact in prediction.sp or ()]}

    def write_predictions(self, predictions: Sequence[HotpotPrediction], path: Path) -> None:
        write_json_atomic(path, {
            "answer": {p.id: p.answer or "" for p in predictions},
            "sp": {p.id: [list(fact) for fact in p.sp or ()] for p in predictions},
        })  # fmt: skip


class _QuickRecord(msgspec.Struct, rename={"id": "_id"}):
    """The fields of an official gold record that scoring reads (unknown keys are skipped)."""

    id: str | int
    answer: str
    question: str = ""
    supporting_facts: tuple[tuple[str, int], ...] = ()
    type: str | None = None
    level: str | None = None

    def example(self) -> HotpotExample:
        ident = self.id
        return HotpotExample(
            id=ident if type(ident) is str else str(ident),
            question=self.question,
            answer=self.answer,
            supporting_facts=self.supporting_facts,
            type=self.type,
            level=self.level,
        )


_QUICK_LIST = msgspec.json.Decoder(list[_QuickRecord])
_QUICK_RECORD = msgspec.json.Decoder(_QuickRecord)
_GOLD_READER = GoldReader(_QUICK_LIST, _QUICK_RECORD, _QuickRecord, HotpotQA._gold_record)


def _parse_universal(record: Fields, example_id: str) -> HotpotPrediction:
    return HotpotPrediction(
        id=example_id,
        answer=record.str("answer", None),
        sp=parse_facts(record.raw("sp"), record, "sp") if record.has("sp") else None,
    )


def read_official_predictions(
    path: Path, data: Any, parts: tuple[str, ...]
) -> Predictions[HotpotPrediction]:
    """Read ``{"answer": {id: str}, "sp": {id: [...]}}``; a missing ``sp`` is answer-only mode."""
    maps, warnings = read_official_parts(path, data, parts)
    by_id: dict[str, HotpotPrediction] = {}
    where = str(path)
    answers, facts = maps["answer"], maps.get("sp", {})
    for example_id in official_ids(maps):
        answer = answers.get(example_id, _ABSENT)
        sp = facts.get(example_id, _ABSENT)
        quick_sp = None if sp is _ABSENT else quick_facts(sp)
        if (answer is _ABSENT or type(answer) is str) and (sp is _ABSENT or quick_sp is not None):
            by_id[example_id] = HotpotPrediction(
                id=example_id, answer=None if answer is _ABSENT else answer, sp=quick_sp
            )
            continue
        record = Fields.at_key(  # something unusual: the checked reading names it
            {part: maps[part][example_id] for part in parts if example_id in maps[part]},
            where,
            example_id,
        )
        by_id[example_id] = _parse_universal(record, example_id)
    return Predictions(by_id, str(path), "official", warnings)


_ABSENT: Any = object()
