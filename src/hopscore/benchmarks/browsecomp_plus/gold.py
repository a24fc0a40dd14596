"""BrowseComp-Plus gold: the decrypted queries and answers, and the two qrels files.

Accepted (``load_gold``):

* the decrypted dataset as JSON Lines (``browsecomp_plus_decrypted.jsonl``: ``query_id``,
  ``query``, ``answer``, and optionally ``evidence_docs`` / ``gold_docs``, lists of
  ``{"docid": ...}`` objects or of docids) or as parquet with the same columns;
* a folder holding such a file and/or the qrels ``qrel_evidence.txt`` and ``qrel_golds.txt``
  (in the folder or its ``topics-qrels/``); with the qrels alone the queries have no text, which
  is enough for the retrieval metrics and for verdict files, not for ``--judge``;
* a qrels file itself (``qrel_evidence.txt``): its folder is read as above.

The qrels (TREC: ``query_id Q0 docid relevance``) are looked for beside the data file, in its
``topics-qrels/`` and in ``../topics-qrels/`` (the repository's layout) and win over the rows'
document lists, as the official script reads recall from the qrels. Every query needs at least
one evidence and one gold document: recall has no value without them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Example, check_unique_ids
from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, read_text

EVIDENCE_QRELS = "qrel_evidence.txt"
GOLD_QRELS = "qrel_golds.txt"
DATA_FILES = ("browsecomp_plus_decrypted.jsonl", "browsecomp_plus_decrypted.parquet")

Qrels = dict[str, dict[str, int]]

#: What an encrypted field of the Hub copy looks like: base64 text without a space.
_ENCRYPTED = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowseCompPlusExample(Example):
    """One query: its answer and its judged documents, ``(docid, relevance)`` pairs."""

    answer: str
    evidence: tuple[tuple[str, int], ...]
    golds: tuple[tuple[str, int], ...]

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,) if self.answer else ()

    def evidence_qrels(self) -> dict[str, int]:
        return dict(self.evidence)

    def gold_qrels(self) -> dict[str, int]:
        return dict(self.golds)


def load_qrels(path: Path) -> Qrels:
    """``query_id -> {docid: relevance}`` of a TREC qrels file (4 whitespace-separated fields
    per line; blank lines are skipped)."""
    found: Qrels = {}
    for number, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        where = Location(str(path), line=number)
        if len(parts) != 4:
            raise InputError(where, f"expected 4 fields 'query_id Q0 docid relevance', "
                                    f"got {len(parts)}")
        try:
            relevance = int(parts[3])
        except ValueError:
            raise InputError(where, f"relevance {parts[3]!r} is not an integer",
                             field="relevance") from None
        found.setdefault(parts[0], {})[parts[2]] = relevance
    if not found:
        raise InputError(path, "no qrels lines")
    return found


def find_qrels(folder: Path) -> tuple[Path | None, Path | None]:
    """The evidence and gold qrels files for data in ``folder``, where the repository puts them."""
    for place in (folder, folder / "topics-qrels", folder.parent / "topics-qrels"):
        evidence, golds = place / EVIDENCE_QRELS, place / GOLD_QRELS
        if evidence.is_file() or golds.is_file():
            return (evidence if evidence.is_file() else None,
                    golds if golds.is_file() else None)
    return None, None


def load_gold(path: Path) -> list[BrowseCompPlusExample]:
    """Read any of the accepted gold layouts (module docstring)."""
    if not path.exists():
        raise InputError(path, "no such file or folder")
    if path.is_file() and path.name in (EVIDENCE_QRELS, GOLD_QRELS):
        path = path.parent
    data: Path | None = path if path.is_file() else _data_file(path)
    folder = path.parent if path.is_file() else path
    evidence_path, golds_path = find_qrels(folder)
    rows = _rows(data) if data is not None else None
    evidence = load_qrels(evidence_path) if evidence_path else None
    golds = load_qrels(golds_path) if golds_path else None
    if rows is None:
        if evidence is None or golds is None:
            raise InputError(path, f"no decrypted queries ({' or '.join(DATA_FILES)}) and not "
                                   f"both qrels files ({EVIDENCE_QRELS}, {GOLD_QRELS}) here or "
                                   "in topics-qrels/")
        ids = sorted(set(evidence) | set(golds), key=_id_order)
        rows = [(Location(str(evidence_path), key=qid), {"query_id": qid}) for qid in ids]
    examples = [_example(where, row, evidence, golds) for where, row in rows]
    if not examples:
        raise InputError(data or path, "no queries")
    return check_unique_ids(examples, data or path)


def _id_order(qid: str) -> tuple[int, int, str]:
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def _data_file(folder: Path) -> Path | None:
    for place in (folder, folder / "data"):
        for name in DATA_FILES:
            if (place / name).is_file():
                return place / name
    found = sorted(p for p in folder.iterdir() if p.suffix in (".jsonl", ".parquet"))
    if len(found) > 1:
        raise InputError(folder, f"several data files ({', '.join(p.name for p in found)}); "
                                 "give the one to read")
    return found[0] if found else None


def _rows(path: Path) -> list[tuple[Location, Any]]:
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise HopscoreError(f"{path}: reading parquet needs pyarrow "
                                "(pip install pyarrow)") from None
        try:
            table = pq.read_table(path)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise InputError(path, f"not a readable parquet file ({exc})") from None
        return [(Location(str(path), index=i), row) for i, row in enumerate(table.to_pylist())]
    return list(iter_jsonl(path))


def _example(where: Location, data: Any, evidence: Qrels | None,
             golds: Qrels | None) -> BrowseCompPlusExample:
    record = Fields(data, where)
    qid = record.id("query_id")
    question = record.str("query", "")
    answer = record.str("answer", "")
    if _ENCRYPTED.fullmatch(question):
        raise InputError(where, "the query looks encrypted (base64, as on the Hub): decrypt "
                                "the dataset first (the BrowseComp-Plus repository's "
                                "scripts_build_index/decrypt_dataset.py)", field="query")
    ev = evidence.get(qid) if evidence is not None else _docs(record, "evidence_docs")
    gd = golds.get(qid) if golds is not None else _docs(record, "gold_docs")
    for name, found in (("evidence", ev), ("gold", gd)):
        if not found:
            raise InputError(where, f"query {qid!r} has no {name} documents (in its qrels "
                                    f"file, or the row's {name}_docs): recall needs them")
    assert ev is not None and gd is not None
    return BrowseCompPlusExample(id=qid, question=question, answer=answer,
                                 evidence=_pairs(ev), golds=_pairs(gd))


def _docs(record: Fields, name: str) -> dict[str, int] | None:
    items = record.list(name, None, nullable=True)
    if items is None:
        return None
    found: dict[str, int] = {}
    for index, item in enumerate(items):
        docid = item.get("docid") if isinstance(item, dict) else item
        if isinstance(docid, bool) or not isinstance(docid, (str, int)) or str(docid) == "":
            raise record.error(name, f"item [{index}]: expected a docid or {{\"docid\": ...}}, "
                                     f"got {json_type(item)}")
        found[str(docid)] = 1
    return found


def _pairs(qrels: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(qrels.items()))


def qrels_lines(examples: Iterable[BrowseCompPlusExample], which: str) -> list[str]:
    """The examples' qrels as TREC lines (``which``: ``evidence`` or ``golds``)."""
    return [f"{e.id} Q0 {docid} {rel}" for e in examples for docid, rel in getattr(e, which)]
