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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import (
    Benchmark,
    Example,
    Prediction,
    Predictions,
    check_unique_ids,
    load_universal,
)
from hopscore.benchmarks.formats import (
    UNIVERSAL,
    official_ids,
    read_official_parts,
    universal_or_json,
)
from hopscore.errors import InputError, Location
from hopscore.io import Fields, json_type, load_json
from hopscore.text import hotpot_prf, normalize_answer

Fact = tuple[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class HotpotExample(Example):
    answer: str
    supporting_facts: tuple[Fact, ...] = ()
    context: tuple[tuple[str, tuple[str, ...]], ...] = ()
    type: str | None = None
    level: str | None = None

    def groups(self) -> dict[str, str]:
        labels = {}
        if self.type:
            labels["type"] = self.type
        if self.level:
            labels["level"] = self.level
        return labels

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)


@dataclass(frozen=True, slots=True, kw_only=True)
class HotpotPrediction(Prediction):
    sp: tuple[Fact, ...] | None = None


def parse_fact(value: Any, record: Fields, field: str) -> Fact:
    """One ``[title, sent_id]`` pair; the sent_id must be an integer (``"1"`` is an error)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise record.error(
            field, f"expected [title, sent_id] pairs, got {json_type(value)} {value!r}"
        )
    title, sent_id = value
    if not isinstance(title, str):
        raise record.error(field, f"title must be a string, got {json_type(title)} {title!r}")
    if isinstance(sent_id, bool) or not isinstance(sent_id, int):
        raise record.error(
            field, f"sent_id must be an integer, got {json_type(sent_id)} {sent_id!r}"
        )
    return (title, sent_id)


def parse_facts(value: Any, record: Fields, field: str) -> tuple[Fact, ...]:
    if not isinstance(value, list):
        raise record.error(field, f"expected a list of [title, sent_id], got {json_type(value)}")
    return tuple(parse_fact(item, record, field) for item in value)


def supporting_fact_scores(
    predicted: set[Any], gold: set[Any]
) -> tuple[float, float, float, float]:
    """``(em, f1, precision, recall)`` of a predicted set against a gold set, as the official
    ``update_sp``: precision 0 when nothing is predicted, recall 0 when the gold is empty, and
    em 1 iff there are no false positives and no false negatives."""
    tp = len(predicted & gold)
    fp = len(predicted) - tp
    fn = len(gold) - tp
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    em = 1.0 if fp + fn == 0 else 0.0
    return em, f1, precision, recall


def joint_scores(
    answer: tuple[float, float, float, float], sp: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """Joint ``(em, f1, prec, recall)``: P = P_ans * P_sp, R = R_ans * R_sp, F1 from those."""
    precision = answer[2] * sp[2]
    recall = answer[3] * sp[3]
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return answer[0] * sp[0], f1, precision, recall


ZERO4 = (0.0, 0.0, 0.0, 0.0)


class HotpotQA(Benchmark[HotpotExample, HotpotPrediction]):
    name = "hotpotqa"
    title = "HotpotQA"
    metrics = (
        "em", "f1", "prec", "recall",
        "sp_em", "sp_f1", "sp_prec", "sp_recall",
        "joint_em", "joint_f1", "joint_prec", "joint_recall",
    )  # fmt: skip
    headline = ("em", "f1", "sp_f1", "joint_f1")
    group_keys = ("type", "level")
    gold_formats = "official JSON list (hotpot_dev_distractor_v1.json, fullwiki)"
    prediction_formats = (
        'official {"answer": {id: str}, "sp": {id: [[title, sent_id]]}}; universal JSONL'
    )

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[HotpotExample]:
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of examples, got {json_type(data)}")
        examples = [
            self._gold_record(Fields(item, Location(str(path), index=i)))
            for i, item in enumerate(data)
        ]
        return check_unique_ids(examples, path)

    @staticmethod
    def _gold_record(record: Fields) -> HotpotExample:
        context = []
        for entry in record.list("context", []):
            if (
                not isinstance(entry, list)
                or len(entry) != 2
                or not isinstance(entry[0], str)
                or not isinstance(entry[1], list)
            ):
                raise record.error("context", "expected [title, [sentence, ...]] entries")
            context.append((entry[0], tuple(str(s) for s in entry[1])))
        return HotpotExample(
            id=record.id("_id"),
            question=record.str("question", ""),
            answer=record.str("answer"),
            supporting_facts=parse_facts(
                record.raw("supporting_facts", []), record, "supporting_facts"
            ),
            context=tuple(context),
            type=record.str("type", None, nullable=True),
            level=record.str("level", None, nullable=True),
        )

    def load_predictions(self, path: Path) -> Predictions[HotpotPrediction]:
        data = universal_or_json(path)
        if data is UNIVERSAL:
            return Predictions(load_universal(path, _parse_universal), str(path), "universal")
        return read_official_predictions(path, data, ("answer", "sp"))

    def score(
        self, example: HotpotExample, prediction: HotpotPrediction | None
    ) -> dict[str, float]:
        answer = ZERO4
        sp = ZERO4
        joint = ZERO4
        if prediction is not None:
            if prediction.answer is not None:
                answer = answer_scores(prediction.answer, example.answer)
            if prediction.sp is not None:
                sp = supporting_fact_scores(set(prediction.sp), set(example.supporting_facts))
            if prediction.answer is not None and prediction.sp is not None:
                joint = joint_scores(answer, sp)
        return {
            "em": answer[0], "f1": answer[1], "prec": answer[2], "recall": answer[3],
            "sp_em": sp[0], "sp_f1": sp[1], "sp_prec": sp[2], "sp_recall": sp[3],
            "joint_em": joint[0], "joint_f1": joint[1],
            "joint_prec": joint[2], "joint_recall": joint[3],
        }  # fmt: skip

    def is_missing(self, example: HotpotExample, prediction: HotpotPrediction | None) -> bool:
        return prediction is None or prediction.answer is None


def answer_scores(prediction: str, gold: str) -> tuple[float, float, float, float]:
    """HotpotQA answer ``(em, f1, prec, recall)`` of one prediction against one gold answer."""
    pred_norm = normalize_answer(prediction)
    gold_norm = normalize_answer(gold)
    f1, precision, recall = hotpot_prf(pred_norm, gold_norm)
    return float(pred_norm == gold_norm), f1, precision, recall


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
    for example_id in official_ids(maps):
        record = Fields(
            {part: maps[part][example_id] for part in parts if example_id in maps[part]},
            Location(str(path), key=example_id),
        )
        by_id[example_id] = _parse_universal(record, example_id)
    return Predictions(by_id, str(path), "official", warnings)
