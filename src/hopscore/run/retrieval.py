"""BM25 retrieval over a local JSON Lines corpus, for closed-book benchmarks (``--corpus``).

One document per line: ``{"id": ..., "title": ..., "text": ...}``. ``text`` (or ``contents`` /
``content``) is required; ``title`` is optional and is indexed with the text. A record without
a ``title`` whose ``contents`` holds a title line (the DPR wiki-18 passages: ``{"id",
"contents": "\"Title\"\ntext"}``) has that line, without its double quotes, as its title and
the rest as its text; the id is ``id``,
``_id``, ``doc_id``, ``docid`` or ``url``, else ``line N``. Ids must be unique: a benchmark
may score them as predicted evidence (its ``make_prediction`` reads ``ModelAnswer.retrieved``)
when they are its own paragraph ids. The index is ``bm25s`` (Lucene's BM25 variant, k1 = 1.5,
b = 0.75) over lower-cased words without English stop words, built once per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.files.digest import file_sha256
from hopscore.files.fields import Fields
from hopscore.files.io import iter_jsonl

ID_FIELDS = ("id", "_id", "doc_id", "docid", "url")
TEXT_FIELDS = ("text", "contents", "content")


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    title: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "text": self.text}


def read_corpus(path: Path, id_fields: tuple[str, ...] = ID_FIELDS, *,
                require_id: bool = False) -> list[Document]:
    """The documents of a JSONL corpus; the id is the first of ``id_fields`` present (with
    ``require_id``, a record without one is an error, else its id is ``line N``)."""
    documents: list[Document] = []
    seen: dict[str, str] = {}
    for where, value in iter_jsonl(path):
        record = Fields(value, where)
        doc_id = next((record.id(f) for f in id_fields if record.has(f)), None)
        if doc_id is None:
            if require_id:
                raise record.error(id_fields[0], "missing")
            doc_id = f"line {where.line}"
        text_field = next((f for f in TEXT_FIELDS if record.has(f)), "text")
        text = record.str(text_field)
        if doc_id in seen:
            raise InputError(where, f"duplicate document id {doc_id!r} (first at {seen[doc_id]})",
                             field=id_fields[0] if require_id else "id")
        seen[doc_id] = str(where)
        title = record.str("title", "") or ""
        if not record.has("title") and text_field == "contents":
            title, text = split_title(text)
        documents.append(Document(doc_id, title, text))
    if not documents:
        raise InputError(path, "the corpus holds no documents")
    return documents


def split_title(contents: str) -> tuple[str, str]:
    """A wiki-18 passage's ``contents``: (the first line without its double quotes, the
    rest); a text of one line has no title."""
    head, newline, rest = contents.partition("\n")
    if not newline:
        return "", contents
    title = head.strip()
    if len(title) >= 2 and title[0] == title[-1] == '"':
        title = title[1:-1].strip()
    return title, rest


class Corpus:
    """A BM25 index over documents; :meth:`search` returns the best ``k``, best first."""

    def __init__(self, path: Path, id_fields: tuple[str, ...] = ID_FIELDS, *,
                 require_id: bool = False) -> None:
        try:
            import bm25s
        except ImportError:  # pragma: no cover - a core dependency
            raise HopscoreError("retrieval needs the bm25s package: pip install bm25s") from None
        self.path = path
        self.documents = read_corpus(path, id_fields, require_id=require_id)
        self.sha256 = file_sha256(path)
        self._bm25s: Any = bm25s
        tokens = bm25s.tokenize(
            [f"{d.title} {d.text}" for d in self.documents], stopwords="en", show_progress=False
        )
        self._index: Any = bm25s.BM25()
        self._index.index(tokens, show_progress=False)

    def search(self, query: str, k: int) -> list[Document]:
        k = min(k, len(self.documents))
        if k <= 0 or not query.strip():
            return []
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not any(len(ids) for ids in tokens.ids):
            return []  # only stop words or unknown characters
        results, scores = self._index.retrieve(tokens, k=k, show_progress=False)
        return [
            self.documents[int(i)]
            for i, score in zip(results[0], scores[0], strict=True)
            if float(score) > 0
        ]
