"""The options only ``hopscore agent`` takes, as records (:mod:`hopscore.cli.gathered`): its
tasks and databases, the agent's loop, and the grading of its answers; each in its panel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

PANEL_TASKS = "Tasks and databases"
PANEL_LOOP = "The agent's loop"
PANEL_GRADING = "Grading"
#: --max-turns' default (the paper's)
DEFAULT_MAX_TURNS = 300


@dataclass(frozen=True)
class WorldOptions:
    """What the agent works on: the tasks (with their v2 overlay) and the SQLite databases."""

    tasks: Annotated[Path | None, typer.Option(
        None, "--tasks", "-g", metavar="PATH", rich_help_panel=PANEL_TASKS, show_default=False,
        help="The task file or category folder (none of --tasks, --db-root, --corpus: the "
        "built-in world).")]
    overlay: Annotated[Path | None, typer.Option(
        None, "--overlay", metavar="PATH", rich_help_panel=PANEL_TASKS,
        help="v2 sparse patch overlaid on --tasks.")]
    db_root: Annotated[Path | None, typer.Option(
        None, "--db-root", metavar="DIR", rich_help_panel=PANEL_TASKS,
        help="Folder of the LiveSQLBench SQLite databases.")]
    db_template: Annotated[str, typer.Option(
        "{db}/{db}_template.sqlite", "--db-template", metavar="TEMPLATE",
        rich_help_panel=PANEL_TASKS, help="Database path below --db-root.")]


@dataclass(frozen=True)
class LoopOptions:
    """How one attempt runs: its turns and time, how tools are offered and called."""

    max_turns: Annotated[int, typer.Option(
        DEFAULT_MAX_TURNS, "--max-turns", metavar="N", min=1, rich_help_panel=PANEL_LOOP,
        help="Model requests per attempt (paper: 300).")]
    task_timeout: Annotated[float, typer.Option(
        3600.0, "--task-timeout", metavar="SECONDS", min=0.001, rich_help_panel=PANEL_LOOP,
        help="Wall-clock seconds per attempt (paper: 3600).")]
    tool_choice: Annotated[str | None, typer.Option(
        None, "--tool-choice", metavar="auto|required|none", rich_help_panel=PANEL_LOOP,
        show_default=False,
        help="Sent as tool_choice with native tools: auto (default), required, none; local/smollm2"
        " without it makes every reply a call.")]
    tool_protocol: Annotated[str, typer.Option(
        "auto", "--tool-protocol", metavar="native|text|auto", rich_help_panel=PANEL_LOOP,
        help="native (the request's tools field), text (tools written into the prompt, any "
        "endpoint), auto (native; text once the endpoint ignores the tools).")]
    tool_call_content: Annotated[str, typer.Option(
        "auto", "--tool-call-content", metavar="empty|null|auto", rich_help_panel=PANEL_LOOP,
        help="Content of tool-call turns without text: empty (\"\"), null, auto (null for Bedrock, "
        "else empty).")]
    max_text_turns: Annotated[int, typer.Option(
        5, "--max-text-turns", metavar="N", min=1, rich_help_panel=PANEL_LOOP,
        help="Replies in a row without a tool call before an attempt ends (no_tool_call).")]
    max_context_tokens: Annotated[int | None, typer.Option(
        None, "--max-context-tokens", metavar="N", min=256, rich_help_panel=PANEL_LOOP,
        show_default=False,
        help="The model's context: drop the oldest tool results to stay inside it.")]
    sql_timeout: Annotated[float, typer.Option(
        120.0, "--sql-timeout", metavar="SECONDS", min=0.001, rich_help_panel=PANEL_LOOP,
        help="Seconds per run_sql query and per graded query.")]
    max_observation_chars: Annotated[int, typer.Option(
        100_000, "--max-observation-chars", metavar="N", min=1000, rich_help_panel=PANEL_LOOP,
        help="Cap per tool result.")]
    direct_fetch: Annotated[bool, typer.Option(
        False, "--direct-fetch", rich_help_panel=PANEL_LOOP,
        help="http backend without --fetch-url: GET pages.")]


@dataclass(frozen=True)
class GradingOptions:
    """How the answers are graded: the judge of free-text answers, the SQL comparison."""

    judge_model: Annotated[str | None, typer.Option(
        None, "--judge-model", metavar="NAME", envvar="JUDGE_MODEL",
        rich_help_panel=PANEL_GRADING, show_default=False,
        help="Judge for SQL2S and Parallel answers (as judge --model: anthropic/NAME is Claude).")]
    judge_base_url: Annotated[str | None, typer.Option(
        None, "--judge-base-url", metavar="URL", envvar="JUDGE_BASE_URL",
        rich_help_panel=PANEL_GRADING, show_default=False,
        help="The judge's endpoint (OpenAI-compatible; the Messages API for anthropic/NAME).")]
    judge_api_key_env: Annotated[str, typer.Option(
        "JUDGE_API_KEY", "--judge-api-key-env", metavar="VAR", rich_help_panel=PANEL_GRADING,
        help="Variable of the judge key.")]
    judge_prompt_file: Annotated[Path | None, typer.Option(
        None, "--judge-prompt-file", metavar="FILE", rich_help_panel=PANEL_GRADING,
        help="Judge template (e.g. answer_judge.txt).")]
    no_grade: Annotated[bool, typer.Option(
        False, "--no-grade", rich_help_panel=PANEL_GRADING,
        help="Run the agent and write predictions; do not grade.")]
    compare: Annotated[str, typer.Option(
        "reference", "--compare", metavar="reference|strict|rows|spider|bird",
        rich_help_panel=PANEL_GRADING,
        help="S2SQL comparison: reference, strict, rows, spider, bird.")]
