"""One attempt at one HDR task: a tool-calling loop through the request engine.

The conversation starts with the system prompt (hopscore's wording of the reference's content,
spec §3.2) and the user prompt of spec §3.3 (``## Final question``, ``## Hint`` unless the hint
is empty, ``## Database``). Each turn is one model request with the tools; every tool call of
the reply is answered by a ``tool`` message, in order, and logged with its latency and result
size. The harness, not the model, enforces the contract:

* the attempt ends at the first accepted ``final_answer`` call, so there is exactly one final
  answer. A ``final_answer`` call is accepted only when it is the turn's only tool call: next
  to other calls (or next to another ``final_answer``) it is refused with an error observation,
  the other calls run normally, and the model has to submit again in a turn of its own;
* a reply without tool calls gets a reminder (as a user message) and costs a turn;
* malformed arguments and unknown tools get an error observation, never an exception;
* ``max_turns`` model requests at most (status ``max_turns``) and ``task_timeout_s`` seconds of
  wall clock (status ``task_timeout``; tool calls still unanswered get an error observation, so
  the saved trajectory stays well-formed);
* a model request that fails after the engine's retries ends the attempt with status
  ``model_error``: it is recorded, never graded as an answer, and retried by a re-run.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from hopscore.engine import CallFailure, ChatEngine, ChatRequest, sha256_text
from hopscore.hdr.tasks import HdrTask
from hopscore.hdr.tools import FINAL_ANSWER, ArgumentError, Toolset, final_answer_text

SYSTEM_PROMPT = """\
You are a research agent. The questions you get can only be answered by combining web research \
with read-only SQL queries on the task's database.

You can search the web, read web pages, run read-only SQL queries on the task database, and \
submit one final answer. Use the tools as often as you need. Never try to modify the database.

Answer format:
- When the question asks for a fact or an entity, answer with short plain text.
- When the question asks for a SQL query, answer with that one query, in a fenced code block \
labelled sql (```sql ... ```).

Submit exactly one final answer with the final_answer tool, and call no other tool in that turn.\
"""
NO_TOOL_CALL = ("You did not call a tool. Go on with the tools, and submit your answer with the "
                "final_answer tool.")
FINAL_NOT_ALONE = ("Error: final_answer was not accepted: it must be the only tool call of its "
                   "turn. Submit it again on its own.")
TIME_UP = "Error: the task's time limit was reached before this tool call finished."

#: attempt statuses
FINAL, MAX_TURNS, TIMEOUT, MODEL_ERROR = "final_answer", "max_turns", "task_timeout", "model_error"


def user_prompt(task: HdrTask) -> str:
    """The user message: final question, hint (left out when empty), database."""
    parts = [f"## Final question\n{task.final_question.strip()}"]
    if task.hint.strip():
        parts.append(f"## Hint\n{task.hint.strip()}")
    parts.append(f"## Database\n{task.db}")
    return "\n\n".join(parts)


def prompt_sha256() -> str:
    return sha256_text(SYSTEM_PROMPT)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSettings:
    model: str
    max_turns: int = 300
    task_timeout_s: float = 3600.0
    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    #: sent as ``tool_choice`` when set (auto, required, none)
    tool_choice: str | None = None


@dataclass(slots=True)
class Attempt:
    """What one attempt did (mutable while it runs)."""

    messages: list[dict[str, Any]]
    status: str = ""
    final_answer: str | None = None
    turns: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    model_calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    text_replies: int = 0
    refused_final_answers: int = 0
    failure: CallFailure | None = None
    elapsed_s: float = 0.0
    #: model requests that needed more than one attempt (or failed): turn and every attempt
    request_attempts: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        errors = 0
        for call in self.tool_calls:
            counts[call["name"]] = counts.get(call["name"], 0) + 1
            errors += bool(call["error"])
        return {
            "status": self.status, "final_answer": self.final_answer, "turns": self.turns,
            "model_calls": self.model_calls, "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "text_replies": self.text_replies, "refused_final_answers": self.refused_final_answers,
            "tool_call_count": len(self.tool_calls), "tool_errors": errors, "tools_used": counts,
            "elapsed_s": round(self.elapsed_s, 3),
            "error": None if self.failure is None else self.failure.to_json(),
            "request_attempts": self.request_attempts,
            "tool_calls": self.tool_calls,
        }


def normalize_calls(calls: list[Any] | None, turn: int) -> list[dict[str, Any]]:
    """Tool calls as OpenAI message entries, each with an id, a name and text arguments."""
    out: list[dict[str, Any]] = []
    for index, call in enumerate(calls or []):
        call = call if isinstance(call, dict) else {}
        raw_function = call.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        name = function.get("name") if isinstance(function.get("name"), str) else ""
        arguments = function.get("arguments")
        if isinstance(arguments, (dict, list)):
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif arguments is None:
            arguments = ""
        call_id = call.get("id") if isinstance(call.get("id"), str) and call.get("id") else \
            f"call_t{turn}_{index}"
        out.append({"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": str(arguments)}})
    return out


class AgentLoop:
    def __init__(self, engine: ChatEngine, settings: AgentSettings) -> None:
        self.engine = engine
        self.settings = settings

    async def run(self, task: HdrTask, attempt_index: int, toolset: Toolset) -> Attempt:
        """Run one attempt to its end (never raises for model or tool failures)."""
        state = Attempt(messages=[{"role": "system", "content": SYSTEM_PROMPT},
                                  {"role": "user", "content": user_prompt(task)}])
        started = time.monotonic()
        deadline = started + self.settings.task_timeout_s
        try:
            await asyncio.wait_for(self._loop(state, task, attempt_index, toolset, deadline),
                                   timeout=self.settings.task_timeout_s)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            state.status = FINAL if state.final_answer is not None else TIMEOUT
            self._answer_open_calls(state)
        state.elapsed_s = time.monotonic() - started
        return state

    def _request(self, state: Attempt, task: HdrTask, attempt_index: int,
                 toolset: Toolset) -> ChatRequest:
        s = self.settings
        extra = {"tool_choice": s.tool_choice} if s.tool_choice else {}
        return ChatRequest(model=s.model, messages=list(state.messages), temperature=s.temperature,
                           max_tokens=s.max_tokens, seed=s.seed, tools=toolset.schemas(),
                           extra=extra, cache_tag=f"hdr:{task.id}#{attempt_index}")

    async def _loop(self, state: Attempt, task: HdrTask, attempt_index: int, toolset: Toolset,
                    deadline: float) -> None:
        for turn in range(1, self.settings.max_turns + 1):
            state.turns = turn
            call = await self.engine.complete(self._request(state, task, attempt_index, toolset))
            state.model_calls += 1
            state.cached_calls += call.cached
            if len(call.attempt_log) > 1 or call.failure is not None:
                state.request_attempts.append(
                    {"turn": turn, "attempts": [a.to_json() for a in call.attempt_log]})
            if call.response is None:
                state.status, state.failure = MODEL_ERROR, call.failure
                return
            response = call.response
            state.prompt_tokens += response.usage.prompt_tokens
            state.completion_tokens += response.usage.completion_tokens
            calls = normalize_calls(response.tool_calls, turn)
            message: dict[str, Any] = {"role": "assistant", "content": response.content}
            if calls:
                message["tool_calls"] = calls
            state.messages.append(message)
            if not calls:
                state.text_replies += 1
                state.messages.append({"role": "user", "content": NO_TOOL_CALL})
                continue
            for call_entry in calls:
                await self._answer(state, call_entry, len(calls), turn, toolset, deadline)
            if state.final_answer is not None:
                state.status = FINAL
                return
        state.status = MAX_TURNS

    async def _answer(self, state: Attempt, call: dict[str, Any], calls_in_turn: int, turn: int,
                      toolset: Toolset, deadline: float) -> None:
        function = call["function"]
        name, arguments = function["name"], function["arguments"]
        log: dict[str, Any] = {"turn": turn, "id": call["id"], "name": name,
                               "arguments": arguments}
        if name == FINAL_ANSWER:
            started = time.perf_counter()
            error_kind: str | None = None
            if calls_in_turn > 1:
                text, error_kind = FINAL_NOT_ALONE, "final_answer_not_alone"
                state.refused_final_answers += 1
            else:
                try:
                    answer = final_answer_text(arguments)
                    text = answer
                    state.final_answer = answer
                except ArgumentError as exc:
                    text, error_kind = str(exc), "bad_arguments"
            log.update(latency_s=round(time.perf_counter() - started, 4), result_chars=len(text),
                       error=error_kind is not None, error_kind=error_kind, truncated=False)
        else:
            result = await toolset.call(name, arguments, time_left=deadline - time.monotonic())
            text = result.text
            log.update(result.log())
        state.tool_calls.append(log)
        state.messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})

    @staticmethod
    def _answer_open_calls(state: Attempt) -> None:
        answered = {m.get("tool_call_id") for m in state.messages if m.get("role") == "tool"}
        last = next((m for m in reversed(state.messages) if m.get("role") == "assistant"), None)
        for call in (last or {}).get("tool_calls") or []:
            if call["id"] not in answered:
                state.messages.append({"role": "tool", "tool_call_id": call["id"],
                                       "content": TIME_UP})
                state.tool_calls.append({
                    "turn": state.turns, "id": call["id"], "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"], "latency_s": None,
                    "result_chars": len(TIME_UP), "error": True, "error_kind": "task_timeout",
                    "truncated": False})
