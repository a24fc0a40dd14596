"""Grade agent attempts end to end: the LLM judge for SQL2S and Parallel, execution match for S2SQL.

Both graders are the project's own, run on files in the run directory so that every verdict can
be audited and replayed:

* S2SQL: ``s2sql_input.jsonl`` holds one ``hopscore sql-match`` input row per answered attempt
  (``instance_id``, ``attempt``, ``db``, ``gold_sql``, ``response``, ``messages``,
  ``message_format``), so the trajectory fallback applies; :func:`~hopscore.sql.match_job.
  run_sql_match` writes ``sql_match.jsonl``. The same command by hand gives the same verdicts.
* SQL2S and Parallel: :func:`~hopscore.judge.judge_job.judge_items` writes ``judge.jsonl`` (one row
  per answered attempt, with ``question``, ``response``, ``correct_answer``), resumable and
  cached like ``hopscore judge``.

``grades.jsonl`` then holds one row per (task, attempt), in task order: ``correct`` is true or
false for a graded attempt, false for an attempt that ended without a final answer (turn or time
limit: no grader is asked), and null when there is nothing to grade yet (the attempt failed on
a model error or was not run) or its grading failed (judge API error, internal error). Null
counts as a failure in the metrics and is reported apart; re-running the same command retries.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from hopscore.benchmarks.agent_tasks import HdrTask
from hopscore.engine import ChatBackend
from hopscore.errors import Location
from hopscore.files.atomic import write_jsonl_atomic
from hopscore.files.reruns import RESUME_ANY
from hopscore.judge.judge_config import JudgeConfig
from hopscore.judge.judge_job import judge_items
from hopscore.judge.judge_summary import JudgeSummary
from hopscore.judge.rows import JudgeItem
from hopscore.sql.match_job import MatchOptions, run_sql_match
from hopscore.sql.sandbox import SqlExecutor

S2SQL_INPUT, SQL_MATCH, JUDGE_OUTPUT, GRADES = (
    "s2sql_input.jsonl", "sql_match.jsonl", "judge.jsonl", "grades.jsonl")

#: grade statuses
GRADED, NO_ANSWER, NOT_GRADED, GRADING_ERROR, GOLD_ERROR = (
    "graded", "no_final_answer", "not_graded", "grading_error", "gold_error")


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    """What grading needs of one finished attempt (None when the attempt has no result)."""

    task: HdrTask
    attempt: int
    #: the agent's status (final_answer, max_turns, task_timeout, model_error) or "not_run"
    status: str
    final_answer: str | None
    messages: list[Any] | None = None
    message_format: str = "openai"


@dataclass(frozen=True, slots=True, kw_only=True)
class GradeOptions:
    match: MatchOptions
    judge: JudgeConfig | None
    judge_backend: ChatBackend | None = None
    #: the run's rerun policy (:mod:`hopscore.files.reruns`), applied to judge.jsonl; "restart" also
    #: grades every S2SQL attempt again
    rerun: str = "refuse"


@dataclass(slots=True)
class GradeSummary:
    statuses: Counter[str] = field(default_factory=Counter)
    sql: dict[str, Any] | None = None
    judge: JudgeSummary | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def problems(self) -> int:
        """Attempts without a verdict (not run, model error, grading error)."""
        return self.statuses[NOT_GRADED] + self.statuses[GRADING_ERROR]

    def to_json(self) -> dict[str, Any]:
        return {"statuses": dict(self.statuses), "sql_match": self.sql,
                "judge": None if self.judge is None else self.judge.to_json()}


def _sql_rows(outcomes: list[AttemptOutcome]) -> list[dict[str, Any]]:
    return [{"instance_id": o.task.id, "attempt": o.attempt, "hybrid_type": o.task.hybrid_type,
             "db": o.task.db, "gold_sql": o.task.sql or "", "response": o.final_answer or "",
             "messages": o.messages, "message_format": o.message_format} for o in outcomes]


def _write_if_changed(path: Path, rows: list[dict[str, Any]]) -> bool:
    """Write ``rows``; return True when the file's content changed."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    write_jsonl_atomic(path, rows)
    return True


def grade_sql(
    outcomes: list[AttemptOutcome], out: Path, options: MatchOptions, executor: SqlExecutor,
    restart: bool = False,
) -> tuple[dict[tuple[str, int], dict[str, Any]], dict[str, Any]]:
    """Execution-match verdicts by (task id, attempt), and the sql-match summary."""
    changed = _write_if_changed(out / S2SQL_INPUT, _sql_rows(outcomes))
    if not outcomes:
        return {}, {}
    summary = run_sql_match(out / S2SQL_INPUT, out / SQL_MATCH, options, executor=executor,
                            restart=changed or restart)
    verdicts: dict[tuple[str, int], dict[str, Any]] = {}
    with (out / SQL_MATCH).open(encoding="utf-8") as handle:
        for outcome, line in zip(outcomes, handle, strict=True):
            verdicts[(outcome.task.id, outcome.attempt)] = json.loads(line)
    return verdicts, summary.to_json()


async def grade_judge(outcomes: list[AttemptOutcome], out: Path, config: JudgeConfig,
                      backend: ChatBackend | None, console: Console | None,
                      warn: Console | None, rerun: str = "refuse",
                      ) -> tuple[dict[tuple[str, int], dict[str, Any]], JudgeSummary]:
    where = Location(str(out / JUDGE_OUTPUT))
    items = [JudgeItem(where, {"instance_id": o.task.id, "attempt": o.attempt,
                               "hybrid_type": o.task.hybrid_type,
                               "question": o.task.final_question,
                               "response": o.final_answer or "",
                               "correct_answer": o.task.final_answer or ""},
                       o.task.final_question, o.final_answer or "", o.task.final_answer or "", 0)
             for o in outcomes]
    summary = await judge_items(items, out / JUDGE_OUTPUT, config, backend=backend,
                                console=console, warn=warn, rerun=rerun,
                                other_inputs=RESUME_ANY)
    verdicts: dict[tuple[str, int], dict[str, Any]] = {}
    with (out / JUDGE_OUTPUT).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                row = json.loads(line)
                verdicts[(str(row.get("instance_id")), int(row.get("attempt", 0)))] = row
    return verdicts, summary


def _grade_row(outcome: AttemptOutcome, repeats: int, verdict: dict[str, Any] | None
               ) -> dict[str, Any]:
    task = outcome.task
    row: dict[str, Any] = {"instance_id": task.id, "attempt": outcome.attempt,
                           "repeats": repeats, "hybrid_type": task.hybrid_type,
                           "family": task.family.label, "grader": task.family.grader,
                           "agent_status": outcome.status, "final_answer": outcome.final_answer}
    if outcome.status == "truncated":
        return {**row, "status": NOT_GRADED, "correct": None,
                "reason": "a reply was cut at --max-tokens (--on-truncation error)"}
    if outcome.status in ("not_run", "model_error"):
        return {**row, "status": NOT_GRADED, "correct": None,
                "reason": "the attempt has no result (" + outcome.status + ")"}
    if outcome.final_answer is None:
        return {**row, "status": NO_ANSWER, "correct": False,
                "reason": f"no final answer ({outcome.status})"}
    if verdict is None:
        return {**row, "status": GRADING_ERROR, "correct": None, "reason": "no verdict"}
    if task.family.grader == "exec":
        match = verdict.get("match")
        status = GOLD_ERROR if verdict.get("gold_failure") else \
            GRADED if match is not None else GRADING_ERROR
        return {**row, "status": status, "correct": match, "reason": verdict.get("reason"),
                "agent_sql_source": verdict.get("agent_sql_source"),
                "decided_by": verdict.get("decided_by")}
    meta = verdict.get("judge") or {}
    if verdict.get("correct") is None:
        return {**row, "status": GRADING_ERROR, "correct": None,
                "reason": f"judge: {verdict.get('error') or meta.get('status')}"}
    return {**row, "status": GRADED, "correct": bool(verdict["correct"]),
            "reason": "judge: correct" if verdict["correct"] else
            ("judge: incorrect" if verdict.get("parse_ok") else "judge: reply not parsed"),
            "parse_ok": verdict.get("parse_ok")}


async def grade(outcomes: list[AttemptOutcome], repeats: int, out: Path, options: GradeOptions,
                executor: SqlExecutor, *, console: Console | None = None,
                warn: Console | None = None) -> GradeSummary:
    """Grade every answered attempt, write ``grades.jsonl`` (task order), return the counts."""
    answered = [o for o in outcomes if o.final_answer is not None]
    sql_outcomes = [o for o in answered if o.task.family.grader == "exec"]
    judge_outcomes = [o for o in answered if o.task.family.grader == "judge"]
    summary = GradeSummary()
    verdicts: dict[tuple[str, int], dict[str, Any]] = {}
    sql_verdicts, summary.sql = await asyncio.to_thread(grade_sql, sql_outcomes, out,
                                                        options.match, executor,
                                                        options.rerun == "restart")
    verdicts.update(sql_verdicts)
    if judge_outcomes:
        if options.judge is None:
            raise ValueError("judge-graded attempts but no judge configured")
        judged, summary.judge = await grade_judge(judge_outcomes, out, options.judge,
                                                  options.judge_backend, console, warn,
                                                  options.rerun)
        verdicts.update(judged)
    for outcome in outcomes:
        row = _grade_row(outcome, repeats, verdicts.get((outcome.task.id, outcome.attempt)))
        summary.statuses[row["status"]] += 1
        summary.rows.append(row)
    write_jsonl_atomic(out / GRADES, summary.rows)
    return summary
