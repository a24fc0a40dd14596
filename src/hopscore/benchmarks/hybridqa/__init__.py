"""HybridQA: exact match and F1 of ``evaluate_script.py`` (``official-metrics.md`` §2).

Gold, any of:

* ``dev_reference.json``, the scorer's own reference ``{"reference": {qid: answer},
  "table": [qid, ...], "passage": [qid, ...]}``;
* ``dev.traced.json``, a JSON list with ``answer-node``: a question is in group ``table`` when any
  answer node lies in a table cell, in ``passage`` when all lie in passages, and in neither when
  it has no answer node (the 92 computed dev answers). This reproduces ``dev_reference.json``;
* ``dev.json``, the same list without answer nodes, so without groups.

Predictions: the official JSON list ``[{"question_id": str, "pred": str, ...}]`` (other keys are
ignored), or universal JSON Lines ``{"id", "answer"}``.

Metrics over every reference question: ``em`` (SQuAD normalization, then equality) and ``f1``
(multiset token overlap, SQuAD 2.0 style: if either side has no tokens the score is 1 when both
have none). Groups ``table`` and ``passage`` are the answer's location, as in the official
output; unlocated questions count only in the total.

Where we differ from the official script: it raises ``KeyError`` on a missing or an extra
question id; we score a missing one 0 (kept in the denominator, listed and warned about) and
ignore an extra one. A question id predicted twice is an error naming both records (the official
script silently keeps the last). ``"pred": null`` is an error (the official script crashes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
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
    check_unique_ids,
    load_universal,
    quick_answer,
)
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.formats import UNIVERSAL, universal_or_json
from hopscore.benchmarks.hybridqa import hub
from hopscore.benchmarks.hybridqa.reference import TAGS, read_reference_quickly
from hopscore.benchmarks.hybridqa.wikitables import load_table, table_context
from hopscore.benchmarks.universal_index import index_universal
from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json, sniff_json_kind
from hopscore.text.normalize import normalize_answer, squad2_f1

LOCATIONS = ("table", "passage")


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HybridQAExample(Example):
    answer: str
    answer_normalized: str
    #: "table", "passage", or None when the answer was not located (computed answers).
    location: str | None = None
    table_id: str | None = None

    def groups(self) -> dict[str, str]:
        return {"location": self.location} if self.location else {}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)


def exact_and_f1(prediction: str, gold_normalized: str) -> tuple[float, float]:
    """The official ``compute_exact`` and ``compute_f1`` for one gold answer."""
    pred = normalize_answer(prediction)
    if pred == gold_normalized:  # F1 of equal strings is 1, empty ones included (SQuAD 2.0)
        return 1.0, 1.0
    return 0.0, squad2_f1(pred, gold_normalized)


class HybridQA(Benchmark[HybridQAExample, Prediction]):
    name = "hybridqa"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    hub_id_field = "question_id"
    gold_is_json_list = True
    title = "HybridQA"
    run_options = ("--tables-dir", "--context-tokens")
    metric_functions = "hopscore.benchmarks.hybridqa.per_example"
    error_categories = "hopscore.benchmarks.hybridqa.categories"
    metrics = ("em", "f1")
    headline = ("em", "f1")
    group_keys = ("location",)
    gold_formats = "dev_reference.json; dev.traced.json (groups table/passage); dev.json"
    prediction_formats = 'official JSON list [{"question_id", "pred"}]; universal JSONL'

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[HybridQAExample]:
        return list(self.iter_gold(path, aliases=aliases))

    def iter_gold(self, path: Path, *, aliases: Path | None = None) -> Iterable[HybridQAExample]:
        """For the reference format, each example is built when scoring reaches it, so a large
        reference is held once, as parsed, and not again as example objects (read quickly,
        :mod:`~hopscore.benchmarks.hybridqa.reference`, unless something about it is unusual)."""
        tagged = read_reference_quickly(path)
        if tagged is not None:
            return _tagged_iter(tagged)
        data = load_json(path)
        if isinstance(data, dict):
            return _reference_examples(path, data)
        if not isinstance(data, list):
            raise InputError(
                path,
                f"expected dev_reference.json (an object) or a JSON list, got {json_type(data)}",
            )
        examples = [
            _question_record(Fields.at_index(item, str(path), i))
            for i, item in enumerate(data)
        ]
        return check_unique_ids(examples, path)

    def predictions_for_scoring(self, path: Path) -> Predictions[Prediction]:
        """Universal JSON Lines indexed compactly (:func:`index_universal`), else
        :meth:`load_predictions`."""
        if sniff_json_kind(path) == "jsonl":
            indexed = index_universal(path, quick_answer)
            if indexed is not None:
                return indexed
        return self.load_predictions(path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        data = universal_or_json(path)
        if data is UNIVERSAL:
            universal = load_universal(path, _universal_record, quick=quick_answer)
            return Predictions(universal, str(path), "universal")
        if not isinstance(data, list):
            raise InputError(
                path,
                'expected the official JSON list [{"question_id": ..., "pred": ...}] '
                f"or universal JSON Lines, got a JSON {json_type(data)}",
            )
        by_id: dict[str, Prediction] = {}
        first: dict[str, int] = {}
        where = str(path)
        for index, item in enumerate(data):
            if type(item) is dict:  # the usual record: string id and answer, taken directly
                qid, pred = item.get("question_id"), item.get("pred")
                if (
                    type(qid) is str
                    and qid
                    and not qid[0].isspace()
                    and type(pred) is str
                    and qid not in first
                ):
                    first[qid] = index
                    by_id[qid] = Prediction(id=qid, answer=pred)
                    continue
            record = Fields.at_index(item, where, index)
            qid = record.id("question_id")
            if qid in first:
                raise record.error(
                    "question_id",
                    f"duplicate question id {qid!r} (first in record [{first[qid]}]); the "
                    "official script would silently keep the last one",
                )
            first[qid] = index
            by_id[qid] = Prediction(id=qid, answer=record.str("pred"))
        return Predictions(by_id, str(path), "official")

    def score(self, example: HybridQAExample, prediction: Prediction | None) -> dict[str, float]:
        if prediction is None or prediction.answer is None:
            return {"em": 0.0, "f1": 0.0}
        em, f1 = exact_and_f1(prediction.answer, example.answer_normalized)
        return {"em": em, "f1": f1}

    answer_metric = "f1"

    def prompt_variables(self, example: HybridQAExample, inputs: PromptInputs) -> dict[str, Any]:
        """The question, its table as Markdown and the passages of linked cells (a budget)."""
        if inputs.tables_dir is None:
            raise HopscoreError(
                "HybridQA runs need the tables: --tables-dir DIR, a WikiTables-WithLinks folder "
                "holding tables_tok/ and request_tok/"
            )
        if not example.table_id or not example.question:
            raise HopscoreError(
                f"question {example.id!r} has no question text or table_id: run HybridQA from "
                "dev.json or dev.traced.json (dev_reference.json holds only answers)"
            )
        table = load_table(inputs.tables_dir, example.table_id)
        context = table_context(table, example.question, inputs.context_tokens)
        return {"question": example.question, "mcr_question": example.question,
                **context.variables()}

    def make_prediction(self, example: HybridQAExample, answer: ModelAnswer) -> Prediction:
        return Prediction(id=example.id, answer=answer.text or "")

    def write_predictions(self, predictions: Sequence[Prediction], path: Path) -> None:
        rows = [{"question_id": p.id, "pred": p.answer or ""} for p in predictions]
        write_json_atomic(path, rows)


def _example(qid: str, answer: str, **kwargs: Any) -> HybridQAExample:
    return HybridQAExample(
        id=qid, answer=answer, answer_normalized=normalize_answer(answer), **kwargs
    )


def _reference_examples(path: Path, data: dict[str, Any]) -> Iterator[HybridQAExample]:
    """Check the reference's structure now; build each example when it is asked for."""
    reference = _reference_answers(path, data)
    location = _reference_locations(path, data, reference)
    return _reference_iter(path, reference, location)


def _reference_answers(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    if "reference" not in data:
        raise InputError(
            path,
            'expected dev_reference.json {"reference": {...}, "table": [...], '
            '"passage": [...]} or a JSON list of questions',
        )
    reference = data["reference"]
    if not isinstance(reference, dict):
        raise InputError(
            path, f'"reference" must map question ids to answers, got {json_type(reference)}'
        )
    return reference


def _reference_locations(
    path: Path, data: dict[str, Any], reference: dict[str, Any]
) -> dict[str, str]:
    """Question id -> "table" or "passage", from the reference's two lists."""
    quick = _quick_locations(data, reference)
    if quick is not None:
        return quick
    location: dict[str, str] = {}  # something is wrong: find it and name it
    for group in LOCATIONS:
        qids = data.get(group, [])
        if not isinstance(qids, list):
            raise InputError(
                path, f'"{group}" must be a list of question ids, got {json_type(qids)}'
            )
        for index, qid in enumerate(qids):
            if type(qid) is not str or qid not in reference or qid in location:
                where = Location(str(path), key=f"{group}[{index}]")
                if not isinstance(qid, str) or qid not in reference:
                    raise InputError(where, f'{qid!r} is not a question id of "reference"')
                raise InputError(
                    where, f"{qid!r} is listed in both {location[qid]!r} and {group!r}"
                )
            location[qid] = group
    return location


def _quick_locations(data: dict[str, Any], reference: dict[str, Any]) -> dict[str, str] | None:
    """The locations when both lists hold distinct question ids of the reference, else None."""
    location: dict[str, str] = {}
    for group in LOCATIONS:
        qids = data.get(group, [])
        if type(qids) is not list:
            return None
        try:
            these = dict.fromkeys(qids, group)
        except TypeError:  # an unhashable entry
            return None
        if len(these) != len(qids) or not these.keys().isdisjoint(location):
            return None
        location.update(these)
    if not location.keys() <= reference.keys():
        return None
    return location


def _tagged_iter(tagged: dict[str, str]) -> Iterator[HybridQAExample]:
    for qid, value in tagged.items():
        answer = value[1:]
        yield HybridQAExample(id=qid, answer=answer, answer_normalized=normalize_answer(answer),
                              location=TAGS[value[0]])


def _reference_iter(
    path: Path, reference: dict[str, Any], location: dict[str, str]
) -> Iterator[HybridQAExample]:
    for qid, answer in reference.items():
        if type(answer) is not str:
            raise InputError(
                Location(str(path), key=qid),
                f"expected a string, got {json_type(answer)}",
                field="reference",
            )
        yield HybridQAExample(
            id=qid,
            answer=answer,
            answer_normalized=normalize_answer(answer),
            location=location.get(qid),
        )


def answer_location(record: Fields) -> str | None:
    """``table`` if any answer node is a table cell, ``passage`` if all are passages, else None."""
    nodes = record.list("answer-node", [])
    kinds = set()
    for node in nodes:
        if not isinstance(node, list) or len(node) < 4 or node[3] not in LOCATIONS:
            raise record.error(
                "answer-node",
                f"expected [text, [row, col], link, 'table'|'passage'], got {node!r}",
            )
        kinds.add(node[3])
    if "table" in kinds:
        return "table"
    return "passage" if kinds else None


def _question_record(record: Fields) -> HybridQAExample:
    return _example(
        record.id("question_id"),
        record.str("answer-text"),
        question=record.str("question", ""),
        table_id=record.str("table_id", None, nullable=True),
        location=answer_location(record),
    )


def _universal_record(record: Fields, example_id: str) -> Prediction:
    return Prediction(id=example_id, answer=record.str("answer"))
