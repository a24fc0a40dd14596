"""How the agent's tools reach the model: natively, or written into the conversation as text.

``--tool-protocol``:

* ``native``: the tools go in the request's ``tools`` field and calls come back as the reply's
  ``tool_calls`` (OpenAI, vLLM with ``--enable-auto-tool-choice``, llama.cpp with ``--jinja``,
  Ollama, llama-cpp-python with ``--chat_format chatml-function-calling``).
* ``text``: no ``tools`` field. The tool schemas and the call format are written into the system
  message and the conversation is rendered as plain turns by :mod:`hopscore.engine.toolcalls` (the
  protocol that drives the built-in local model); the reply's text is parsed back into calls,
  with the shorthand of :mod:`hopscore.engine.toolcalls` for small models (a ```` ```sql ````
  block calls ``run_sql``). Works with any chat endpoint, whatever its template.
* ``auto`` (default): native until the endpoint shows it ignores the tools, then text, with a
  warning. The endpoint "ignores the tools" when, before any native tool call was seen, it
  refuses the tools with a 4xx that says so (vLLM without a tool parser), when a reply carries
  calls written as text (``<tool_call>`` blocks: a template with no tool parser), or when the
  first :data:`PROBE_REPLIES` replies to requests offering tools have no call at all (a plain
  chat template, e.g. llama-cpp-python's ``chatml``, drops the tools silently).

One :class:`ToolProtocol` is shared by every attempt of a run (asyncio: one thread), so the
switch happens once per run; attempts in flight go on from their next turn in text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hopscore.agent.wire import rejects_tools
from hopscore.engine import CallFailure, ChatResponse
from hopscore.engine.toolcalls import CLOSE, parse_tool_calls, text_messages

PROTOCOLS = ("auto", "native", "text")
NATIVE, TEXT = "native", "text"
#: replies without a tool call (before any native call) after which ``auto`` switches to text
PROBE_REPLIES = 3


@dataclass(frozen=True, slots=True)
class WireRequest:
    """What one turn sends: the messages, the tools field (None: not sent), extra body keys."""

    mode: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    extra: dict[str, Any]
    stop: list[str] | None


@dataclass(slots=True)
class ToolProtocol:
    requested: str = "auto"
    endpoint: str = ""
    warn: Callable[[str], None] | None = None
    probe_replies: int = PROBE_REPLIES
    mode: str = NATIVE
    #: native tool calls seen (a native call settles ``auto`` for good)
    native_calls: int = 0
    #: calls parsed from text replies
    text_calls: int = 0
    #: replies (to requests offering tools) without any call, while still probing
    tool_less: int = 0
    #: replies to requests that offered tools, in either mode
    replies: int = 0
    switch: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    #: the block an earlier run of this directory wrote (kept when this run sent nothing)
    previous: dict[str, Any] | None = None
    #: llama.cpp's /props, when the endpoint check got it (its chat template's tool support)
    props: dict[str, Any] | None = None
    _said: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.requested not in PROTOCOLS:
            raise ValueError(f"tool protocol must be one of {', '.join(PROTOCOLS)}")
        self.mode = TEXT if self.requested == TEXT else NATIVE

    @property
    def probing(self) -> bool:
        return self.requested == "auto" and self.mode == NATIVE and self.native_calls == 0

    def request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                tool_choice: str | None) -> WireRequest:
        if self.mode == TEXT:
            return WireRequest(TEXT, text_messages(messages, tools, shorthand=True), None, {},
                               [CLOSE])
        extra = {"tool_choice": tool_choice} if tool_choice else {}
        return WireRequest(NATIVE, list(messages), tools, extra, None)

    def read(self, response: ChatResponse, mode: str, turn: int,
             tools: list[dict[str, Any]] | None = None) -> tuple[str | None, list[Any]]:
        """The reply's text and its calls (raw OpenAI entries) under the protocol it was sent
        with; in ``auto`` it also decides whether to switch."""
        self.replies += 1
        content = response.content
        if mode == TEXT:
            rest, calls = parse_tool_calls(content or "", tools)
            self.text_calls += len(calls)
            return (rest if calls else content), calls
        native = list(response.tool_calls or [])
        if native:
            self.native_calls += len(native)
            return content, native
        if not self.probing:
            return content, []
        rest, calls = parse_tool_calls(content or "")
        if calls:
            self._switch(f"a reply (turn {turn}) wrote its tool calls as text instead of "
                         "returning tool_calls")
            self.text_calls += len(calls)
            return rest, calls
        self.tool_less += 1
        if self.tool_less >= self.probe_replies:
            self._switch(f"the first {self.tool_less} replies to requests offering tools had "
                         "no tool call")
        return content, []

    def refused(self, failure: CallFailure | None, mode: str) -> bool:
        """True when a failed native request means: switch to text and send the turn again."""
        if mode != NATIVE or not self.probing or not rejects_tools(failure):
            return False
        assert failure is not None
        self._switch(f"the endpoint refused the tools (HTTP {failure.status}: "
                     f"{failure.message[:200]})")
        return True

    def _switch(self, reason: str) -> None:
        if self.mode == TEXT:
            return
        self.mode = TEXT
        self.switch = {"reason": reason, "after_replies": self.replies}
        self.say(f"warning: {self.endpoint or 'the endpoint'} does not take the offered tools "
                 f"natively ({reason}); the agent goes on with the text tool-call protocol "
                 "(--tool-protocol text; pass --tool-protocol native to keep native tools)")

    def say_once(self, key: str, text: str) -> None:
        """:meth:`say`, the first time only for ``key`` in this run."""
        if key not in self._said:
            self._said.add(key)
            self.say(text)

    def say(self, text: str) -> None:
        self.notes.append(text)
        if self.warn is not None:
            self.warn(text)

    def to_json(self) -> dict[str, Any]:
        """The ``tool_protocol`` block of config.json. A run that sent no request (every
        attempt was already done) keeps what the run that made them found."""
        if self.replies == 0 and self.previous and self.previous.get("requested") == \
                self.requested:
            return {**self.previous, "this_run": "no model requests (attempts already done)"}
        return {"requested": self.requested, "used": self.mode, "switch": self.switch,
                "native_tool_calls": self.native_calls, "text_tool_calls": self.text_calls,
                "replies": self.replies}
