"""The LiveSQLBench knowledge base behind the agent's three knowledge tools.

One JSON Lines file per database, ``<db_root>/<db>/<db>_kb.jsonl``, one entry per line (``id``,
``knowledge`` (the title), ``description``, ``definition``, ``type``, ``children_knowledge``).
The database name is stripped and lower-cased, as the reference does. A missing file means the
database has no knowledge tools (the reference raised instead, spec §9 T1); a malformed file is
a located error when the run starts, never in the middle of one.

Observation texts follow the reference (spec §4.1):

* names: a JSON array of the stripped titles, non-ASCII kept;
* one definition: the first entry in file order whose id equals the key, whose id equals the
  number in a key of digits or ``<db>_<digits>``, whose ``<db>_<id>`` equals the key ignoring
  case, or whose title equals the key ignoring case; shown as indented JSON with every field;
  ``Knowledge not found for '<key>' in database '<db>'.`` otherwise;
* all definitions: the whole list as indented JSON when that is at most 12,000 characters, else
  a catalogue object (``_notice``, ``database``, ``entry_count``, ``knowledge_names``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, InputError
from hopscore.files.fields import json_type
from hopscore.files.io import iter_jsonl

ALL_DEFINITIONS_LIMIT = 12_000
KEY_REQUIRED = "[ERROR]: knowledge_name is required."
_NAME = re.compile(r"[a-z0-9_]+")


def normalize_db(db: str) -> str:
    name = db.strip().lower()
    if not _NAME.fullmatch(name):
        raise HopscoreError(f"invalid database name {db!r} (letters, digits, underscores only)")
    return name


def kb_path(db_root: Path, db: str) -> Path:
    name = normalize_db(db)
    return db_root / name / f"{name}_kb.jsonl"


def _id_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    db: str
    path: Path
    entries: tuple[dict[str, Any], ...]

    @classmethod
    def load(cls, db_root: Path, db: str) -> KnowledgeBase | None:
        """The database's knowledge base, or None when it has no KB file."""
        path = kb_path(db_root, db)
        if not path.is_file():
            return None
        entries = []
        for where, value in iter_jsonl(path):
            if not isinstance(value, dict):
                raise InputError(
                    where, f"expected a knowledge entry object, got {json_type(value)}")
            entries.append(value)
        return cls(normalize_db(db), path, tuple(entries))

    def titles(self) -> list[str]:
        return [str(e["knowledge"]).strip() for e in self.entries
                if e.get("knowledge") is not None and str(e["knowledge"]).strip()]

    def names(self) -> str:
        return json.dumps(self.titles(), ensure_ascii=False)

    def _matches(self, entry: dict[str, Any], key: str, number: int | None) -> bool:
        entry_id = entry.get("id")
        if entry_id is not None and key == str(entry_id):
            return True
        if number is not None and _id_number(entry_id) == number:
            return True
        if entry_id is not None and key.lower() == f"{self.db}_{entry_id}".lower():
            return True
        title = entry.get("knowledge")
        return title is not None and key.lower() == str(title).strip().lower()

    def definition(self, key: str) -> str:
        key = key.strip()
        if not key:
            return KEY_REQUIRED
        number: int | None = None
        if key.isdigit():
            number = int(key)
        else:
            qualified = re.fullmatch(re.escape(self.db) + r"_(\d+)", key, re.IGNORECASE)
            if qualified:
                number = int(qualified.group(1))
        for entry in self.entries:
            if self._matches(entry, key, number):
                return json.dumps(entry, indent=2, ensure_ascii=False)
        return f"Knowledge not found for {key!r} in database {self.db!r}."

    def all_definitions(self) -> str:
        text = json.dumps(list(self.entries), indent=2, ensure_ascii=False)
        if len(text) <= ALL_DEFINITIONS_LIMIT:
            return text
        catalogue = {
            "_notice": f"The full knowledge base is {len(text)} characters, more than this tool "
                       "returns at once, so only the titles are listed. Call "
                       "get_knowledge_definition with a title to read one entry.",
            "database": self.db,
            "entry_count": len(self.entries),
            "knowledge_names": self.titles(),
        }
        return json.dumps(catalogue, indent=2, ensure_ascii=False)
