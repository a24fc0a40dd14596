"""HybridQA's tables and linked passages (``wenhuchen/WikiTables-WithLinks``), laid out for a
model prompt within a token budget.

A tables folder holds ``tables_tok/<table_id>.json`` (``url, title, header, data,
section_title, section_text, uid`` and sometimes ``intro``; every cell is ``[text, [links]]``)
and ``request_tok/<table_id>.json`` (link -> passage text). See the format notes in the shared
data folder's README.

:func:`table_context` renders the table as Markdown and adds the passages behind its cells'
links, most relevant to the question first (word overlap), while the estimated size stays within
the budget. Tokens are estimated as characters / 4, the usual rule of thumb for English with
BPE tokenizers; a table that alone exceeds the budget keeps its header and its first rows, and
the prompt says how many rows and passages were left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote

from hopscore.errors import InputError, Location
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json

CHARS_PER_TOKEN = 4
#: Longest passage kept, in characters (the leads of Wikipedia articles; most are shorter).
MAX_PASSAGE_CHARS = 1200
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or",
    "is", "are", "was", "were", "be", "been", "what", "which", "who", "whom", "whose", "when",
    "where", "why", "how", "that", "this", "these", "those", "it", "its", "as", "his", "her",
    "their", "there", "than",
})


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    links: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WikiTable:
    table_id: str
    title: str
    section_title: str
    section_text: str
    intro: str
    header: tuple[Cell, ...]
    rows: tuple[tuple[Cell, ...], ...]
    #: link -> passage text (the table's own request file)
    passages: dict[str, str]


@dataclass(frozen=True, slots=True)
class TableContext:
    """Template variables for one question's table."""

    title: str
    section: str
    intro: str
    markdown: str
    passages: tuple[tuple[str, str], ...]
    omitted_rows: int
    omitted_passages: int

    def variables(self) -> dict[str, object]:
        return {
            "table_title": self.title, "table_section": self.section, "table_intro": self.intro,
            "table": self.markdown,
            "passages": [{"title": title, "text": text} for title, text in self.passages],
            "omitted_rows": self.omitted_rows, "omitted_passages": self.omitted_passages,
        }  # fmt: skip


def _cells(value: object, record: Fields, field: str) -> tuple[Cell, ...]:
    if not isinstance(value, list):
        raise record.error(
            field, f"expected a list of [text, [links]] cells, got {json_type(value)}"
        )
    cells = []
    for cell in value:
        if (
            not isinstance(cell, list)
            or len(cell) != 2
            or not isinstance(cell[0], str)
            or not isinstance(cell[1], list)
            or not all(isinstance(link, str) for link in cell[1])
        ):
            raise record.error(field, f"expected [text, [links]] cells, got {cell!r}"[:300])
        cells.append(Cell(cell[0], tuple(cell[1])))
    return tuple(cells)


@lru_cache(maxsize=64)
def load_table(folder: Path, table_id: str) -> WikiTable:
    """Read one table and its passages; a missing file is an error naming it."""
    table_path = folder / "tables_tok" / f"{table_id}.json"
    request_path = folder / "request_tok" / f"{table_id}.json"
    for path in (table_path, request_path):
        if not path.is_file():
            raise InputError(path, f"no such file: the tables folder has no table {table_id!r}")
    record = Fields(load_json(table_path), Location(str(table_path)))
    rows = tuple(
        _cells(row, record, f"data[{i}]") for i, row in enumerate(record.list("data"))
    )
    passages = load_json(request_path)
    if not isinstance(passages, dict) or not all(isinstance(v, str) for v in passages.values()):
        raise InputError(request_path, "expected an object mapping links to passage text")
    return WikiTable(
        table_id=table_id,
        title=record.str("title", ""),
        section_title=record.str("section_title", ""),
        section_text=record.str("section_text", ""),
        intro=record.str("intro", ""),
        header=_cells(record.raw("header"), record, "header"),
        rows=rows,
        passages=passages,
    )


def link_title(link: str) -> str:
    """``/wiki/Nord-Vest_(development_region)`` -> ``Nord-Vest (development region)``."""
    return unquote(link.rsplit("/", 1)[-1]).replace("_", " ")


def _markdown_row(cells: tuple[Cell, ...]) -> str:
    return "| " + " | ".join(c.text.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS}


def _size(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def table_context(table: WikiTable, question: str, budget_tokens: int) -> TableContext:
    """The table as Markdown plus linked passages, within about ``budget_tokens`` tokens."""
    intro = (table.intro or table.section_text).strip()[:MAX_PASSAGE_CHARS]
    header = _markdown_row(table.header)
    rule = "|" + "---|" * len(table.header)
    lines = [header, rule]
    used = _size(table.title + table.section_title + intro) + _size(header) + _size(rule)
    shown = 0
    for row in table.rows:
        line = _markdown_row(row)
        if used + _size(line) > budget_tokens and shown > 0:
            break
        lines.append(line)
        used += _size(line)
        shown += 1
    links = list(dict.fromkeys(
        link for row in (table.header, *table.rows[:shown]) for cell in row for link in cell.links
    ))  # fmt: skip
    asked = _words(question)
    ranked = sorted(
        enumerate(links),
        key=lambda item: (-len(asked & _words(link_title(item[1]) + " " +
                                            table.passages.get(item[1], ""))), item[0]),
    )
    passages: list[tuple[str, str]] = []
    for _, link in ranked:
        text = table.passages.get(link, "").strip()
        if not text or text == "N/A":
            continue
        text = text[:MAX_PASSAGE_CHARS]
        cost = _size(link_title(link)) + _size(text) + 2
        if used + cost > budget_tokens:
            continue
        passages.append((link_title(link), text))
        used += cost
    usable = sum(1 for link in links if table.passages.get(link, "").strip() not in ("", "N/A"))
    return TableContext(
        title=table.title,
        section=table.section_title,
        intro=intro,
        markdown="\n".join(lines),
        passages=tuple(passages),
        omitted_rows=len(table.rows) - shown,
        omitted_passages=usable - len(passages),
    )
