"""``hopscore validate-predictions``: check an agent's submission file, reporting every problem.

The submission is JSON Lines, one ``{"instance_id": ..., "final_answer": ...}`` object per
non-blank line. Every check of the reference validator is made, with its messages, but on every
line and without stopping at the first failure:

* the line is JSON (located, unlike the reference), an object, with no keys besides
  ``instance_id`` and ``final_answer`` ("unexpected fields: ...");
* ``instance_id`` is a non-empty string, not seen before; ``final_answer`` is present, a string,
  and not blank;
* at least one record.

And the checks the reference lacks (spec §9 V1-V6):

* a UTF-8 byte order mark, invalid UTF-8, duplicate keys inside one object;
* ids with surrounding whitespace (they never join a task) and duplicates that differ only in
  such whitespace;
* the id's family: with ``--tasks`` every id must be a task id and every task needs a
  prediction (``--allow-missing`` makes missing tasks warnings); without it, the id must carry
  one of the family prefixes;
* S2SQL answers must hold the query in a block fenced as sql, which the grader extracts: no
  fenced block, or only a block labelled otherwise (``sqlite``), is an error; an unlabelled
  fence, or a fenced text that is not one read-only query, is a warning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.agent.benchmark import short_title
from hopscore.benchmarks.agent_tasks import (
    FAMILIES,
    S2SQL,
    Family,
    HdrTask,
    family_of_id,
)
from hopscore.files.fields import json_type
from hopscore.files.io import read_bytes
from hopscore.sql.extract import last_fenced_sql
from hopscore.sql.guard import check_query

ALLOWED_KEYS = ("instance_id", "final_answer")
#: The reference grader's first extraction step: a fence labelled exactly sql or SQL.
REFERENCE_SQL_FENCE = re.compile(r"```(?:sql|SQL)[ \t\r\f\v]*\n(.*?)```", re.DOTALL)
ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str
    #: ``path:line``, or the path for file-level findings
    where: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {"severity": self.severity, "where": self.where, "code": self.code,
                "message": self.message}


@dataclass(slots=True)
class ValidationReport:
    path: str
    records: int = 0
    ids: set[str] = field(default_factory=set)
    findings: list[Finding] = field(default_factory=list)
    tasks_source: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    def add(self, severity: str, where: str, code: str, message: str) -> None:
        self.findings.append(Finding(severity, where, code, message))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "tasks": self.tasks_source, "ok": self.ok,
                "records": self.records, "unique_ids": len(self.ids),
                "errors": len(self.errors), "warnings": len(self.warnings),
                "findings": [f.to_json() for f in self.findings]}


class _DuplicateKey(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def _lines(data: bytes) -> list[tuple[int, bytes]]:
    return [(number, raw.rstrip(b"\r")) for number, raw in enumerate(data.split(b"\n"), start=1)]


def check_s2sql_answer(answer: str) -> tuple[str, str, str] | None:
    """A finding ``(severity, code, message)`` about an S2SQL answer's query, or None."""
    blocks = [body.strip() for body in REFERENCE_SQL_FENCE.findall(answer)]
    if blocks and blocks[-1]:
        problem = check_query(blocks[-1], allow_pragma=False)
        if problem is not None:
            return WARNING, "s2sql_query", f"the fenced SQL is not one read-only query: {problem}"
        return None
    found = last_fenced_sql(answer)
    if found is None:
        return ERROR, "s2sql_fence", ("S2SQL answer has no fenced ```sql block; the grader cannot "
                                      "extract a query from it")
    if found.source == "final_text_fenced_generic":
        return WARNING, "s2sql_fence", ("S2SQL query is fenced without the sql label; graders read "
                                        "it only as a generic fenced block")
    return ERROR, "s2sql_fence", ("S2SQL query is fenced with a label other than sql or SQL; the "
                                  "reference grader does not read it")


class _Checker:
    def __init__(self, report: ValidationReport, tasks: dict[str, HdrTask] | None) -> None:
        self.report = report
        self.tasks = tasks
        #: raw id -> line; stripped id -> (raw id, line)
        self.raw_seen: dict[str, int] = {}
        self.stripped_seen: dict[str, tuple[str, int]] = {}

    def line(self, where: str, number: int, value: Any) -> None:
        report = self.report
        if not isinstance(value, dict):
            report.add(ERROR, where, "type", f"expected a JSON object, got {json_type(value)}")
            return
        report.records += 1
        extra = sorted(k for k in value if k not in ALLOWED_KEYS)
        if extra:
            report.add(ERROR, where, "extra_fields", f"unexpected fields: {', '.join(extra)}")
        family = self.check_id(where, number, value.get("instance_id"))
        answer = self.check_answer(where, value)
        if family is S2SQL and answer is not None:
            finding = check_s2sql_answer(answer)
            if finding is not None:
                report.add(finding[0], where, finding[1], finding[2])

    def check_id(self, where: str, number: int, raw: Any) -> Family | None:
        report = self.report
        if not isinstance(raw, str) or not raw.strip():
            report.add(ERROR, where, "id", "instance_id must be a non-empty string")
            return None
        stripped = raw.strip()
        if raw != stripped:
            report.add(ERROR, where, "id_whitespace", f"instance_id {raw!r} has leading or "
                       "trailing whitespace; it would never match a task id")
        if raw in self.raw_seen:
            report.add(ERROR, where, "duplicate_id", f"duplicate instance_id {raw!r} (first at "
                       f"line {self.raw_seen[raw]})")
        elif stripped in self.stripped_seen:
            other, line = self.stripped_seen[stripped]
            report.add(ERROR, where, "duplicate_id", f"duplicate instance_id {raw!r}: the same id "
                       f"as {other!r} at line {line} once whitespace is stripped")
        self.raw_seen.setdefault(raw, number)
        self.stripped_seen.setdefault(stripped, (raw, number))
        report.ids.add(stripped)
        if self.tasks is not None:
            task = self.tasks.get(stripped)
            if task is None:
                report.add(ERROR, where, "unknown_id", f"instance_id {stripped!r} is not a task "
                           f"of {report.tasks_source}")
                return family_of_id(stripped)
            return task.family
        family = family_of_id(stripped)
        if family is None:
            prefixes = ", ".join(f.prefix for f in FAMILIES)
            report.add(ERROR, where, "prefix", f"instance_id {stripped!r} has none of the "
                       f"{short_title()} family prefixes ({prefixes})")
        return family

    def check_answer(self, where: str, value: dict[str, Any]) -> str | None:
        report = self.report
        if "final_answer" not in value:
            report.add(ERROR, where, "missing_answer", "missing final_answer")
            return None
        answer = value["final_answer"]
        if not isinstance(answer, str):
            report.add(ERROR, where, "answer_type",
                       f"final_answer must be a string, got {json_type(answer)}")
            return None
        if not answer.strip():
            report.add(ERROR, where, "empty_answer", "final_answer must not be empty")
            return None
        return answer


def validate_predictions(path: Path, tasks: list[HdrTask] | None = None, *,
                         tasks_source: str | None = None,
                         allow_missing: bool = False) -> ValidationReport:
    """Check every line of ``path``; a file that cannot be read at all raises InputError."""
    data = read_bytes(path, "a predictions file")
    report = ValidationReport(str(path), tasks_source=tasks_source)
    by_id = None if tasks is None else {task.id: task for task in tasks}
    checker = _Checker(report, by_id)
    for number, raw in _lines(data):
        where = f"{path}:{number}"
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            report.add(ERROR, where, "bom", "the file starts with a UTF-8 byte order mark; the "
                       "reference validator cannot parse this line")
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            report.add(ERROR, where, "encoding", f"not valid UTF-8 (byte {exc.start + 1})")
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text, object_pairs_hook=_pairs)
        except json.JSONDecodeError as exc:
            report.add(ERROR, where, "parse", f"invalid JSON: {exc.msg} (column {exc.colno})")
            continue
        except _DuplicateKey as exc:
            report.add(ERROR, where, "duplicate_key", f"key {exc.args[0]!r} appears twice in the "
                       "object")
            continue
        checker.line(where, number, value)
    if report.records == 0:
        report.add(ERROR, str(path), "empty_file", "no prediction records found")
    if tasks is not None:
        _missing(report, tasks, allow_missing)
    return report


def _missing(report: ValidationReport, tasks: list[HdrTask], allow_missing: bool) -> None:
    for family in FAMILIES:
        missing = [t.id for t in tasks if t.family is family and t.id not in report.ids]
        if missing:
            total = sum(1 for t in tasks if t.family is family)
            report.add(WARNING if allow_missing else ERROR, report.path, "missing_task",
                       f"no prediction for {len(missing)} of {total} {family.label} tasks: "
                       + ", ".join(missing))
