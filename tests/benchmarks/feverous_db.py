"""A tiny Wikipedia database in the ``feverous_wikiv1.db`` format (one SQLite table
``wiki(id PRIMARY KEY, data json)``, NFD-normalised titles, pages as JSON with ``order``,
``sentence_<n>``, ``section_<n>``, ``table_<t>`` and ``list_<l>``), and gold claims over it."""

from __future__ import annotations

import json
import sqlite3
import unicodedata
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES


def cell(cid: str, value: str, header: bool = False) -> dict[str, Any]:
    return {"id": cid, "value": value, "is_header": header, "row_span": "1",
            "column_span": "1"}


PAGES: dict[str, dict[str, Any]] = {
    "Aldermoor Abbey": {
        "order": ["sentence_0", "sentence_1", "section_0", "sentence_2", "sentence_3"],
        "sentence_0": "Aldermoor Abbey is a ruined abbey in [[Westmarch|Westmarch county]], "
                      "founded in 1142 by Cistercian monks.",
        "sentence_1": "Its church was among the largest in the county.",
        "section_0": {"value": "History", "level": 1},
        "sentence_2": "The monks farmed sheep on the surrounding hills.",
        "sentence_3": "After a fire destroyed the cloister in 1390 the abbey was rebuilt.",
    },
    "Velmora River": {
        "order": ["sentence_0", "sentence_1", "sentence_2", "table_0"],
        "sentence_0": "The Velmora River is a river of the northern uplands.",
        "sentence_1": "It rises in the Sorrel Hills.",
        "sentence_2": "The river is 310 km long and flows into Quillon Bay.",
        "table_0": {"type": "infobox", "table": [
            [cell("header_cell_0_0_0", "Name", True), cell("header_cell_0_0_1", "Length", True)],
            [cell("cell_0_1_0", "Velmora River"), cell("cell_0_1_1", "310 km")],
        ]},
    },
    "Kestrel Line": {
        "order": ["sentence_0", "sentence_1", "section_2", "sentence_4", "table_1", "list_0"],
        "sentence_0": "The Kestrel Line is a railway line.",
        "sentence_1": "The Kestrel Line opened in 1911.",
        "section_2": {"value": "Stations", "level": 1},
        "sentence_4": "When it opened in 1911 the line had four stations.",
        "table_1": {"type": "wikitable", "caption": "Stations of the Kestrel Line", "table": [
            [cell("header_cell_1_0_0", "Station", True), cell("header_cell_1_0_1", "Opened",
                                                               True)],
            [cell("cell_1_1_0", "Harbour Street"), cell("cell_1_1_1", "1911")],
            [cell("cell_1_2_0", "Mill Lane"), cell("cell_1_2_1", "1911")],
            [cell("cell_1_3_0", "Kestrel Cross"), cell("cell_1_3_1", "1911")],
        ]},
        "list_0": {"type": "unordered_list", "list": [
            {"id": "item_0_0", "value": "Operated by the Northern Railway", "level": 0}]},
    },
    "Westmarch": {"order": ["sentence_0"],
                  "sentence_0": "Westmarch is a county with many ruined abbeys."},
    "Abbey": {"order": ["sentence_0"],
              "sentence_0": "An abbey is a monastery under an abbot or abbess."},
    "Café Rouge": {"order": ["sentence_0"],
                   "sentence_0": "Café Rouge is a restaurant founded in 1911."},
}

CLAIMS = {  # gold id -> (the element ids a right answer cites, the label)
    101: (["Aldermoor Abbey_sentence_0", "Aldermoor Abbey_sentence_3"], "SUPPORTS"),
    102: (["Velmora River_sentence_2"], "REFUTES"),
    104: (["Kestrel Line_sentence_1", "Kestrel Line_cell_1_2_0", "Kestrel Line_cell_1_3_0"],
          "SUPPORTS"),
}


def build_wiki_db(path: Path, pages: dict[str, dict[str, Any]] | None = None) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE wiki (id PRIMARY KEY, data json)")
    for title, page in (pages or PAGES).items():
        title_nfd = unicodedata.normalize("NFD", title)
        data = unicodedata.normalize("NFD", json.dumps({"title": title, **page},
                                                       ensure_ascii=False))
        con.execute("INSERT INTO wiki VALUES (?, ?)", (title_nfd, data))
    con.commit()
    con.close()
    return path


def gold_subset(path: Path) -> Path:
    """The fixture's header and its claims 101, 102 and 104."""
    lines = (FIXTURES / "feverous" / "gold.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [lines[0]] + [line for line in lines[1:] if json.loads(line)["id"] in CLAIMS]
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path
