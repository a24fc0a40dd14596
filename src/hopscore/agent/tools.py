"""The agent's tools: the reference's names and argument schemas, and one toolset per task.

Tool names and arguments are the reference's interface (spec §4); the descriptions are
hopscore's own. :class:`Toolset` runs one call and never raises: bad arguments, an unknown
tool, a failing query or backend all come back as an observation text starting with an error
prefix (``Error:``, ``Rejected:``, ``SQL error``, ``[ERROR]``, ...), so the loop goes on.

``run_sql`` is the shared read-only executor of ``hopscore sql-match``
(:class:`~hopscore.sql.sandbox.SqlExecutor`, 500-row cap, per-query deadline) with its
observation text (:func:`~hopscore.sql.observation.format_observation`). ``web_search`` and
``web_fetch`` call a :mod:`~hopscore.run.search` backend; the knowledge tools read the
database's :class:`~hopscore.agent.knowledge.KnowledgeBase` and are offered only when it exists.

Every observation is capped at ``max_observation_chars`` (the reference has no such cap: a
500-row result of wide text columns could otherwise fill a model's context at once).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.agent.knowledge import KEY_REQUIRED, KnowledgeBase
from hopscore.run.search import SearchBackend, SearchHit
from hopscore.sql.observation import (
    EMPTY_SQL,
    MAX_CELL_CHARS,
    MAX_TOOL_ROWS,
    NOT_CONFIGURED,
    format_observation,
)
from hopscore.sql.sandbox import ERROR_PREFIXES, SqlExecutor

FINAL_ANSWER = "final_answer"
KNOWLEDGE_TOOLS = ("get_all_external_knowledge_names", "get_knowledge_definition",
                   "get_all_knowledge_definitions")
FETCH_CHARS = 20_000
MAX_QUERY_CHARS = 400
_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "required": []}

#: name -> (description, JSON schema of the arguments), in the order offered to the model.
SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "web_search": (
        "Search the web. Returns a numbered list of results, each with its title, URL and a "
        "short snippet. Read a whole page with web_fetch when a snippet is not enough.",
        {"type": "object", "properties": {
            "query": {"type": "string",
                      "description": "What to search for (at most 400 characters / 50 words)."},
            "count": {"type": "integer", "minimum": 1, "maximum": 20, "default": 10,
                      "description": "How many results to return (1 to 20, default 10)."}},
         "required": ["query"]}),
    "web_fetch": (
        "Read the text of a web page given its URL (for example one from web_search).",
        {"type": "object", "properties": {
            "url": {"type": "string", "description": "The page's URL."}},
         "required": ["url"]}),
    "run_sql": (
        "Run one read-only SQL query (SQLite) on this task's database and see the result "
        "table (at most 500 rows). Only SELECT, WITH, PRAGMA and EXPLAIN statements run; "
        "anything that would change the database is refused.",
        {"type": "object", "properties": {
            "sql": {"type": "string", "description": "The SQL query."},
            "description": {"type": "string",
                            "description": "Optional: one line on what the query is for."}},
         "required": ["sql"]}),
    "get_all_external_knowledge_names": (
        "List the titles of this database's knowledge-base entries (domain definitions, "
        "formulas, thresholds). Worth reading before writing SQL.",
        _OBJECT),
    "get_knowledge_definition": (
        "Show one knowledge-base entry in full, by its title, its numeric id (\"0\") or its "
        "database-qualified id (\"alien_0\").",
        {"type": "object", "properties": {
            "knowledge_name": {"type": "string",
                               "description": "Title, numeric id or database-qualified id."}},
         "required": ["knowledge_name"]}),
    "get_all_knowledge_definitions": (
        "Show every knowledge-base entry of this database (only the titles when the whole "
        "base is too long; then read entries one by one with get_knowledge_definition).",
        _OBJECT),
    FINAL_ANSWER: (
        "Submit your final answer; this ends the task. Call it exactly once, alone in its turn. "
        "When the question asks for a SQL query, put the single query in a fenced sql block.",
        {"type": "object", "properties": {
            "answer": {"type": "string", "description": "The final answer."}},
         "required": ["answer"]}),
}


def openai_tools(names: tuple[str, ...]) -> list[dict[str, Any]]:
    """The named tools as OpenAI chat-completions function tools."""
    return [{"type": "function", "function": {"name": name, "description": SCHEMAS[name][0],
                                              "parameters": SCHEMAS[name][1]}}
            for name in names]


class ArgumentError(ValueError):
    """Tool arguments that cannot be used; the message is the observation."""


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A call's arguments as an object: a JSON text (OpenAI), or already an object."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise ArgumentError(f"Error: the tool arguments are not valid JSON ({exc.msg} at "
                                f"character {exc.pos}); send a JSON object.") from None
    else:
        value = arguments
    if not isinstance(value, dict):
        raise ArgumentError("Error: the tool arguments must be a JSON object.")
    return value


def _text_argument(args: dict[str, Any], name: str, *, required: bool) -> str:
    value = args.get(name)
    if value is None:
        if required:
            raise ArgumentError(f"Error: missing required argument '{name}'.")
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ArgumentError(f"Error: argument '{name}' must be a string.")
    return value


def _count_argument(args: dict[str, Any]) -> int:
    value = args.get("count", 10)
    if value is None:
        return 10
    number: float | None = None
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if numeric or (isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value)):
        number = float(value)
    if number is None or number != int(number):
        raise ArgumentError("Error: argument 'count' must be an integer from 1 to 20.")
    return max(1, min(20, int(number)))


def final_answer_text(arguments: Any) -> str:
    """The answer of a final_answer call (ArgumentError when unusable or blank)."""
    answer = _text_argument(parse_arguments(arguments), "answer", required=True)
    if not answer.strip():
        raise ArgumentError("Error: the final answer is empty.")
    return answer


def format_hits(hits: list[SearchHit], label: str) -> str:
    """The web_search observation: ``source=<label>``, a blank line, then numbered hits."""
    if not hits:
        return f"source={label}\n\n(no results)"
    blocks = [f"{i}. {hit.title}\n   {hit.url}\n   {hit.snippet}" for i, hit in
              enumerate(hits, start=1)]
    return f"source={label}\n\n" + "\n\n".join(blocks)


def clean_page(text: str, limit: int = FETCH_CHARS) -> str:
    """The web_fetch observation of a page's text (blank runs collapsed, capped, never empty)."""
    text = re.sub(r"\n{3,}", "\n\n", text.replace("\r\n", "\n")).strip()
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text or "(empty page)"


def is_error_observation(text: str) -> bool:
    return text.lstrip().startswith((*ERROR_PREFIXES, "[ERROR]"))


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    error: bool
    #: why it failed: bad_arguments, unknown_tool, timeout, backend_error, or the SQL error kind
    kind: str | None
    latency_s: float
    #: characters of the observation before the cap
    chars: int
    truncated: bool

    def log(self) -> dict[str, Any]:
        return {"latency_s": round(self.latency_s, 4), "result_chars": self.chars,
                "error": self.error, "error_kind": self.kind, "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class ToolLimits:
    sql_timeout_s: float = 120.0
    sql_max_rows: int = MAX_TOOL_ROWS
    #: seconds for one search or fetch call (the HTTP backend has its own timeout too)
    backend_timeout_s: float = 60.0
    max_observation_chars: int = 100_000


class Toolset:
    """The tools of one task: its database, its knowledge base, the search backend."""

    def __init__(self, *, db_path: Path | None, knowledge: KnowledgeBase | None,
                 search: SearchBackend, executor: SqlExecutor,
                 limits: ToolLimits | None = None) -> None:
        self.db_path = db_path
        self.knowledge = knowledge
        self.search = search
        self.executor = executor
        self.limits = limits or ToolLimits()
        names = ["web_search", "web_fetch", "run_sql"]
        if knowledge is not None:
            names += KNOWLEDGE_TOOLS
        self.names: tuple[str, ...] = (*names, FINAL_ANSWER)

    def schemas(self) -> list[dict[str, Any]]:
        return openai_tools(self.names)

    async def call(self, name: str, arguments: Any, *,
                   time_left: float | None = None) -> ToolResult:
        """Run one tool call (not final_answer, which the agent loop handles); never raises."""
        started = time.perf_counter()
        kind: str | None = None
        try:
            if name not in self.names or name == FINAL_ANSWER:
                kind = "unknown_tool"
                offered = ", ".join(n for n in self.names)
                text = f"Error: unknown tool {name!r}; the tools are: {offered}."
            else:
                text, kind = await self._dispatch(name, parse_arguments(arguments), time_left)
        except ArgumentError as exc:
            text, kind = str(exc), "bad_arguments"
        except Exception as exc:  # a tool bug must not end the task or the run
            text, kind = f"Error: tool {name} failed: {type(exc).__name__}: {exc}", "internal"
        chars = len(text)
        cap = self.limits.max_observation_chars
        truncated = chars > cap
        if truncated:
            text = text[:cap] + f"\n... [observation cut at {cap} of {chars} characters]"
        error = kind is not None or is_error_observation(text)
        return ToolResult(text, error, kind, time.perf_counter() - started, chars, truncated)

    async def _dispatch(self, name: str, args: dict[str, Any],
                        time_left: float | None) -> tuple[str, str | None]:
        if name == "run_sql":
            return await self._run_sql(args, time_left)
        if name == "web_search":
            return await self._web_search(args)
        if name == "web_fetch":
            return await self._web_fetch(args)
        kb = self.knowledge
        assert kb is not None
        if name == "get_all_external_knowledge_names":
            return kb.names(), None
        if name == "get_all_knowledge_definitions":
            return kb.all_definitions(), None
        key = _text_argument(args, "knowledge_name", required=False)
        text = kb.definition(key) if key.strip() else KEY_REQUIRED
        return text, "bad_arguments" if text == KEY_REQUIRED else None

    async def _run_sql(self, args: dict[str, Any],
                       time_left: float | None) -> tuple[str, str | None]:
        sql = _text_argument(args, "sql", required=True).strip()
        description = _text_argument(args, "description", required=False)
        if not sql:
            return EMPTY_SQL, "bad_arguments"
        if self.db_path is None:
            return NOT_CONFIGURED, "not_configured"
        timeout = self.limits.sql_timeout_s
        if time_left is not None:
            timeout = max(0.5, min(timeout, time_left))
        result = await asyncio.to_thread(self.executor.execute, self.db_path, sql,
                                         max_rows=self.limits.sql_max_rows, timeout_s=timeout,
                                         max_cell_chars=MAX_CELL_CHARS + 1)
        text = format_observation(result, description=description,
                                  max_rows=self.limits.sql_max_rows)
        return text, None if result.ok else (result.kind or "sql_error")

    async def _backend(self, call: Any, *args: Any) -> Any:
        return await asyncio.wait_for(asyncio.to_thread(call, *args),
                                      timeout=self.limits.backend_timeout_s)

    async def _web_search(self, args: dict[str, Any]) -> tuple[str, str | None]:
        query = _text_argument(args, "query", required=True).strip()
        if not query:
            return "Error: empty query.", "bad_arguments"
        if len(query) > MAX_QUERY_CHARS:
            return (f"Error: the query is {len(query)} characters long; at most "
                    f"{MAX_QUERY_CHARS} are allowed.", "bad_arguments")
        count = _count_argument(args)
        try:
            hits = await self._backend(self.search.search, query, count)
        except TimeoutError:
            return "Error: web search failed: timed out", "timeout"
        except Exception as exc:
            return f"Error: web search failed: {exc}", "backend_error"
        return format_hits(list(hits)[:count], self.search.label), None

    async def _web_fetch(self, args: dict[str, Any]) -> tuple[str, str | None]:
        url = _text_argument(args, "url", required=True).strip()
        if not url:
            return "Error: empty url.", "bad_arguments"
        try:
            page = await self._backend(self.search.fetch, url)
        except TimeoutError:
            return "Error: web_fetch failed: timed out", "timeout"
        except Exception as exc:
            return f"Error: web_fetch failed: {exc}", "backend_error"
        return clean_page(str(page)), None
