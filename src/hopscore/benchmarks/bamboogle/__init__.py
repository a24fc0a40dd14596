"""Bamboogle: exact match and F1 as MCR's ``evaluation.py`` computes them (``official-metrics.md``
§0, §4 and §8).

Bamboogle has no official scorer. The reference here is the evaluator of MCR (Yoran et al. 2023,
``oriyor/reasoning-on-cots``, ``src/pred_evaluators/evaluation.py``), the code behind the
Bamboogle numbers that multi-hop papers compare against:

* ``em``: SQuAD normalization (lower-case, ASCII punctuation deleted, a/an/the removed,
  whitespace collapsed), then string equality (``compute_exact_match``);
* ``f1``: MCR's ``compute_f1``, which intersects token **sets** but divides by token **list**
  lengths, so repeated tokens are under-scored ("Bora Bora" against itself scores 0.5 while EM is
  1), and scores 1 when both sides have no tokens. We reproduce this on purpose; it is not the
  multiset F1 of SQuAD.

Gold, any of: a JSON list of ``{"question", "answer"}`` objects (capitalised keys and an
``Answer_corrected`` key are accepted too); a CSV/TSV with ``Question``, ``Answer`` and optionally
``Answer_corrected`` columns (MCR's ``bamboogle_prerelease_random.csv``); or the
``Bamboogle_Prerelease.tsv`` layout (a header line, question in column 1, answer in column 5).
When ``Answer_corrected`` is non-empty it is the gold answer, as in MCR's reader. Example ids are
the 0-based position of the question in the file, as strings (``"0"``, ``"1"``, ...), as MCR
numbers them; blank lines take no position. Gold answers are used as written: a trailing newline
("George VI\\n") disappears in normalization, exactly as in MCR.

Predictions: universal JSON Lines ``{"id", "answer"}`` or a JSON object ``{id: answer}``.

Where we differ from MCR: MCR reads CSVs with pandas, which turns cells such as ``NA`` or ``None``
into empty strings; we read every cell as text. MCR's reported accuracy leaves out the questions
it abstained on; hopscore scores a question without a prediction 0 and keeps it in the
denominator (listed in ``missing_ids``), like every other benchmark here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.bamboogle import hub
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
    quick_answer,
)
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.formats import UNIVERSAL, universal_or_json
from hopscore.errors import InputError, Location
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import csv_rows, load_json, read_text
from hopscore.text.normalize import normalize_answer, set_f1

#: Column positions of the ``Bamboogle_Prerelease.tsv`` layout.
PRERELEASE_QUESTION, PRERELEASE_ANSWER = 0, 4


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class BamboogleExample(Example):
    answer: str
    answer_normalized: str

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)


def mcr_scores(prediction: str, gold_normalized: str) -> tuple[float, float]:
    """MCR's ``(compute_exact_match, compute_f1)`` against one normalized gold answer."""
    pred = normalize_answer(prediction)
    return float(pred == gold_normalized), set_f1(pred, gold_normalized)


class Bamboogle(Benchmark[BamboogleExample, Prediction]):
    name = "bamboogle"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    title = "Bamboogle"
    metric_functions = "hopscore.benchmarks.bamboogle.per_example"
    error_categories = "hopscore.benchmarks.bamboogle.categories"
    help_examples: ClassVar[dict[str, tuple[str, ...]]] = {"hopscore score": (
        "hopscore score bamboogle -g bamboogle.csv -p pred.jsonl --judge "
        "--judge-model gpt-4.1-mini",
    )}
    metrics = ("em", "f1")
    headline = ("em", "f1")
    gold_formats = (
        "JSON list of {question, answer}; CSV/TSV with Question, Answer[, Answer_corrected]; "
        "Bamboogle_Prerelease.tsv (ids = 0-based position)"
    )
    prediction_formats = "universal JSONL; JSON object {id: answer}"

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[BamboogleExample]:
        text = read_text(path)
        if text.lstrip()[:1] in ("[", "{"):
            examples = _json_examples(path)
        else:
            examples = _delimited_examples(path, text)
        if not examples:
            raise InputError(path, "no questions found")
        return check_unique_ids(examples, path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        data = universal_or_json(path)
        if data is UNIVERSAL:
            universal = load_universal(path, _universal_record, quick=quick_answer)
            return Predictions(universal, str(path), "universal")
        if not isinstance(data, dict):
            raise InputError(
                path,
                "expected universal JSON Lines or a JSON object {id: answer}, "
                f"got a JSON {json_type(data)}",
            )
        by_id: dict[str, Prediction] = {}
        for key, answer in data.items():
            if not isinstance(answer, str):
                raise InputError(
                    Location(str(path), key=key),
                    f"expected a string answer, got {json_type(answer)}",
                )
            by_id[key] = Prediction(id=key, answer=answer)
        return Predictions(by_id, str(path), "id-map")

    def score(self, example: BamboogleExample, prediction: Prediction | None) -> dict[str, float]:
        if prediction is None or prediction.answer is None:
            return {"em": 0.0, "f1": 0.0}
        em, f1 = mcr_scores(prediction.answer, example.answer_normalized)
        return {"em": em, "f1": f1}

    note_texts: ClassVar[dict[str, str]] = {
        "set_f1": "F1 is below 100 on exact answers that repeat a word: MCR's Bamboogle F1 "
        "counts each shared word once but divides by every word, so \"Bora Bora\" scores F1 "
        "50 against itself; that is MCR's metric, reproduced",
    }

    def notes(self, values: Mapping[str, float]) -> tuple[str, ...]:
        return ("set_f1",) if values["em"] == 1.0 and values["f1"] < 1.0 else ()

    mcr_evaluator = "bamboogle"

    answer_metric = "f1"
    demo_position = 3
    suite_files = SuiteFiles(5, ("bamboogle",),
                             ("bamboogle_prerelease_random.csv", "Bamboogle_Prerelease.tsv",
                              "bamboogle.json", "bamboogle_test_questions_and_answers.json"))
    suite_layout = ("bamboogle/bamboogle_prerelease_random.csv (or Bamboogle_Prerelease.tsv, "
                    "bamboogle.json)")
    mcr_metric = "F1"

    def mcr_score(self, prediction: str, gold: str) -> float | None:
        """MCR's F1 for this dataset (token sets over list lengths)."""
        return set_f1(normalize_answer(prediction), normalize_answer(gold))

    def prompt_variables(self, example: BamboogleExample, inputs: PromptInputs) -> dict[str, Any]:
        return {"question": example.question, "mcr_question": example.question}

    def make_prediction(self, example: BamboogleExample, answer: ModelAnswer) -> Prediction:
        return Prediction(id=example.id, answer=answer.text or "")

    def write_predictions(self, predictions: Sequence[Prediction], path: Path) -> None:
        write_json_atomic(path, {p.id: p.answer or "" for p in predictions})


def _example(example_id: str, question: str, answer: str, corrected: str = "") -> BamboogleExample:
    gold = corrected if corrected != "" else answer
    return BamboogleExample(
        id=example_id, question=question, answer=gold, answer_normalized=normalize_answer(gold)
    )


def _pick(record: Fields, *names: str, required: bool = True) -> str:
    for name in names:
        if record.has(name):
            value: str = record.str(name)
            return value
    if required:
        raise record.error(names[0], "missing")
    return ""


def _json_examples(path: Path) -> list[BamboogleExample]:
    data = load_json(path)
    if not isinstance(data, list):
        raise InputError(
            path, f"expected a JSON list of {{question, answer}}, got {json_type(data)}"
        )
    examples = []
    for index, item in enumerate(data):
        record = Fields.at_index(item, str(path), index)
        examples.append(
            _example(
                record.id("id") if record.has("id") else str(index),
                _pick(record, "question", "Question", required=False),
                _pick(record, "answer", "Answer"),
                _pick(record, "Answer_corrected", "answer_corrected", required=False),
            )
        )
    return examples


def _delimited_examples(path: Path, text: str) -> list[BamboogleExample]:
    suffix = path.suffix.lower()
    first_line = text.lstrip("\ufeff").split("\n", 1)[0]
    if suffix in (".tsv", ".tab") or (suffix != ".csv" and "\t" in first_line):
        delimiter = "\t"
    else:
        delimiter = ","
    rows = csv_rows(path, text.splitlines(keepends=True), delimiter)
    header = [cell.strip() for cell in next(rows, (0, []))[1]]
    columns = {name.lower(): i for i, name in reversed(list(enumerate(header)))}
    if "question" in columns and "answer" in columns:
        q_col, a_col = columns["question"], columns["answer"]
        c_col = columns.get("answer_corrected")
    elif len(header) > PRERELEASE_ANSWER:
        q_col, a_col, c_col = PRERELEASE_QUESTION, PRERELEASE_ANSWER, None
    else:
        raise InputError(
            Location(str(path), line=1),
            "expected a header with Question and Answer columns, or the "
            "Bamboogle_Prerelease.tsv layout (question in column 1, answer in column 5); "
            f"got {header!r}",
        )
    examples: list[BamboogleExample] = []
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        where = Location(str(path), line=line)
        if len(row) > len(header):
            raise InputError(where, f"{len(row)} cells but the header has {len(header)}")
        if len(row) <= a_col:
            raise InputError(where, f"no answer: {len(row)} cells, answer is column {a_col + 1}")
        examples.append(
            _example(
                str(len(examples)),
                _cell(row, q_col),
                row[a_col],
                _cell(row, c_col) if c_col is not None else "",
            )
        )
    return examples


def _cell(row: list[str], index: int) -> str:
    return row[index] if index < len(row) else ""


def _universal_record(record: Fields, example_id: str) -> Prediction:
    return Prediction(id=example_id, answer=record.str("answer"))
