"""StrategyQA: answer accuracy, decomposition SARI and paragraph Recall@10 (``eval.py``).

Gold: the official JSON list of ``{qid, question, answer: bool, decomposition: [str], evidence}``
where ``evidence`` holds one list per annotator, one entry per decomposition step, each step a
list of paragraph-id lists or the strings ``"operation"`` / ``"no_evidence"``. A gold answer
written as a string (``"True"``, ``"false"``, ``"yes"``, ``"0"``: exports and CSV files) is read as
the boolean it spells; anything else is an error.

Predictions, any of:

* the official object ``{qid: {"answer": bool, "decomposition": [str], "paragraphs": [str]}}``;
* universal JSON Lines ``{"id", "answer", "decomposition", "paragraphs"}`` (``"qid"`` is
  accepted in place of ``"id"``), which also reads the BART decomposition predictions of
  eladsegal/strategyqa (``{"qid", "decomposition", ...}`` per line).

Parity notes (``official-metrics.md`` §7):

* Accuracy is Python equality between the gold boolean and the predicted value. In the official
  format a non-boolean answer is compared exactly as the evaluator does (``"yes"`` scores 0,
  ``1`` equals ``true``) and a warning says how many answers were not booleans. In the universal
  format an answer must be a boolean or one of the strings yes/no/true/false (any case); any
  other string scores 0 with a warning.
* SARI and Recall@10 follow the evaluator; they are reported only when some prediction has a
  decomposition / paragraphs.
* The evaluator requires every qid to carry the same keys and the prediction count to equal the
  gold count; hopscore applies the project id policy instead (a missing prediction, or a missing
  part of one, scores 0) and warns.
* An example without annotators has Recall@10 0 (the evaluator crashes on ``max([])``).
* A model run with ``--corpus`` predicts the retrieved documents as paragraphs, so Recall@10
  is scored when the corpus ids are StrategyQA's paragraph ids (``"Title-3"``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

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
from hopscore.benchmarks.strategyqa import hub
from hopscore.benchmarks.strategyqa.sari import sari, strategyqa_tokens
from hopscore.errors import HopscoreError, InputError
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, load_json, sniff_json_kind
from hopscore.text.words import agree, counted

RETRIEVAL_LIMIT = 10
_BOOLEAN_WORDS = {"yes": True, "true": True, "no": False, "false": False}
#: the spellings of a gold answer that are read as a boolean (a CSV's or an export's strings)
_GOLD_WORDS = {**_BOOLEAN_WORDS, "1": True, "0": False}
_NO_ANSWER: Any = object()


def gold_boolean(value: Any) -> bool | None:
    """A gold answer as a boolean: a boolean, 0 or 1, or one of the strings true/false/yes/no/
    1/0 in any case (as exports and CSV files write it); None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        return _GOLD_WORDS.get(value.strip().lower())
    return None


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyQAExample(Example):
    answer: bool
    decomposition: tuple[str, ...] | None = None
    #: One frozenset of paragraph ids per annotator; None when the gold has no evidence.
    evidence: tuple[frozenset[str], ...] | None = None

    def groups(self) -> dict[str, str]:
        return {"answer": "true" if self.answer else "false"}

    def gold_answers(self) -> tuple[str, ...]:
        return ("true" if self.answer else "false",)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyQAPrediction(Prediction):
    #: The predicted answer exactly as read (compared with ``==``); ``_NO_ANSWER`` if absent.
    value: Any = _NO_ANSWER
    decomposition: tuple[str, ...] | None = None
    paragraphs: tuple[str, ...] | None = None

    @property
    def has_answer(self) -> bool:
        return self.value is not _NO_ANSWER

    def answer_text(self) -> str | None:
        return json.dumps(self.value) if self.has_answer else None


def evidence_sets(value: Any, record: Fields) -> tuple[frozenset[str], ...]:
    """Per annotator, every paragraph id named in any step (``operation`` etc. are skipped)."""
    if not isinstance(value, list):
        raise record.error("evidence", f"expected a list of annotators, got {json_type(value)}")
    annotators = []
    for annotator in value:
        if not isinstance(annotator, list):
            raise record.error(
                "evidence", f"an annotator must be a list of steps, got {json_type(annotator)}"
            )
        ids: set[str] = set()
        for step in annotator:
            if not isinstance(step, list):
                raise record.error("evidence", f"a step must be a list, got {json_type(step)}")
            for entry in step:
                if isinstance(entry, list):
                    for pid in entry:
                        if not isinstance(pid, str):
                            raise record.error(
                                "evidence", f"paragraph ids must be strings, got {json_type(pid)}"
                            )
                        ids.add(pid)
                elif not isinstance(entry, str):
                    raise record.error(
                        "evidence",
                        f"a step entry must be a list of ids or a string, got {json_type(entry)}",
                    )
        annotators.append(frozenset(ids))
    return tuple(annotators)


def string_list(value: Any, record: Fields, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise record.error(field, f"expected a list of strings, got {json_type(value)}")
    for item in value:
        if not isinstance(item, str):
            raise record.error(
                field, f"expected a list of strings, got an item of type {json_type(item)}"
            )
    return tuple(value)


def recall_at(
    evidence: tuple[frozenset[str], ...], paragraphs: tuple[str, ...], limit: int = RETRIEVAL_LIMIT
) -> float:
    """Max over annotators of |evidence ∩ first ``limit`` paragraphs| / |evidence| (0 if empty)."""
    retrieved = set(paragraphs[:limit])
    best = 0.0
    for ids in evidence:
        if ids:
            best = max(best, len(ids & retrieved) / len(ids))
    return best


def decomposition_sari(question: str, gold: tuple[str, ...], predicted: tuple[str, ...]) -> float:
    """SARI of a predicted decomposition against the gold one, with the question as source."""
    return sari(
        strategyqa_tokens(question),
        strategyqa_tokens(" ".join(predicted)),
        [strategyqa_tokens(" ".join(gold))],
    )


class StrategyQA(Benchmark[StrategyQAExample, StrategyQAPrediction]):
    name = "strategyqa"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    hub_id_field = "qid"
    title = "StrategyQA"
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore run": (
        "hopscore run strategyqa --gold dev.json --model openai/Qwen2.5-7B-Instruct "
        "--base-url http://localhost:8000/v1 --shots 2",
        "hopscore run strategyqa --gold dev.json --model local/smollm2 --limit 20",
        "hopscore run strategyqa --gold dev.json --model openai/gpt-4o-mini --strategy mcr "
        "--chains 5 --corpus wiki.jsonl --protocol mcr",
    )}
    metric_functions = "hopscore.benchmarks.strategyqa.per_example"
    error_categories = "hopscore.benchmarks.strategyqa.categories"
    metrics = ("accuracy", "sari", "recall@10")
    #: the official SARI class adds each question's SARI (``self._total_sari += ...``);
    #: Recall@10 is the official ``sum(self._scores)``
    adds_one_by_one = frozenset({"sari"})
    headline = ("accuracy", "sari", "recall@10")
    group_keys = ("answer",)
    gold_formats = "official JSON list (qid, question, answer, decomposition, evidence)"
    prediction_formats = (
        'official {qid: {"answer": bool, "decomposition": [str], "paragraphs": [str]}}; '
        "universal JSONL (id or qid); eladsegal decomposition JSONL"
    )

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[StrategyQAExample]:
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of examples, got {json_type(data)}")
        examples = []
        for index, item in enumerate(data):
            record = Fields.at_index(item, str(path), index)
            decomposition = record.raw("decomposition", None)
            evidence = record.raw("evidence", None)
            examples.append(
                StrategyQAExample(
                    id=record.id("qid"),
                    question=record.str("question"),
                    answer=_gold_answer(record),
                    decomposition=None
                    if decomposition is None
                    else string_list(decomposition, record, "decomposition"),
                    evidence=None if evidence is None else evidence_sets(evidence, record),
                )
            )
        return check_unique_ids(examples, path)

    def load_predictions(self, path: Path) -> Predictions[StrategyQAPrediction]:
        if sniff_json_kind(path) == "jsonl":
            first = next(iter_jsonl(path), (None, None))[1]
            return self._universal(path, _id_field(path, first))
        data = load_json(path)
        if isinstance(data, dict) and ("id" in data or "qid" in data):
            return self._universal(path, _id_field(path, data))
        if not isinstance(data, dict):
            raise InputError(
                path,
                "expected the official {qid: {...}} object or JSON Lines, "
                f"got {json_type(data)}",
            )
        by_id: dict[str, StrategyQAPrediction] = {}
        not_boolean: list[str] = []
        for qid, item in data.items():
            record = Fields.at_key(item, str(path), qid)
            value = record.raw("answer", _NO_ANSWER)
            if value is not _NO_ANSWER and not isinstance(value, bool):
                not_boolean.append(qid)
            by_id[qid] = self._parts(record, qid, value)
        predictions = Predictions(by_id, str(path), "official")
        if not_boolean:
            predictions.warnings.append(
                f"{path}: {counted(len(not_boolean), 'answer')} "
                f"{agree(len(not_boolean), 'is', 'are')} not JSON booleans (first: "
                f"{', '.join(not_boolean[:5])}); as in the official evaluator they are compared "
                'with ==, so "yes"/"no" strings score 0 -- write true/false'
            )
        _warn_partial(predictions)
        return predictions

    def _universal(self, path: Path, id_field: str) -> Predictions[StrategyQAPrediction]:
        unrecognized: list[str] = []

        def parse(record: Fields, example_id: str) -> StrategyQAPrediction:
            value = record.raw("answer", _NO_ANSWER)
            if isinstance(value, str):
                mapped = _BOOLEAN_WORDS.get(value.strip().lower())
                if mapped is None:
                    unrecognized.append(example_id)
                value = value if mapped is None else mapped
            elif value is not _NO_ANSWER and not isinstance(value, bool):
                raise record.error(
                    "answer", f"expected a boolean or yes/no/true/false, got {json_type(value)}"
                )
            return self._parts(record, example_id, value)

        predictions = Predictions(
            load_universal(path, parse, id_field=id_field), str(path), "universal"
        )
        if unrecognized:
            predictions.warnings.append(
                f"{path}: {counted(len(unrecognized), 'answer')} "
                f"{agree(len(unrecognized), 'is a string', 'are strings')} other than "
                f"yes/no/true/false (first: {', '.join(unrecognized[:5])}); "
                f"{agree(len(unrecognized), 'it scores', 'they score')} 0"
            )
        _warn_partial(predictions)
        return predictions

    @staticmethod
    def _parts(record: Fields, qid: str, value: Any) -> StrategyQAPrediction:
        decomposition = record.raw("decomposition", None)
        paragraphs = record.raw("paragraphs", None)
        return StrategyQAPrediction(
            id=qid,
            value=value,
            decomposition=None
            if decomposition is None
            else string_list(decomposition, record, "decomposition"),
            paragraphs=None
            if paragraphs is None
            else string_list(paragraphs, record, "paragraphs"),
        )

    def active_metrics(self, predictions: Predictions[StrategyQAPrediction]) -> tuple[str, ...]:
        values = predictions.by_id.values()
        names = ["accuracy"]
        if any(p.decomposition is not None for p in values):
            names.append("sari")
        if any(p.paragraphs is not None for p in values):
            names.append(f"recall@{RETRIEVAL_LIMIT}")
        return tuple(names)

    def score(
        self, example: StrategyQAExample, prediction: StrategyQAPrediction | None
    ) -> dict[str, float]:
        accuracy = sari_score = recall = 0.0
        if prediction is not None:
            if prediction.has_answer:
                accuracy = float(example.answer == prediction.value)
            if prediction.decomposition is not None:
                if example.decomposition is None:
                    raise HopscoreError(
                        f"gold example {example.id!r} has no 'decomposition'; cannot score SARI"
                    )
                sari_score = decomposition_sari(
                    example.question, example.decomposition, prediction.decomposition
                )
            if prediction.paragraphs is not None:
                if example.evidence is None:
                    raise HopscoreError(
                        f"gold example {example.id!r} has no 'evidence'; cannot score Recall@10"
                    )
                recall = recall_at(example.evidence, prediction.paragraphs)
        return {"accuracy": accuracy, "sari": sari_score, f"recall@{RETRIEVAL_LIMIT}": recall}

    answer_kind = "yesno"
    mcr_evaluator = "em"

    answer_metric = "accuracy"
    demo_position = 1
    suite_files = SuiteFiles(0, ("strategyqa", "sqa", "strategy_qa"),
                             ("dev.json", "strategyqa_train.json", "train.json"))
    suite_layout = "strategyqa/dev.json"

    def prompt_variables(self, example: StrategyQAExample, inputs: PromptInputs) -> dict[str, Any]:
        return {"question": example.question, "mcr_question": example.question}

    def mcr_gold(self, example: StrategyQAExample) -> str:
        return "Yes" if example.answer else "No"

    def make_prediction(
        self, example: StrategyQAExample, answer: ModelAnswer
    ) -> StrategyQAPrediction:
        """yes/no (first word, any case) becomes a boolean; anything else is no answer.

        Retrieved document ids, when the run retrieved any, are the predicted paragraphs.
        """
        from hopscore.text.labels import yes_no

        word = yes_no(answer.text) if answer.text else None
        return StrategyQAPrediction(
            id=example.id,
            value=_NO_ANSWER if word is None else word == "yes",
            paragraphs=answer.retrieved,
        )

    def prediction_details(self, prediction: StrategyQAPrediction) -> dict[str, Any]:
        details: dict[str, Any] = {"answer": prediction.value if prediction.has_answer else None}
        if prediction.paragraphs is not None:
            details["paragraphs"] = list(prediction.paragraphs)
        return details

    def write_predictions(self, predictions: Sequence[StrategyQAPrediction], path: Path) -> None:
        """The official ``{qid: {"answer": bool, "paragraphs": [...]}}``; an example without an
        extracted yes/no has no "answer" key (it scores 0)."""
        out: dict[str, dict[str, Any]] = {}
        for p in predictions:
            entry: dict[str, Any] = {}
            if p.has_answer:
                entry["answer"] = p.value
            if p.paragraphs is not None:
                entry["paragraphs"] = list(p.paragraphs)
            out[p.id] = entry
        write_json_atomic(path, out)


def _gold_answer(record: Fields) -> bool:
    value = record.raw("answer")
    answer = gold_boolean(value)
    if answer is None:
        raise record.error("answer", f"expected a boolean (or true/false, yes/no), got "
                           f"{json_type(value)} {value!r}"[:200])
    return answer


def _id_field(path: Path, first: Any) -> str:
    """``id`` unless the first record names its example by ``qid`` (eladsegal's files)."""
    if isinstance(first, dict) and "qid" in first and "id" not in first:
        return "qid"
    return "id"


def _warn_partial(predictions: Predictions[StrategyQAPrediction]) -> None:
    """Warn when some predictions lack a part that others have (the official evaluator asserts)."""
    values = list(predictions.by_id.values())
    parts = {
        "answer": [p.id for p in values if not p.has_answer],
        "decomposition": [p.id for p in values if p.decomposition is None],
        "paragraphs": [p.id for p in values if p.paragraphs is None],
    }
    for part, lacking in parts.items():
        if lacking and len(lacking) < len(values):
            predictions.warnings.append(
                f"{len(lacking)} of {counted(len(values), 'prediction')} "
                f"{agree(len(lacking), 'has', 'have')} no {part!r} (first: "
                f"{', '.join(lacking[:5])}); it scores 0 for them (the official evaluator "
                "requires the same keys for every qid)"
            )
    if values and not any(p.has_answer for p in values):
        predictions.warnings.append(
            "no prediction has an 'answer'; accuracy is 0 (reported as the official evaluator does)"
        )
