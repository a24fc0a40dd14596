"""BrowseComp-Plus predictions: the official run directory, a verdict file, a TREC run file.

**Run directory** (what the official agents write and ``evaluate_run.py`` reads): one ``*.json``
per query (sub-folders are not read), each an object with

* ``query_id`` (string or integer, required);
* ``status`` (string, required; only ``"completed"`` is judged);
* ``result`` (list, required): the last item, when its ``type`` is ``"output_text"``, holds the
  final response in ``output``; otherwise the response is empty;
* ``tool_call_counts`` (object of tool name to integer, default ``{}``);
* ``retrieved_docids`` (list of docids, default ``[]``): every document the retriever returned.

Other fields are ignored. A hopscore extension: a ``judge`` object (``correct``, ``confidence``)
in a query's file, or a verdict file ``verdicts.jsonl`` (or hopscore's ``judge.jsonl``) in the
folder, one ``{"query_id" or "id", "correct": true/false/null, "confidence": number/null}`` per
line, gives the judge's verdicts offline. The official evaluator reads only ``*.json``, so both
can sit in a run directory it also reads.

**A JSON Lines file** of the same records (one per line), with ``id``/``answer`` accepted for
``query_id``/the response, is read the same way.

**TREC run file** (the retrieval-only track): ``query_id Q0 docid rank score tag`` per line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Prediction, Predictions
from hopscore.benchmarks.browsecomp_plus.measures import trec_ranking
from hopscore.errors import InputError, Location
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, load_json, read_text

COMPLETED = "completed"
VERDICT_FILES = ("verdicts.jsonl", "judge.jsonl")
#: The tool whose calls are the search calls (the official agents' ``search`` tool).
SEARCH_TOOL = "search"
RUN_DIR, RUN_JSONL, TREC_RUN = "run-dir", "run-jsonl", "trec-run"


@dataclass(frozen=True, slots=True)
class Verdict:
    """A judge's verdict on one response: ``correct`` None when the judge gave none."""

    correct: bool | None
    confidence: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowseCompPlusPrediction(Prediction):
    """One query's run record (``answer``: the final response), or its TREC ranking."""

    status: str = COMPLETED
    retrieved: tuple[str, ...] = ()
    tool_calls: tuple[tuple[str, int], ...] = ()
    verdict: Verdict | None = None
    ranking: tuple[str, ...] | None = None

    @property
    def completed(self) -> bool:
        return self.status == COMPLETED

    def answer_text(self) -> str | None:
        """The response a judge grades: none unless the run completed (the official rule)."""
        return self.answer if self.completed and self.answer else None

    @property
    def correct(self) -> bool:
        """The official rule: only a completed run with a response has a verdict that counts."""
        return self.answer_text() is not None and self.verdict is not None \
            and self.verdict.correct is True

    def calls(self, tool: str) -> int:
        return sum(count for name, count in self.tool_calls if name == tool)


def load(path: Path) -> Predictions[BrowseCompPlusPrediction]:
    """A run directory, a JSON Lines file of run records or a TREC run file."""
    if path.is_dir():
        return _run_dir(path)
    if not path.is_file():
        raise InputError(path, "no such file or folder")
    if path.suffix == ".json":
        found = _record(Fields(load_json(path), Location(str(path))), {})
        return Predictions({found.id: found}, str(path), RUN_JSONL)
    first = next((line for line in read_text(path).splitlines() if line.strip()), "")
    if first.lstrip().startswith("{"):
        return _run_jsonl(path)
    return _trec(path)


def _run_dir(folder: Path) -> Predictions[BrowseCompPlusPrediction]:
    verdicts = _verdicts(folder)
    by_id: dict[str, BrowseCompPlusPrediction] = {}
    origin: dict[str, str] = {}
    for file in sorted(folder.glob("*.json")):
        record = Fields(load_json(file), Location(str(file)))
        found = _record(record, verdicts)
        if found.id in by_id:
            raise InputError(record.where, f"query {found.id!r} again (first in "
                                           f"{origin[found.id]})", field="query_id")
        by_id[found.id] = found
        origin[found.id] = file.name
    if not by_id:
        raise InputError(folder, "no *.json run files in this folder")
    warnings = []
    unused = sorted(set(verdicts) - set(by_id))
    if unused:
        warnings.append(f"{len(unused)} verdicts are for queries with no run file and were "
                        f"ignored (first: {', '.join(unused[:5])})")
    return Predictions(by_id, str(folder), RUN_DIR, warnings)


def _run_jsonl(path: Path) -> Predictions[BrowseCompPlusPrediction]:
    by_id: dict[str, BrowseCompPlusPrediction] = {}
    for where, value in iter_jsonl(path):
        found = _record(Fields(value, where), {})
        if found.id in by_id:
            raise InputError(where, f"query {found.id!r} again", field="query_id")
        by_id[found.id] = found
    return Predictions(by_id, str(path), RUN_JSONL)


def _record(record: Fields, verdicts: Mapping[str, Verdict]) -> BrowseCompPlusPrediction:
    id_field = "query_id" if record.has("query_id") or not record.has("id") else "id"
    qid = record.id(id_field)
    if record.has("result") or not record.has("answer"):
        response = _response(record)
        status = record.str("status")
    else:
        response = record.str("answer", nullable=True) or ""
        status = record.str("status", COMPLETED)
    counts = record.dict("tool_call_counts", {}, nullable=True) or {}
    for tool, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise record.error("tool_call_counts", f"tool {tool!r}: expected a count, "
                                                   f"got {json_type(count)} {count!r}")
    docids = record.list("retrieved_docids", [], nullable=True) or []
    for index, docid in enumerate(docids):
        if isinstance(docid, bool) or not isinstance(docid, (str, int)):
            raise record.error("retrieved_docids", f"item [{index}]: expected a docid, got "
                                                   f"{json_type(docid)}")
    verdict = verdicts.get(qid)
    if record.has("judge") and record.raw("judge") is not None:
        verdict = _verdict(Fields(record.dict("judge"), record.where), "judge.")
    return BrowseCompPlusPrediction(
        id=qid, answer=response, status=status, retrieved=tuple(str(d) for d in docids),
        tool_calls=tuple(sorted(counts.items())), verdict=verdict)


def _response(record: Fields) -> str:
    result = record.list("result")
    if not result:
        return ""
    last = result[-1]
    if not isinstance(last, dict):
        raise record.error("result", f"item [{len(result) - 1}]: expected an object, got "
                                     f"{json_type(last)}")
    if last.get("type") != "output_text":
        return ""
    output = last.get("output")
    if output is None:
        return ""
    if not isinstance(output, str):
        raise record.error("result", f"item [{len(result) - 1}]: 'output' expected a string, "
                                     f"got {json_type(output)}")
    return output


def _verdicts(folder: Path) -> dict[str, Verdict]:
    path = next((folder / name for name in VERDICT_FILES if (folder / name).is_file()), None)
    if path is None:
        return {}
    found: dict[str, Verdict] = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        qid = record.id("query_id" if record.has("query_id") else "id")
        found[qid] = _verdict(record, "")  # the latest line of an id wins (a judge re-run)
    return found


def _verdict(record: Fields, prefix: str) -> Verdict:
    correct = record.raw("correct", None)
    if correct is not None and not isinstance(correct, bool):
        raise record.error(prefix + "correct", f"expected true, false or null, got "
                                               f"{json_type(correct)}")
    confidence = record.raw("confidence", None)
    if confidence is not None and (isinstance(confidence, bool)
                                   or not isinstance(confidence, (int, float))):
        raise record.error(prefix + "confidence", f"expected a number or null, got "
                                                  f"{json_type(confidence)}")
    if record.raw("parse_ok", True) is False:
        correct = None
    return Verdict(correct, None if confidence is None else float(confidence))


def _trec(path: Path) -> Predictions[BrowseCompPlusPrediction]:
    lines: dict[str, list[tuple[str, float]]] = {}
    docids: dict[str, set[str]] = {}
    repeated = 0
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        where = Location(str(path), line=number)
        if len(parts) != 6:
            raise InputError(where, "expected a TREC run line 'query_id Q0 docid rank score "
                                    f"tag' (6 fields), got {len(parts)} fields")
        try:
            score = float(parts[4])
        except ValueError:
            raise InputError(where, f"score {parts[4]!r} is not a number", field="score") from None
        seen = docids.setdefault(parts[0], set())
        repeated += parts[2] in seen
        seen.add(parts[2])
        lines.setdefault(parts[0], []).append((parts[2], score))
    if not lines:
        raise InputError(path, "no run lines")
    warnings = [f"{repeated} lines repeat a (query, docid) pair; the first line of each is "
                "kept"] if repeated else []
    by_id = {qid: BrowseCompPlusPrediction(id=qid, answer=None, ranking=trec_ranking(found))
             for qid, found in lines.items()}
    return Predictions(by_id, str(path), TREC_RUN, warnings)


def has_verdicts(predictions: Iterable[BrowseCompPlusPrediction]) -> bool:
    return any(p.verdict is not None for p in predictions)


def run_record(prediction: BrowseCompPlusPrediction) -> dict[str, Any]:
    """One query's file in the official layout."""
    record: dict[str, Any] = {
        "query_id": prediction.id,
        "tool_call_counts": dict(prediction.tool_calls),
        "status": prediction.status,
        "retrieved_docids": list(prediction.retrieved),
        "result": [{"type": "output_text", "output": prediction.answer or ""}],
    }
    if prediction.verdict is not None:
        record["judge"] = {"correct": prediction.verdict.correct,
                           "confidence": prediction.verdict.confidence}
    return record


def write_run_dir(predictions: Sequence[BrowseCompPlusPrediction], folder: Path) -> None:
    """Write one ``<query_id>.json`` per prediction (the official run-directory layout); a
    ``*.json`` left in the folder by an earlier write of other queries is removed, other files
    (a verdict file) are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    for prediction in predictions:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in prediction.id) + ".json"
        if name in written:
            name = f"{name[:-5]}_{len(written)}.json"  # two ids that read the same as a name
        written[name] = prediction.id
        write_json_atomic(folder / name, run_record(prediction))
    for stale in folder.glob("*.json"):
        if stale.name not in written and stale.is_file():
            stale.unlink()
