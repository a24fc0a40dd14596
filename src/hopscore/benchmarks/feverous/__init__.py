"""FEVEROUS: label accuracy, FEVEROUS score and evidence P/R/F1 (``feverous_scorer.py``).

Gold: the official JSON Lines (``feverous_dev_challenges.jsonl``): a blank header record first,
then ``{"id", "claim", "label", "evidence": [{"content": [element ids], "context": ...}]}``.
Predictions, joined to the gold by ``id``:

* JSON Lines ``{"id", "predicted_label", "predicted_evidence": [element ids]}``;
* the input of the official ``evaluate.py``: gold and prediction fields on the same line (pass
  the same file as ``--gold`` and ``--predictions``);
* the leaderboard submission of ``prepare_submission.py`` (``predicted_evidence`` as
  ``[page, type, position]`` lists, no ids): its i-th line is the i-th gold claim after the
  header, whatever the gold's ids are (any prediction file without ids is read that way; one
  where only some records have ids is an error);
* universal JSON Lines ``{"id", "label" (or "answer"), "evidence": [element ids]}``.

A record without an ``id`` gets its position (0-based, after the header) as its id. The first
record is skipped as the header when it has neither an id nor a label (the official script skips
line 1 whatever it holds, so a file without a header loses its first claim there).

Parity notes (``official-metrics.md`` §6): element ids are split on "_" as the official parser
does; the predicted evidence is truncated to its first 5 non-table and 25
table elements (cell, item, table_caption, header_cell); labels compare upper-cased; precision
is 1.0 for an instance without predicted evidence; recall is 1.0 when the gold has no evidence
sets (the official "no gold" check iterates the record's keys and never fires, which changes
nothing: an empty evidence set is trivially covered anyway); ``evidence_f1`` is the harmonic
mean of macro precision and recall, 0 when both are 0 (the official raises ZeroDivisionError).
A missing prediction scores 0 on every metric.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
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
    Wiki,
)
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.feverous import hub
from hopscore.errors import InputError, Location
from hopscore.files.atomic import write_jsonl_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl
from hopscore.text.words import agree, counted

Element = tuple[str, str, str]
TABLE_TYPES = frozenset({"cell", "item", "table_caption", "header_cell"})
MAX_OTHER_ELEMENTS = 5
MAX_TABLE_ELEMENTS = 25
LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
_TWO_PART_TYPES = ("table_caption", "header_cell")


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FeverousExample(Example):
    label: str
    #: The gold evidence sets, each a tuple of parsed elements.
    evidence: tuple[tuple[Element, ...], ...]
    elements: frozenset[Element]

    def groups(self) -> dict[str, str]:
        return {"label": self.label}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.label,)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FeverousPrediction(Prediction):
    #: The predicted evidence after truncation, in order (duplicates kept, as officially).
    evidence: tuple[Element, ...] = ()


def parse_element(element_id: str) -> Element | None:
    """``"Page_cell_0_1_2"`` -> ``("Page", "cell", "0_1_2")``, split as the official parser does.

    The page is the text before the first "_"; the type is the next part, or the next two when
    the id contains "table_caption" or "header_cell" anywhere. None when there is no "_".
    """
    parts = element_id.split("_")
    if len(parts) < 2:
        return None
    if any(kind in element_id for kind in _TWO_PART_TYPES):
        return parts[0], "_".join(parts[1:3]), "_".join(parts[3:])
    return parts[0], parts[1], "_".join(parts[2:])


def element_id(element: Element) -> str:
    """The id an element was parsed from (``("Page", "title", "")`` -> ``"Page_title"``)."""
    return "_".join(element) if element[2] else f"{element[0]}_{element[1]}"


def truncate(elements: list[Element]) -> tuple[Element, ...]:
    """Keep the first 5 non-table and the first 25 table elements, in their order."""
    kept: list[Element] = []
    tables = others = 0
    for element in elements:
        if element[1] in TABLE_TYPES:
            tables += 1
            if tables <= MAX_TABLE_ELEMENTS:
                kept.append(element)
        else:
            others += 1
            if others <= MAX_OTHER_ELEMENTS:
                kept.append(element)
    return tuple(kept)


def instance_scores(
    example: FeverousExample, label: str, evidence: tuple[Element, ...]
) -> tuple[float, float, float, float]:
    """``(label correct, strictly correct, evidence precision, evidence recall)``."""
    predicted = set(evidence)
    covered = any(all(e in predicted for e in group) for group in example.evidence)
    correct = example.label.upper() == label.upper()
    if evidence:
        precision = sum(1 for e in evidence if e in example.elements) / len(evidence)
    else:
        precision = 1.0
    recall = 1.0 if covered or not example.evidence else 0.0
    return float(correct), float(correct and covered), precision, recall


def harmonic(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _elements(value: Any, record: Fields, field: str) -> list[Element]:
    """Element ids (strings) or already split ``[page, type, position]`` lists."""
    if not isinstance(value, list):
        raise record.error(field, f"expected a list of element ids, got {json_type(value)}")
    out: list[Element] = []
    for item in value:
        if isinstance(item, str):
            element = parse_element(item)
            if element is None:
                raise record.error(
                    field, f"element id {item!r} has no '_' (expected Page_type_position)"
                )
            out.append(element)
        elif isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item):
            out.append((item[0], item[1], item[2]))
        else:
            raise record.error(
                field,
                f"expected element ids such as 'Page_sentence_0', got {json_type(item)} {item!r}",
            )
    return out


def _is_header(value: Any) -> bool:
    """A blank header record: no label of any kind and no id (``{"header": ""}`` or blanks)."""
    return (
        isinstance(value, dict)
        and value.get("id") in (None, "")
        and not any(value.get(key) for key in ("label", "predicted_label", "answer"))
    )


def _records(path: Path, *, positional: list[bool] | None = None) -> Iterator[tuple[Fields, str]]:
    """Located records after the header, with their ids (the ``id`` field or the position).

    With ``positional`` (a one-item list, set here): a file where no record has an id is keyed
    by position and ``positional[0]`` becomes True; a file where some records have ids and
    others do not is an error, since neither reading pairs it with the gold safely.
    """
    seen: dict[str, Location] = {}
    position = 0
    first_with: Location | None = None
    first_without: Location | None = None
    for number, (where, value) in enumerate(iter_jsonl(path)):
        if number == 0 and _is_header(value):
            continue
        record = Fields(value, where)
        has_id = record.has("id")
        if has_id and first_with is None:
            first_with = where
        if not has_id and first_without is None:
            first_without = where
        if positional is not None and first_with is not None and first_without is not None:
            raise InputError(
                first_without if has_id else where,
                f"no id, but the record at {first_with} has one: either every prediction has "
                "an id (joined to the gold by id) or none has (joined by position, as the "
                "prepare_submission.py output)", field="id")
        example_id = record.id("id") if has_id else str(position)
        position += 1
        if example_id in seen:
            raise InputError(
                where, f"duplicate id {example_id!r} (first seen at {seen[example_id]})", field="id"
            )
        seen[example_id] = where
        if positional is not None:
            positional[0] = first_without is not None
        yield record, example_id


class FEVEROUS(Benchmark[FeverousExample, FeverousPrediction]):
    name = "feverous"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    title = "FEVEROUS"
    metric_functions = "hopscore.benchmarks.feverous.per_example"
    error_categories = "hopscore.benchmarks.feverous.categories"
    metrics = (
        "label_accuracy",
        "feverous_score",
        "evidence_precision",
        "evidence_recall",
        "evidence_f1",
    )
    headline = ("feverous_score", "label_accuracy", "evidence_f1")
    group_keys = ("label",)
    gold_formats = "official JSONL with header record (feverous_dev_challenges.jsonl)"
    prediction_formats = (
        'JSONL {"id", "predicted_label", "predicted_evidence"}; evaluate.py input (same file as '
        "gold); prepare_submission.py output; universal JSONL"
    )

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[FeverousExample]:
        examples = []
        for record, example_id in _records(path):
            label = record.str("label")
            if not label.strip():
                raise record.error("label", "empty label")
            sets = []
            for entry in record.list("evidence"):
                if not isinstance(entry, dict) or "content" not in entry:
                    raise record.error(
                        "evidence",
                        f'expected {{"content": [element ids]}} objects, got {json_type(entry)}',
                    )
                sets.append(tuple(_elements(entry["content"], record, "evidence.content")))
            examples.append(
                FeverousExample(
                    id=example_id,
                    question=record.str("claim", ""),
                    label=label,
                    evidence=tuple(sets),
                    elements=frozenset(e for group in sets for e in group),
                )
            )
        if not examples:
            raise InputError(path, "no gold records after the header")
        return examples

    def load_predictions(self, path: Path) -> Predictions[FeverousPrediction]:
        by_id: dict[str, FeverousPrediction] = {}
        official: bool | None = None
        no_evidence: list[str] = []
        odd_labels: list[str] = []
        positional = [False]
        for record, example_id in _records(path, positional=positional):
            if official is None:
                official = record.has("predicted_label") or record.has("predicted_evidence")
            if official:
                label = record.str("predicted_label")
                evidence = record.raw("predicted_evidence", None)
                field = "predicted_evidence"
            else:
                label = record.str("label") if record.has("label") else record.str("answer")
                evidence = record.raw("evidence", None)
                field = "evidence"
                if isinstance(evidence, list) and any(isinstance(e, dict) for e in evidence):
                    raise record.error(
                        "evidence",
                        "holds gold evidence objects; predictions need 'predicted_label' and "
                        "'predicted_evidence' (or a list of element ids)",
                    )
            if evidence is None:
                no_evidence.append(example_id)
            if label.upper() not in LABELS:
                odd_labels.append(example_id)
            by_id[example_id] = FeverousPrediction(
                id=example_id,
                answer=label,
                evidence=truncate(_elements(evidence or [], record, field)),
            )
        predictions = Predictions(by_id, str(path), "official" if official else "universal",
                                  by_position=positional[0])
        if no_evidence:
            predictions.warnings.append(
                f"{path}: {counted(len(no_evidence), 'prediction')} "
                f"{agree(len(no_evidence), 'has', 'have')} no evidence (first: "
                f"{', '.join(no_evidence[:5])}); "
                f"{agree(len(no_evidence), 'it is', 'they are')} scored with empty evidence"
            )
        if odd_labels:
            predictions.warnings.append(
                f"{path}: {counted(len(odd_labels), 'predicted label')} "
                f"{agree(len(odd_labels), 'is', 'are')} not one of {', '.join(LABELS)} "
                f"(first: id {odd_labels[0]!r}, {by_id[odd_labels[0]].answer!r}); "
                "they score as wrong"
            )
        return predictions

    def score(
        self, example: FeverousExample, prediction: FeverousPrediction | None
    ) -> dict[str, float]:
        if prediction is None:
            return dict.fromkeys(self.metrics, 0.0)
        correct, strict, precision, recall = instance_scores(
            example, prediction.answer or "", prediction.evidence
        )
        return {
            "label_accuracy": correct,
            "feverous_score": strict,
            "evidence_precision": precision,
            "evidence_recall": recall,
            "evidence_f1": harmonic(precision, recall),
        }

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        out = dict(means)
        if "evidence_precision" in out and "evidence_recall" in out:
            out["evidence_f1"] = harmonic(out["evidence_precision"], out["evidence_recall"])
        return out

    #: the official feverous_score adds every example's values (``macro_precision += ...``)
    adds_one_by_one = True
    answer_kind = "label"
    mcr_answer_kind = "yesno"
    mcr_evaluator = "hover"
    predictions_file = "predictions.jsonl"

    answer_metric = "label_accuracy"
    evidence = "wiki"
    reads_wiki_db = True
    suite_files = SuiteFiles(6, ("feverous",), ("feverous_dev_challenges.jsonl",))

    def open_wiki(self, path: Path) -> Wiki:
        from hopscore.benchmarks.feverous.wiki_pages import WikiPages

        return WikiPages(path)

    def prompt_variables(self, example: FeverousExample, inputs: PromptInputs) -> dict[str, Any]:
        """The claim; MCR asks "Is it true that <claim>?" with gold Yes iff SUPPORTS."""
        mcr = f"Is it true that {example.question}?".replace(".?", "?")
        # "wiki": the elements shown in an open-book run (--wiki-db), filled in by the run
        return {"question": example.question, "claim": example.question, "mcr_question": mcr,
                "wiki": []}

    def mcr_gold(self, example: FeverousExample) -> str:
        return "Yes" if example.label == "SUPPORTS" else "No"

    def make_prediction(self, example: FeverousExample, answer: ModelAnswer) -> FeverousPrediction:
        """The label named by the answer (yes/true: SUPPORTS, no/false: REFUTES), and as
        predicted evidence the element ids the reply cites (open book, ``--wiki-db``: ids
        among the shown ones, or well-formed ids), or those the run gives
        (``answer.evidence_ids``, the chain strategies' evidence); closed book: none."""
        from hopscore.text.labels import verdict_label

        text = answer.text or ""
        ids: list[str] = []
        if answer.evidence_ids is not None:
            ids = list(answer.evidence_ids)
        elif answer.retrieved is not None:
            ids = cited_elements(answer.output, answer.retrieved)
        elements = [e for e in (parse_element(i) for i in ids) if e is not None]
        return FeverousPrediction(id=example.id, answer=verdict_label(text) or text,
                                  evidence=truncate(elements))

    def prediction_details(self, prediction: FeverousPrediction) -> dict[str, Any]:
        return {"evidence": [element_id(e) for e in prediction.evidence]}

    def write_predictions(self, predictions: Sequence[FeverousPrediction], path: Path) -> None:
        write_jsonl_atomic(path, (
            {"id": p.id, "predicted_label": p.answer or "",
             "predicted_evidence": [element_id(e) for e in p.evidence]}
            for p in predictions
        ))  # fmt: skip


_CITED = re.compile(r"\[([^\[\]\n]{3,300}?)\]")


def cited_elements(output: str, shown: tuple[str, ...] | None = None) -> list[str]:
    """Element ids cited in brackets in a reply (after its last "Evidence" label if any):
    ids among the shown ones, exactly or ignoring case and spaces around "_"; any other
    well-formed ``<page>_<type>_<position>`` or ``<page>_title`` id as written. Order kept,
    duplicates dropped."""
    labels = list(re.finditer(r"evidence\s*[:：]", output, re.I))
    text = output[labels[-1].end():] if labels else output
    known = {_loose(i): i for i in shown or ()}
    found: dict[str, None] = {}
    for match in _CITED.finditer(text):
        for piece in match.group(1).split(","):
            raw = piece.strip().strip("\"'`*")
            element = known.get(_loose(raw))
            if element is None and parse_element(raw) is not None and _ID_SHAPE.search(raw):
                element = raw
            if element is not None:
                found[element] = None
    return list(found)


_ID_SHAPE = re.compile(
    r"_(?:(?:sentence|cell|header_cell|table_caption|item|section)_\d|title$)")


def _loose(element: str) -> str:
    return re.sub(r"\s*_\s*", "_", element.strip()).lower()
