"""MuSiQue's Hugging Face layouts.

* Copies of the official files (:data:`COPIES`: ``musique_ans_v1.0_dev.jsonl`` and the others
  as uploaded, or converted to parquet): the official records, except that ``datasets`` may
  store ``paragraphs`` and ``question_decomposition`` as structs of lists (``{idx: [...],
  title: [...], ...}``), which are turned back into lists of objects.
* FlashRAG's ``musique/dev.jsonl`` (``RUC-NLPIR/FlashRAG_datasets``): ``{id, question,
  golden_answers, metadata: {answerable, question_decomposition: [{..., support_paragraph}]}}``.
  ``golden_answers`` is the answer and its aliases, and the supporting paragraphs come from the
  decomposition; the 18 distractor paragraphs are not in it, so the paragraphs shown to a model
  are the supporting ones only (an oracle setting), while support F1 scores as officially.

Read from the dataset cards and file listings of the copies (docs/getting-the-data.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hopscore.benchmarks.hub_layout import HubLayout, LayoutError, Row

#: Hub copies whose layout was read from their cards and files
COPIES = ("bdsaglam/musique", "voidful/MuSiQue", "dgslibisey/MuSiQue",
          "RUC-NLPIR/FlashRAG_datasets")


def _objects(value: Any, where: str, index: int, field: str) -> Any:
    """A struct of equal-length lists -> a list of objects; anything else unchanged."""
    if not isinstance(value, Mapping):
        return value
    columns = {key: column for key, column in value.items()}
    lengths = {len(c) for c in columns.values() if isinstance(c, list)}
    if len(lengths) != 1 or not all(isinstance(c, list) for c in columns.values()):
        raise LayoutError(where, index, field, "expected a struct of lists of one length")
    size = lengths.pop()
    return [{key: column[i] for key, column in columns.items()} for i in range(size)]


def _from_flashrag(row: Row, where: str, index: int) -> dict[str, Any]:
    answers = row.get("golden_answers")
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise LayoutError(where, index, "golden_answers", "expected a non-empty list of strings")
    metadata = row.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise LayoutError(where, index, "metadata", "expected an object")
    hops = _objects(metadata.get("question_decomposition") or [], where, index,
                    "metadata.question_decomposition")
    paragraphs: dict[int, dict[str, Any]] = {}
    decomposition = []
    for hop in hops if isinstance(hops, list) else ():
        if not isinstance(hop, Mapping):
            raise LayoutError(where, index, "metadata.question_decomposition",
                              "expected objects")
        paragraph = hop.get("support_paragraph")
        if isinstance(paragraph, Mapping) and isinstance(paragraph.get("idx"), int):
            paragraphs[paragraph["idx"]] = {**paragraph, "is_supporting": True}
        decomposition.append({key: value for key, value in hop.items()
                              if key != "support_paragraph"})
    return {"id": row.get("id"), "paragraphs": [paragraphs[i] for i in sorted(paragraphs)],
            "question": row.get("question", ""), "question_decomposition": decomposition,
            "answer": answers[0], "answer_aliases": answers[1:],
            "answerable": metadata.get("answerable", True)}


def to_official(row: Row, where: str, index: int) -> dict[str, Any]:
    if "golden_answers" in row and "answer" not in row:
        return _from_flashrag(row, where, index)
    record = dict(row)
    for field in ("paragraphs", "question_decomposition"):
        if field in record:
            record[field] = _objects(record[field], where, index, field)
    return record


def is_hub_row(row: Row) -> bool:
    return ("golden_answers" in row and "answer" not in row) or any(
        isinstance(row.get(field), Mapping) for field in ("paragraphs", "question_decomposition"))


LAYOUT = HubLayout(".jsonl", "validation", to_official, is_hub_row)
