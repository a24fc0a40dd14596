"""The tasks of an agent benchmark (``hopscore agent``): task records, the release JSONL, the
per-category source files, and the v2 overlay. Benchmark-neutral: the agent machinery
(:mod:`hopscore.agent`) reads tasks through these records, and an agent benchmark's
:meth:`~hopscore.benchmarks.base.Benchmark.load_agent_tasks` through this loader.

A task file is either

* one JSON Lines file (the published ``hybrid_ds_release.jsonl`` / ``hybrid_ds_preview.jsonl``,
  or the public stripped tasks): every record has an ``id``; its family comes from
  ``hybrid_type`` when present, else from the id prefix; or
* a folder laid out like the publisher's source roots, with the three category files
  :data:`CATEGORY_FILES` (processed S2SQL, SQL2S, Parallel, as the release builder does); the
  family of each record is its file's category.

Every record needs a non-empty string ``id`` (no surrounding whitespace) carrying its family's
prefix, unique across the set, a non-empty ``final_question`` and a ``db`` that is a plain
database name (letters, digits, underscores). ``hint``, ``final_answer`` and ``sql`` are
optional strings (null reads as absent); the gold (``final_answer``, and ``sql`` for S2SQL) is
only needed to grade. Every problem of a file is reported at once, each with its file:line.

The v2 patch (:func:`overlay`) follows the release builder's rules: whole replacement records,
never field diffs; every patch id must exist in the base set, in the same family; a patch record
equal to the record it replaces is an error ("unchanged record"); the result keeps the base
order and never appends.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.errors import HopscoreError, Location
from hopscore.files.fields import json_type
from hopscore.files.io import iter_jsonl


@dataclass(frozen=True, slots=True)
class Family:
    hybrid_type: str
    prefix: str
    label: str
    #: the category file of the publisher's source roots
    source_file: str
    #: how answers are graded: "judge" (LLM judge) or "exec" (SQL execution match)
    grader: str


S2SQL = Family("search_to_sql", "s2sql_", "S2SQL",
               "type_1_search_to_sql/search_to_sql_examples.jsonl", "exec")
SQL2S = Family("sql_to_search", "sql2s_", "SQL2S",
               "type_1_sql_to_search/sql_to_search_examples.jsonl", "judge")
PARALLEL = Family("parallel", "parallel_", "Parallel",
                  "type_2_parallel/search_sql_parallel_examples.jsonl", "judge")
#: In the release builder's order.
FAMILIES = (S2SQL, SQL2S, PARALLEL)
BY_TYPE = {family.hybrid_type: family for family in FAMILIES}
BY_LABEL = {family.label: family for family in FAMILIES}
CATEGORY_FILES = tuple(family.source_file for family in FAMILIES)
DB_NAME = re.compile(r"[A-Za-z0-9_]+")
MAX_REPORTED = 50


def family_of_id(task_id: str) -> Family | None:
    """The family whose prefix ``task_id`` carries, or None."""
    for family in FAMILIES:
        if task_id.startswith(family.prefix):
            return family
    return None


@dataclass(frozen=True, slots=True)
class HdrTask:
    """One task. ``record`` is the whole source record (keys: id, hybrid_type, then the rest in
    their original order); the agent may see only ``final_question``, ``hint`` and ``db``."""

    id: str
    family: Family
    final_question: str
    hint: str
    db: str
    final_answer: str | None
    sql: str | None
    record: dict[str, Any]
    where: Location

    @property
    def hybrid_type(self) -> str:
        return self.family.hybrid_type

    @property
    def gold(self) -> str | None:
        """What grading compares with: the gold SQL for S2SQL, the gold answer otherwise."""
        value = self.sql if self.family.grader == "exec" else self.final_answer
        return value if value and value.strip() else None


class _Problems:
    """Collects located problems; raises them all at once."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.items: list[str] = []

    def add(self, where: Location | str, message: str, field: str | None = None) -> None:
        prefix = str(where) + (f": field {field!r}" if field else "")
        self.items.append(f"{prefix}: {message}")

    def raise_any(self) -> None:
        if not self.items:
            return
        shown = self.items[:MAX_REPORTED]
        more = f"\n  ... and {len(self.items) - len(shown)} more" if len(self.items) > len(shown) \
            else ""
        raise HopscoreError(f"{len(self.items)} problems in {self.what}:\n  "
                            + "\n  ".join(shown) + more)


def _optional_text(data: dict[str, Any], name: str, where: Location,
                   problems: _Problems) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        problems.add(where, f"expected a string, got {json_type(value)}", name)
        return None
    return value


def _read_record(value: Any, where: Location, fixed: Family | None,
                 problems: _Problems) -> HdrTask | None:
    """One record, or None after adding its problems."""
    if not isinstance(value, dict):
        problems.add(where, f"expected a JSON object, got {json_type(value)}")
        return None
    before = len(problems.items)
    raw_id = value.get("id")
    task_id = ""
    if not isinstance(raw_id, str) or not raw_id.strip():
        problems.add(where, "must be a non-empty string", "id")
    elif raw_id != raw_id.strip():
        problems.add(where, f"{raw_id!r} has leading or trailing whitespace", "id")
    else:
        task_id = raw_id
    family = fixed
    declared = value.get("hybrid_type")
    if declared is not None:
        if declared not in BY_TYPE:
            problems.add(where, f"{declared!r} is not one of {', '.join(BY_TYPE)}", "hybrid_type")
        elif fixed is not None and declared != fixed.hybrid_type:
            problems.add(where, f"{declared!r} but this is the {fixed.hybrid_type} file",
                         "hybrid_type")
        else:
            family = BY_TYPE[declared]
    if family is None and task_id:
        family = family_of_id(task_id)
        if family is None:
            prefixes = ", ".join(f.prefix for f in FAMILIES)
            problems.add(where, f"{task_id!r} has none of the prefixes {prefixes} and the record "
                         "has no hybrid_type", "id")
    if family is not None and task_id and not task_id.startswith(family.prefix):
        problems.add(where, f"{task_id!r} lacks the {family.label} prefix {family.prefix!r}", "id")
    question = value.get("final_question")
    if not isinstance(question, str) or not question.strip():
        problems.add(where, "must be a non-empty string", "final_question")
    db = value.get("db")
    if not isinstance(db, str) or not DB_NAME.fullmatch(db):
        problems.add(where, f"{db!r} is not a database name (letters, digits and underscores)",
                     "db")
    hint = _optional_text(value, "hint", where, problems) or ""
    answer = _optional_text(value, "final_answer", where, problems)
    sql = _optional_text(value, "sql", where, problems)
    if len(problems.items) > before or family is None:
        return None
    assert isinstance(question, str) and isinstance(db, str)
    record = {"id": task_id, "hybrid_type": family.hybrid_type}
    record.update((k, v) for k, v in value.items() if k not in ("id", "hybrid_type"))
    return HdrTask(task_id, family, question, hint, db, answer, sql, record, where)


def _read_file(path: Path, fixed: Family | None, problems: _Problems) -> list[HdrTask]:
    tasks: list[HdrTask] = []
    try:
        for where, value in iter_jsonl(path):
            task = _read_record(value, where, fixed, problems)
            if task is not None:
                tasks.append(task)
    except HopscoreError as exc:  # unreadable line or file: located by the reader
        problems.items.append(str(exc))
    return tasks


def _check_unique(tasks: list[HdrTask], problems: _Problems) -> None:
    first: dict[str, HdrTask] = {}
    for task in tasks:
        if task.id in first:
            problems.add(task.where, f"duplicate id {task.id!r} (first at {first[task.id].where})",
                         "id")
        else:
            first[task.id] = task


def read_tasks(path: Path, *, partial: bool = False) -> list[HdrTask]:
    """Every task of a JSONL file or a category folder (``partial``: category files may be
    missing, as in a sparse patch). Raises one error listing every problem."""
    problems = _Problems(str(path))
    if path.is_dir():
        tasks: list[HdrTask] = []
        found = 0
        for family in FAMILIES:
            source = path / family.source_file
            if not source.is_file():
                if not partial:
                    problems.add(str(path), f"missing the category file {family.source_file}")
                continue
            found += 1
            tasks.extend(_read_file(source, family, problems))
        if partial and not found:
            problems.add(str(path), "holds none of the category files " + ", ".join(CATEGORY_FILES))
    elif path.is_file():
        tasks = _read_file(path, None, problems)
    else:
        raise HopscoreError(f"{path}: not found (expected a task JSONL file or a folder with the "
                            "HDR category files)")
    _check_unique(tasks, problems)
    problems.raise_any()
    if not tasks and not partial:
        raise HopscoreError(f"{path}: holds no tasks")
    return tasks


@dataclass(frozen=True, slots=True)
class Overlay:
    tasks: list[HdrTask]
    #: replaced records per family label
    overrides: dict[str, int]


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "hybrid_type"}


def overlay(base: list[HdrTask], patch: list[HdrTask], patch_source: str) -> Overlay:
    """``base`` with each record replaced by the patch record of the same id (see module doc).

    Both sides carry their family in the id prefix (checked when read), so a patch record
    always replaces a record of its own family."""
    problems = _Problems(f"the overlay {patch_source}")
    by_id = {task.id: task for task in base}
    replacement: dict[str, HdrTask] = {}
    for task in patch:
        original = by_id.get(task.id)
        if original is None:
            problems.add(task.where, f"{task.id!r} is not a task of the base set", "id")
        elif _comparable(original.record) == _comparable(task.record):
            problems.add(task.where, f"unchanged record: {task.id!r} equals the base record "
                         f"({original.where})")
        else:
            replacement[task.id] = task
    problems.raise_any()
    counts = Counter(task.family.label for task in replacement.values())
    merged = [replacement.get(task.id, task) for task in base]
    return Overlay(merged, {family.label: counts.get(family.label, 0) for family in FAMILIES})


def load_tasks(path: Path,
               overlay_path: Path | None = None) -> tuple[list[HdrTask], Overlay | None]:
    """The task set of ``path``, with ``overlay_path``'s patch applied when given."""
    base = read_tasks(path)
    if overlay_path is None:
        return base, None
    merged = overlay(base, read_tasks(overlay_path, partial=True), str(overlay_path))
    return merged.tasks, merged


def tasks_jsonl(tasks: list[HdrTask]) -> str:
    """The tasks as the release file writes them: one record per line, UTF-8 unescaped."""
    return "".join(json.dumps(task.record, ensure_ascii=False) + "\n" for task in tasks)


def tasks_sha256(tasks: list[HdrTask]) -> str:
    return hashlib.sha256(tasks_jsonl(tasks).encode("utf-8")).hexdigest()


def family_counts(tasks: list[HdrTask]) -> dict[str, int]:
    counts = Counter(task.family.label for task in tasks)
    return {family.label: counts.get(family.label, 0) for family in FAMILIES}
