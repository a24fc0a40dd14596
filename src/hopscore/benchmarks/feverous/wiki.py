"""The FEVEROUS Wikipedia database (``feverous_wikiv1.db``) for open-book runs (``--wiki-db``).

Format (``Raldir/FEVEROUS`` ``database/create_wiki_db.py`` and ``utils/wiki_page.py``;
``mcr-methods-and-feverous-db.md`` B1-B4): SQLite with one table ``wiki(id PRIMARY KEY, data)``;
``id`` is the page title and ``data`` the page as JSON text, both NFD-normalised. A page has
``title``, ``order`` (its element keys in document order), ``sentence_<n>`` strings,
``section_<n>`` ``{"value", "level"}``, ``table_<t>`` ``{"type", "table": [[cell, ...], ...],
"caption"?}`` whose cells are ``{"id", "value", "is_header", "row_span", "column_span"}``, and
``list_<l>`` ``{"type", "list": [{"id", "value", "level"}, ...]}``. Evidence ids are global:
``<page>_sentence_0``, ``<page>_cell_0_1_2``, ``<page>_header_cell_0_0_1``,
``<page>_table_caption_0``, ``<page>_item_0_3``, ``<page>_section_2``.

Retrieval for a claim (:meth:`FeverousWiki.retrieve`):

1. pages: titles equal to a word n-gram of the claim (longest first, as the official baseline
   takes claim entities that equal a title), looked up by the primary key, so it works on the
   full 5.4-million-page database; when fewer than ``pages`` titles match and the database
   holds at most :data:`BM25_PAGE_LIMIT` pages, BM25 over every page's title and first
   sentences fills up;
2. elements: the retrieved pages' sentences, list items, captions and table rows are ranked by
   BM25 against the claim (a pool per claim, as the baseline's sentence and table TF-IDF), and
   the best ``elements`` are shown, grouped by page in document order, each with its id (a
   table row shows every cell with its own id, under the table's header row).

Link markup (``[[Target|anchor]]``) is shown as its anchor text.
"""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError

BM25_PAGE_LIMIT = 200_000
MAX_NGRAM = 6
_LINK = re.compile(r"\[\[([^\]|]*)\|([^\]]*)\]\]")
_BARE_LINK = re.compile(r"\[\[([^\]]*)\]\]")
_WORD = re.compile(r"[\w'’\-.&]+", re.UNICODE)
_EDGE = ".,;:!?'\"’“”()"
_STOP = frozenset(("a", "an", "the", "of", "in", "on", "at", "to", "and", "or", "is", "was",
                   "were", "be", "by", "for", "with", "as", "from", "that", "this", "it", "its",
                   "his", "her", "their", "has", "have", "had", "not", "no"))


def plain(text: str) -> str:
    """Page text without link markup."""
    return _BARE_LINK.sub(r"\1", _LINK.sub(r"\2", text))


@dataclass(frozen=True, slots=True)
class Unit:
    """A retrieval unit of a page: one sentence, item, caption or section, or one table row."""

    page: str
    #: global element ids (a table row: one per cell)
    ids: tuple[str, ...]
    #: plain text for ranking
    text: str
    #: the line shown in a prompt, ids in brackets
    display: str
    #: position in the page, for showing units in document order
    position: int
    #: the table's number, for table rows (their header row is shown with them)
    table: int | None = None
    header: bool = False


def _cell_text(cell: dict[str, Any]) -> str:
    value = plain(str(cell.get("value", "")))
    return f"[H] {value}" if cell.get("is_header") else value


def page_units(title: str, data: dict[str, Any]) -> list[Unit]:
    """Every unit of a page, in document order (empty tables and lists are skipped)."""
    units: list[Unit] = []
    order = data.get("order")
    keys = order if isinstance(order, list) else [k for k in data if "_" in k]
    for position, key in enumerate(keys):
        value = data.get(key)
        if not isinstance(key, str) or value is None:
            continue
        if key.startswith("sentence_") and isinstance(value, str) and value.strip():
            text = plain(value)
            units.append(Unit(title, (f"{title}_{key}",), text,
                              f"[{title}_{key}] {text}", position))
        elif key.startswith("section_") and isinstance(value, dict):
            text = plain(str(value.get("value", "")))
            if text.strip():
                units.append(Unit(title, (f"{title}_{key}",), text,
                                  f"[{title}_{key}] (section) {text}", position))
        elif key.startswith("table_") and isinstance(value, dict):
            units.extend(_table_units(title, key, value, position))
        elif key.startswith("list_") and isinstance(value, dict):
            for item in value.get("list") or []:
                if isinstance(item, dict) and str(item.get("value", "")).strip() and \
                        item.get("id"):
                    text = plain(str(item["value"]))
                    depth = "  " * int(item.get("level") or 0)
                    units.append(Unit(title, (f"{title}_{item['id']}",), text,
                                      f"{depth}[{title}_{item['id']}] - {text}", position))
    return units


def _table_units(title: str, key: str, table: dict[str, Any], position: int) -> list[Unit]:
    number = int(key.split("_")[1]) if key.split("_")[1].isdigit() else 0
    rows = table.get("table") or []
    units: list[Unit] = []
    caption = table.get("caption")
    if isinstance(caption, str) and caption.strip():
        element = f"{title}_table_caption_{number}"
        text = plain(caption)
        units.append(Unit(title, (element,), text, f"[{element}] (table caption) {text}",
                          position, number))
    for row in rows:
        cells = [c for c in row if isinstance(c, dict) and c.get("id")] \
            if isinstance(row, list) else []
        if not cells:
            continue
        ids = tuple(f"{title}_{c['id']}" for c in cells)
        text = " | ".join(_cell_text(c) for c in cells)
        display = " | ".join(f"[{title}_{c['id']}] {_cell_text(c)}" for c in cells)
        header = all(bool(c.get("is_header")) for c in cells)
        units.append(Unit(title, ids, text, display, position, number, header))
    return units


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


class FeverousWiki:
    """Read-only access to a ``feverous_wikiv1.db``."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise HopscoreError(f"--wiki-db {path}: file not found")
        self.path = path
        uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro&immutable=1"
        try:
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(wiki)")}
            if not {"id", "data"} <= columns:
                raise HopscoreError(f"--wiki-db {path}: no table wiki(id, data) (the "
                                    "feverous_wikiv1.db format)")
            self.pages = int(self._db.execute("SELECT COUNT(*) FROM wiki").fetchone()[0])
        except sqlite3.DatabaseError as exc:
            raise HopscoreError(f"--wiki-db {path}: not a readable SQLite database: {exc}") \
                from None
        self._bm25: Any = None
        self._bm25_titles: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {"source": "wiki", "path": str(self.path), "pages": self.pages}

    def page_data(self, title: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT data FROM wiki WHERE id = ?", (nfd(title),)).fetchone()
        if row is None:
            return None
        try:
            data = json.loads(row[0])
        except (TypeError, ValueError):
            raise HopscoreError(f"--wiki-db {self.path}: page {title!r} is not JSON") from None
        return data if isinstance(data, dict) else None

    @lru_cache(maxsize=4096)  # noqa: B019 - one reader per run, pages are immutable
    def units(self, title: str) -> tuple[Unit, ...]:
        data = self.page_data(title)
        return () if data is None else tuple(page_units(nfd(title), data))

    def _existing(self, candidates: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(candidates), 500):
            chunk = candidates[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self._db.execute(
                f"SELECT id FROM wiki WHERE id IN ({marks})", chunk))
        return found

    def title_matches(self, text: str) -> list[str]:
        """Page titles equal to word n-grams of ``text``, longest n-grams first."""
        words = [w.strip(_EDGE) for w in _WORD.findall(text)]
        words = [w for w in words if w]
        ordered: list[str] = []
        for n in range(min(MAX_NGRAM, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                gram = words[i:i + n]
                if all(w.lower() in _STOP for w in gram):
                    continue
                phrase = " ".join(gram)
                for variant in (phrase, phrase[:1].upper() + phrase[1:]):
                    if variant not in ordered:
                        ordered.append(variant)
        normalized = [nfd(c) for c in ordered]
        present = self._existing(normalized)
        return list(dict.fromkeys(c for c in normalized if c in present))

    def _bm25_pages(self, text: str, k: int) -> list[str]:
        if self.pages > BM25_PAGE_LIMIT or k <= 0:
            return []
        import bm25s

        if self._bm25 is None:
            titles: list[str] = []
            texts: list[str] = []
            for title, raw in self._db.execute("SELECT id, data FROM wiki"):
                try:
                    data = json.loads(raw)
                except (TypeError, ValueError):
                    continue
                sentences = [plain(data[key]) for key in (data.get("order") or [])
                             if isinstance(key, str) and key.startswith("sentence_")
                             and isinstance(data.get(key), str)][:3]
                titles.append(title)
                texts.append(f"{title} {title} " + " ".join(sentences))
            if not titles:
                return []
            self._bm25_titles = titles
            self._bm25 = bm25s.BM25()
            self._bm25.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                             show_progress=False)
        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not any(len(ids) for ids in tokens.ids):
            return []
        results, scores = self._bm25.retrieve(tokens, k=min(k, len(self._bm25_titles)),
                                              show_progress=False)
        return [self._bm25_titles[int(i)] for i, s in zip(results[0], scores[0], strict=True)
                if float(s) > 0]

    def find_pages(self, text: str, k: int) -> list[str]:
        pages = self.title_matches(text)[:k]
        if len(pages) < k:
            pages += [p for p in self._bm25_pages(text, 2 * k) if p not in pages][:k - len(pages)]
        return pages

    def retrieve(self, claim: str, pages: int, elements: int) -> list[Unit]:
        """The best ``elements`` units of the best ``pages`` pages for ``claim``."""
        pool = [unit for title in self.find_pages(claim, pages) for unit in self.units(title)]
        return rank_units(pool, claim, elements)


def rank_units(pool: list[Unit], query: str, k: int) -> list[Unit]:
    if not pool:
        return []
    import bm25s

    index = bm25s.BM25()
    index.index(bm25s.tokenize([u.text for u in pool], stopwords="en", show_progress=False),
                show_progress=False)
    tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
    if not any(len(ids) for ids in tokens.ids):
        return pool[:k]
    results, scores = index.retrieve(tokens, k=min(k, len(pool)), show_progress=False)
    return [pool[int(i)] for i, s in zip(results[0], scores[0], strict=True) if float(s) > 0]


def render(units: list[Unit], wiki: FeverousWiki | None = None) -> list[dict[str, Any]]:
    """Shown units grouped by page in document order; a table row brings its header row."""
    by_page: dict[str, list[Unit]] = {}
    for unit in units:
        by_page.setdefault(unit.page, []).append(unit)
    out: list[dict[str, Any]] = []
    for page, shown in by_page.items():
        chosen = set(shown)
        if wiki is not None:
            tables = {u.table for u in shown if u.table is not None and not u.header}
            chosen.update(u for u in wiki.units(page) if u.header and u.table in tables)
        lines = sorted(chosen, key=lambda u: (u.position, _row_number(u)))
        # the page's title is shown too ("Page: <title>"): FEVEROUS's <page>_title element
        out.append({"title": page, "lines": [u.display for u in lines],
                    "ids": [f"{page}_title", *(i for u in lines for i in u.ids)]})
    return out


def _row_number(unit: Unit) -> int:
    first = unit.ids[0]
    parts = first.rsplit("_", 2)
    return int(parts[-2]) if len(parts) == 3 and parts[-2].isdigit() and "cell" in first else -1
