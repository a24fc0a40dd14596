"""lm-evaluation-harness per-sample files (``--log_samples``: ``samples_<task>_<date>.jsonl``).

The format, from lm-eval's ``evaluator.py`` and ``EvaluationTracker.save_results_samples``
(0.4.x): one JSON object per line and per (document, filter), with

* ``doc_id``: the document's position in the evaluated split; ``doc``: the document itself
  (the dataset row: its ``id`` / ``question`` fields survive here);
* ``target``: the gold as a string; ``arguments``: the requests (prompt, generation kwargs);
* ``resps``: per request, the model's raw responses (a list, one per repeat), as strings;
* ``filtered_resps``: per request, the response after the filter pipeline named in
  ``filter`` (``none`` for a task without filters: the first raw response); for
  ``loglikelihood`` (multiple-choice) requests each entry is ``[log-likelihood, is_greedy]``;
* ``metrics``, the metric values and ``doc_hash`` / ``prompt_hash`` / ``target_hash``.

A task with several filters (``strict-match``, ``flexible-extract``) writes every document once
per filter; ``--filter`` chooses which responses to score (needed when there are several).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.files.io import iter_jsonl
from hopscore.harness.join import HarnessRecord, id_candidates, text_candidates

#: document fields that may hold the example id, in the order they are tried
ID_FIELDS = ("_id", "id", "qid", "question_id", "uid", "example_id")
#: document fields that may hold the question text
QUESTION_FIELDS = ("question", "Question", "query", "claim", "input", "inputs", "problem")


def read_samples(path: Path, filter_name: str | None) -> tuple[list[HarnessRecord], str]:
    """The records of one filter, and the filter's name."""
    rows: list[tuple[str, dict[str, Any]]] = []
    filters: dict[str, int] = {}
    for where, value in iter_jsonl(path):
        if not isinstance(value, dict) or "doc" not in value or "filtered_resps" not in value:
            raise InputError(where, "not an lm-evaluation-harness samples line (expected an "
                             "object with doc, resps and filtered_resps; write it with "
                             "lm_eval --log_samples)")
        name = value.get("filter", "none")
        if not isinstance(name, str):
            raise InputError(where, "expected a string", field="filter")
        filters[name] = filters.get(name, 0) + 1
        rows.append((str(where), value))
    if not rows:
        raise InputError(path, "no samples in the file")
    if filter_name is None:
        if len(filters) > 1:
            raise HopscoreError(
                f"{path} holds the responses of several filters ({_listed(filters)}): choose "
                "one with --filter NAME"
            )
        filter_name = next(iter(filters))
    elif filter_name not in filters:
        raise HopscoreError(f"{path} has no filter {filter_name!r}; it has {_listed(filters)}")
    records = [_record(where, value) for where, value in rows if
               value.get("filter", "none") == filter_name]
    return records, filter_name


def _listed(filters: dict[str, int]) -> str:
    return ", ".join(f"{name} ({count} lines)" for name, count in filters.items())


def _record(where: str, value: dict[str, Any]) -> HarnessRecord:
    doc = value["doc"] if isinstance(value["doc"], dict) else {}
    ids = id_candidates(doc.get(name) for name in ID_FIELDS)
    questions = text_candidates(doc.get(name) for name in QUESTION_FIELDS)
    filtered = value["filtered_resps"]
    if not isinstance(filtered, list) or not filtered:
        raise InputError(where, "expected a non-empty list", field="filtered_resps")
    choice = _choice(filtered)
    if choice is not None:
        return HarnessRecord(where, ids, questions, None, choice_index=choice)
    reply = _first_text(filtered[0])
    if reply is None:
        raise InputError(where, f"expected a response string, got {filtered[0]!r}",
                         field="filtered_resps")
    raw = value.get("resps")
    full = _first_text(raw[0]) if isinstance(raw, list) and raw else None
    return HarnessRecord(where, ids, questions, reply, full_output=full)


def _first_text(value: Any) -> str | None:
    """A response string, or the first of a list of repeats."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _choice(filtered: list[Any]) -> int | None:
    """The chosen option of a multiple-choice (loglikelihood) line: the highest
    log-likelihood, as lm-eval's ``acc``; None when the line is not one."""
    if len(filtered) < 2:
        return None
    scores = []
    for item in filtered:
        if not (isinstance(item, list) and len(item) == 2 and str(item[1]) in ("True", "False")):
            return None
        try:
            scores.append(float(item[0]))
        except (TypeError, ValueError):
            return None
    return max(range(len(scores)), key=scores.__getitem__)
