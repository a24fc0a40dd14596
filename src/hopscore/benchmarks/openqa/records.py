"""Open-QA records and the files they come from.

Gold, one JSON object a line, any of:

* FlashRAG: ``{"id", "question", "golden_answers": [str, ...], "metadata"?}``;
* R1-Searcher ``data/eval_set``: ``{"idx": 1-based int, "question", "answer": str}``;
* R1-Searcher ``data/eval_results``: ``{"question", "answer", "pred_ans", "gpt4o_output", ...}``
  (no id: ids are the 1-based line positions, so the same file is its own predictions);
* Search-R1's processed rows: ``{"question", "golden_answers" | "reward_model":
  {"ground_truth": {"target": [...]}}, "data_source"}``.

The dataset (one of :data:`DATASETS`) is a row's ``dataset`` or ``data_source`` field, else it
is read from the file's path (``nq/test.jsonl``, ``hotpotqa_500.jsonl``, ``2wiki/dev.jsonl``);
it names the ``dataset`` group, so a file mixing the seven is reported per dataset.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath

from hopscore.benchmarks.base import Example, Prediction, check_unique_ids
from hopscore.benchmarks.fast_init import fast_init
from hopscore.errors import InputError
from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl_numbered

#: The seven datasets of the Search-R1 / FlashRAG suite, by FlashRAG's names.
DATASETS = ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")

#: Other spellings in file names and papers -> the FlashRAG name.
SPELLINGS = {"natural_questions": "nq", "nq_open": "nq", "tqa": "triviaqa", "trivia": "triviaqa",
             "hotpot": "hotpotqa", "2wiki": "2wikimultihopqa", "2wikimqa": "2wikimultihopqa",
             "twowiki": "2wikimultihopqa", "musique_ans": "musique"}


def dataset_name(text: str) -> str | None:
    """The FlashRAG name of a dataset written ``text`` (case-insensitive), else None."""
    key = text.strip().lower().replace("-", "_")
    if key in DATASETS:
        return key
    return SPELLINGS.get(key) or (key.replace("_", "") if key.replace("_", "") in DATASETS
                                  else None)


def dataset_from_path(path: str) -> str | None:
    """The dataset a path names: its file name's first word (``hotpotqa_500.jsonl``), else the
    nearest folder (``nq/test.jsonl``), else a Hub name's config (``...:nq@test``)."""
    pure = PurePath(path)
    stem = pure.name.split(".")[0]
    for candidate in (stem, stem.split("_")[0], stem.split("-")[0],
                      *(part for part in reversed(pure.parts[:-1]))):
        found = dataset_name(candidate)
        if found is not None:
            return found
    for piece in path.replace("@", ":").split(":"):
        found = dataset_name(piece)
        if found is not None:
            return found
    return None


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class OpenQAExample(Example):
    answers: tuple[str, ...]
    #: FlashRAG name of its dataset ("" when neither the row nor the path says)
    dataset: str = ""

    def groups(self) -> dict[str, str]:
        return {"dataset": self.dataset} if self.dataset else {}

    def gold_answers(self) -> tuple[str, ...]:
        return self.answers


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class OpenQAPrediction(Prediction):
    """A prediction: ``answer`` is the text scored by EM, F1 and cover-EM (the ``<answer>``
    span when the reply has one); ``reply`` the whole reply when it had tags (Search-R1's
    ``qa_em`` reads it); ``verdict`` a judge's True/False recorded with it (R1-Searcher's
    ``gpt4o_output``), ``question`` and ``source`` are kept for a file without ids (its
    rows are matched by position, and a row asking another question is an error)."""

    reply: str | None = None
    verdict: bool | None = None
    #: the question a prediction file without ids asked (checked against the gold's), and
    #: the file, for the error when they differ
    question: str | None = None
    source: str = ""


def gold_answers_of(record: Fields) -> tuple[str, ...]:
    """The gold answers of one gold row, whichever layout it has."""
    if record.has("golden_answers"):
        value = record.raw("golden_answers")
        field = "golden_answers"
    elif record.has("reward_model"):
        truth = Fields(record.dict("reward_model"), record.where).dict("ground_truth")
        value, field = truth.get("target"), "reward_model.ground_truth.target"
    elif record.has("answer"):
        value, field = record.raw("answer"), "answer"
    else:
        raise record.error("golden_answers", "missing (nor 'answer', nor 'reward_model')")
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise record.error(field, "expected a string or a list of strings")
    if not value:
        raise record.error(field, "no gold answer")
    return tuple(value)


def read_gold(path: Path) -> list[OpenQAExample]:
    """Every gold row of ``path`` (see the module's docstring for the layouts)."""
    from_path = dataset_from_path(str(path)) or ""
    examples = [_example(record, position, from_path) for record, position in _rows(path)]
    if not examples:
        raise InputError(path, "no questions found")
    return check_unique_ids(examples, path)


def _rows(path: Path) -> Iterator[tuple[Fields, int]]:
    for position, (line, value) in enumerate(iter_jsonl_numbered(path), start=1):
        yield Fields.at_line(value, str(path), line), position


def _example(record: Fields, position: int, from_path: str) -> OpenQAExample:
    if record.has("id"):
        example_id = record.id("id")
    elif record.has("idx"):
        example_id = record.id("idx")
    else:
        example_id = str(position)
    named = ""
    for field in ("dataset", "data_source"):
        if record.has(field):
            text = record.str(field)
            found = dataset_name(text)
            named = found if found is not None else text
            break
    return OpenQAExample(id=example_id, question=record.str("question"),
                         answers=gold_answers_of(record), dataset=named or from_path)
