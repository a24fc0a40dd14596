"""One attempt at one agent task: a tool-calling loop through the request engine.

The conversation starts with the system prompt (hopscore's wording of the reference's content,
spec §3.2) and the user prompt of spec §3.3 (``## Final question``, ``## Hint`` unless the hint
is empty, ``## Database``). Each turn is one model request with the tools, natively or in the
text protocol (:mod:`hopscore.agent.protocol`); every tool call of the reply is answered by a
``tool`` message, in order, and logged with its latency and result size. Messages are kept in
the form every server we know accepts (:mod:`hopscore.agent.wire`). The harness, not the model,
enforces the contract:

* the attempt ends at the first accepted ``final_answer`` call, so there is exactly one final
  answer. A ``final_answer`` call is accepted only when it is the turn's only tool call: next
  to other calls (or next to another ``final_answer``) it is refused with an error observation,
  the other calls run normally, and the model has to submit again in a turn of its own;
* a reply without tool calls gets a reminder (as a user message) and costs a turn;
  ``max_text_turns`` such replies in a row end the attempt (status ``no_tool_call``);
* malformed arguments and unknown tools get an error observation, never an exception;
* ``max_turns`` model requests at most (status ``max_turns``) and ``task_timeout_s`` seconds of
  wall clock (status ``task_timeout``; tool calls still unanswered get an error observation, so
  the saved trajectory stays well-formed);
* a request the endpoint refuses because the conversation no longer fits its context ends the
  attempt with status ``context_overflow``: final, graded as no answer, not retried (a re-run
  would fail the same way); ``max_context_tokens`` drops the oldest tool results before that
  (:mod:`hopscore.agent.context`);
* any other request that fails after the engine's retries ends the attempt with status
  ``model_error``: it is recorded, never graded as an answer, and retried by a re-run.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from hopscore.agent.benchmark import agent_key
from hopscore.agent.context import ContextBudget, ContextWatch
from hopscore.agent.protocol import NATIVE, ToolProtocol, WireRequest
from hopscore.agent.tools import FINAL_ANSWER, ArgumentError, Toolset, final_answer_text
from hopscore.agent.wire import (
    assistant_message,
    is_context_overflow,
    normalize_calls,
    tool_message,
)
from hopscore.benchmarks.agent_tasks import HdrTask
from hopscore.engine import CallFailure, ChatEngine, ChatRequest, sha256_text
from hopscore.engine.ledger import MODEL, USAGE, Tally, tool_role

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
NO_TOOL, OVERFLOW = "no_tool_call", "context_overflow"


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
    #: sent as ``tool_choice`` with native tools (auto, required, none)
    tool_choice: str | None = "auto"
    #: replies in a row without a tool call before the attempt ends (status no_tool_call)
    max_text_turns: int = 5
    #: the model's context in tokens: the oldest tool results are dropped to stay inside it
    max_context_tokens: int | None = None
    #: how a tool-call turn without text carries its content: "empty" ("") or "null"
    content_style: str = "empty"


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
    #: the protocol of each model request, in order ("native" / "text")
    protocols: list[str] = field(default_factory=list)
    #: tool-call ids whose results were dropped from the requests to fit the context
    context_dropped: list[str] = field(default_factory=list)
    #: a later prompt came back clearly shorter than an earlier one (silent truncation?)
    prompt_shrank: bool = False
    #: model requests that needed more than one attempt (or failed): turn and every attempt
    request_attempts: list[dict[str, Any]] = field(default_factory=list)
    #: turns whose reply was cut at max_tokens (finish_reason "length")
    truncated_turns: list[int] = field(default_factory=list)
    #: the model's requests (failed ones too) and tokens (:mod:`hopscore.engine.ledger`)
    model_usage: Tally = field(default_factory=Tally)

    def usage(self) -> dict[str, dict[str, int]]:
        """The attempt's usage ledger: the model's, then each tool's calls as its requests."""
        out = {MODEL: self.model_usage.to_json()}
        for call in self.tool_calls:
            if call["name"] != FINAL_ANSWER and call.get("error_kind") != "task_timeout":
                role = out.setdefault(tool_role(call["name"]), Tally().to_json())
                role["requests"] += 1
        return out

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
            "tool_protocol": _protocols(self.protocols),
            "context_dropped": self.context_dropped, "prompt_shrank": self.prompt_shrank,
            "error": None if self.failure is None else self.failure.to_json(),
            "request_attempts": self.request_attempts,
            "truncated": bool(self.truncated_turns), "truncated_turns": self.truncated_turns,
            "tool_calls": self.tool_calls,
            USAGE: self.usage(),
        }


def _protocols(used: list[str]) -> str | None:
    """"native", "text", or "native->text" when the run switched during this attempt."""
    seen = list(dict.fromkeys(used))
    return "->".join(seen) if seen else None


class AgentLoop:
    def __init__(self, engine: ChatEngine, settings: AgentSettings,
                 protocol: ToolProtocol | None = None) -> None:
        self.engine = engine
        self.settings = settings
        self.protocol = protocol or ToolProtocol("native")
        #: the requests' cache tags start with the agent benchmark's declared key
        self.key = agent_key()

    async def run(self, task: HdrTask, attempt_index: int, toolset: Toolset) -> Attempt:
        """Run one attempt to its end (never raises for model or tool failures)."""
        state = Attempt(messages=[{"role": "system", "content": SYSTEM_PROMPT},
                                  {"role": "user", "content": user_prompt(task)}])
        started = time.monotonic()
        deadline = started + self.settings.task_timeout_s
        try:
            await asyncio.wait_for(self._loop(state, task, attempt_index, toolset, deadline),
                                   timeout=self.settings.task_timeout_s)
        except TimeoutError:
            state.status = FINAL if state.final_answer is not None else TIMEOUT
            self._answer_open_calls(state)
        state.elapsed_s = time.monotonic() - started
        return state

    def _request(self, wire: WireRequest, task: HdrTask, attempt_index: int) -> ChatRequest:
        s = self.settings
        return ChatRequest(model=s.model, messages=wire.messages, temperature=s.temperature,
                           max_tokens=s.max_tokens, seed=s.seed, tools=wire.tools,
                           stop=wire.stop, extra=wire.extra,
                           cache_tag=f"{self.key}:{task.id}#{attempt_index}")

    async def _loop(self, state: Attempt, task: HdrTask, attempt_index: int, toolset: Toolset,
                    deadline: float) -> None:
        s = self.settings
        budget = ContextBudget(s.max_context_tokens, reserve=s.max_tokens or 512)
        watch = ContextWatch()
        in_a_row = 0
        tools = toolset.schemas()
        protocol = self.protocol

        def render(messages: list[dict[str, Any]]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
            wire = protocol.request(messages, tools, s.tool_choice)
            return wire.messages, wire.tools

        for turn in range(1, s.max_turns + 1):
            state.turns = turn
            dropped = len(budget.dropped)
            while True:  # at most twice: once more in text when the endpoint refuses the tools
                sent = budget.fit(state.messages, render)
                wire = protocol.request(sent, tools, s.tool_choice)
                state.context_dropped = list(budget.dropped)
                call = await self.engine.complete(self._request(wire, task, attempt_index))
                state.model_calls += 1
                state.cached_calls += call.cached
                state.model_usage.add_call(call.to_json())
                state.protocols.append(wire.mode)
                if len(call.attempt_log) > 1 or call.failure is not None:
                    state.request_attempts.append(
                        {"turn": turn, "attempts": [a.to_json() for a in call.attempt_log]})
                if call.response is not None or not protocol.refused(call.failure, wire.mode):
                    break
            if call.response is None:
                state.failure = call.failure
                state.status = OVERFLOW if is_context_overflow(call.failure) else MODEL_ERROR
                return
            response = call.response
            if response.finish_reason == "length":
                state.truncated_turns.append(turn)
            state.prompt_tokens += response.usage.prompt_tokens
            state.completion_tokens += response.usage.completion_tokens
            budget.observe(response.usage.prompt_tokens)
            if watch.observe(response.usage.prompt_tokens, len(budget.dropped) > dropped):
                state.prompt_shrank = True
                protocol.say_once("shrank", (
                    f"warning: task {task.id}: the endpoint reported "
                    f"{response.usage.prompt_tokens} prompt tokens for a longer conversation "
                    f"than one it counted {watch.largest} for: it may be cutting the prompt to "
                    "fit its context (Ollama does at num_ctx); set --max-context-tokens to the "
                    "real context (attempts where this happened have prompt_shrank: true)"))
            content, raw_calls = protocol.read(response, wire.mode, turn, tools)
            calls = normalize_calls(raw_calls, turn)
            state.messages.append(assistant_message(content, calls, s.content_style))
            if not calls:
                state.text_replies += 1
                in_a_row += 1
                if in_a_row >= s.max_text_turns:
                    state.status = NO_TOOL
                    return
                state.messages.append({"role": "user", "content": NO_TOOL_CALL})
                continue
            in_a_row = 0
            for call_entry in calls:
                await self._answer(state, call_entry, len(calls), turn, toolset, deadline,
                                   wire.mode)
            if state.final_answer is not None:
                state.status = FINAL
                return
        state.status = MAX_TURNS

    async def _answer(self, state: Attempt, call: dict[str, Any], calls_in_turn: int, turn: int,
                      toolset: Toolset, deadline: float, mode: str = NATIVE) -> None:
        function = call["function"]
        name, arguments = function["name"], function["arguments"]
        log: dict[str, Any] = {"turn": turn, "id": call["id"], "name": name,
                               "arguments": arguments}
        if "server_id" in call:
            log["server_id"] = call["server_id"]
        if mode != NATIVE:
            log["protocol"] = mode
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
        state.messages.append(tool_message(call["id"], text))

    @staticmethod
    def _answer_open_calls(state: Attempt) -> None:
        answered = {m.get("tool_call_id") for m in state.messages if m.get("role") == "tool"}
        last = next((m for m in reversed(state.messages) if m.get("role") == "assistant"), None)
        for call in (last or {}).get("tool_calls") or []:
            if call["id"] not in answered:
                state.messages.append(tool_message(call["id"], TIME_UP))
                state.tool_calls.append({
                    "turn": state.turns, "id": call["id"], "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"], "latency_s": None,
                    "result_chars": len(TIME_UP), "error": True, "error_kind": "task_timeout",
                    "truncated": False})
