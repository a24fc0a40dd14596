"""The agent's messages in the one form that OpenAI, vLLM, llama.cpp and Ollama all accept.

What each server does with the parts of a tool-calling conversation (read in their code and
issue trackers; docs/servers.md has the sources):

* **assistant content on a tool-call turn.** OpenAI documents ``content`` as optional when
  ``tool_calls`` is given and accepts ``null`` and ``""``. llama.cpp's server (``llama-server``)
  and Ollama's OpenAI layer accept both too. Chat templates that concatenate or iterate the
  content fail on ``null`` (llama-cpp-python's server answered HTTP 500 in hopscore's own run,
  issue 12; Qwen-VL and LM Studio templates have the same trouble), and an empty string works
  everywhere we know of except Amazon Bedrock's OpenAI-compatible endpoints, which reject an
  empty text block ("text content blocks must be non-empty") and want ``null``. So the content
  is ``""`` unless the endpoint is one of those (:func:`content_style_for`).
* **tool-call ids.** Mistral's tokenizer (vLLM with ``--tokenizer-mode mistral``, Mistral's own
  API, Mistral chat templates) requires ids of exactly 9 letters and digits; Anthropic requires
  ``[a-zA-Z0-9_-]``; OpenAI, vLLM, llama.cpp and Ollama only pair a ``tool`` message with the
  assistant's call of the same id (Ollama also takes the tool's name from that pairing). Servers
  generate ids that break the first rule (vLLM's ``chatcmpl-tool-...``, llama-cpp-python's
  ``call__0_<name>_<uuid>``), so every call gets a deterministic id ``c`` + turn + index, 9
  alphanumerics (:func:`call_id`), used in both the assistant message and the tool result.
* **arguments.** vLLM re-parses the ``arguments`` of every replayed call with ``json.loads``
  (malformed JSON: HTTP 400; a JSON array or scalar: HTTP 500) and Ollama unmarshals them into an
  object (else 400 "invalid tool call arguments", also for an empty string). Arguments go back as
  the JSON object the model meant; text that is not a JSON object is wrapped as
  ``{"unparsed_arguments": "<text>"}`` so the conversation can go on (the call itself was already
  answered with an argument error).
* **tool results.** ``{"role": "tool", "tool_call_id": ..., "content": "<text>"}`` and nothing
  else: OpenAI's documented tool message has no ``name`` (some OpenAI-compatible gateways reject
  unknown fields), Ollama finds the name from the id, llama.cpp treats ``name`` as optional. An
  empty result is sent as a short text, since Bedrock rejects empty text blocks too.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from hopscore.engine import CallFailure

#: How an assistant tool-call turn without text carries its content.
CONTENT_STYLES = ("auto", "empty", "null")
EMPTY_RESULT = "(the tool returned no text)"
UNPARSED = "unparsed_arguments"


def content_style_for(endpoint: str, requested: str = "auto") -> str:
    """``"empty"`` or ``"null"``: the requested style, or for ``auto`` the one the endpoint
    is known to want (null for Amazon Bedrock's OpenAI-compatible hosts, else empty)."""
    if requested != "auto":
        return requested
    host = (urlsplit(endpoint).hostname or "").lower()
    if host.endswith(".amazonaws.com") and "bedrock" in host:
        return "null"
    return "empty"


def call_id(turn: int, index: int) -> str:
    """The id of call ``index`` of turn ``turn``: 9 letters and digits, unique in an attempt
    (turns and calls per turn below 10,000)."""
    return f"c{turn % 10_000:04d}{index % 10_000:04d}"


def wire_arguments(arguments: Any) -> str:
    """The call's arguments as the text of a JSON object (see the module docstring)."""
    if isinstance(arguments, dict):
        return json.dumps(arguments, ensure_ascii=False)
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return "{}"
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError:
            return json.dumps({UNPARSED: arguments}, ensure_ascii=False)
        if isinstance(value, dict):
            return arguments
        if value is None:
            return "{}"
    return json.dumps({UNPARSED: arguments if isinstance(arguments, str) else
                       json.dumps(arguments, ensure_ascii=False)}, ensure_ascii=False)


def normalize_calls(calls: list[Any] | None, turn: int) -> list[dict[str, Any]]:
    """A reply's tool calls as OpenAI message entries: our id, a name, the arguments as the
    model wrote them (text; a dict is dumped). ``server_id`` keeps the id the server gave."""
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
        entry = {"id": call_id(turn, index), "type": "function",
                 "function": {"name": name, "arguments": str(arguments)}}
        server_id = call.get("id")
        if isinstance(server_id, str) and server_id and server_id != entry["id"]:
            entry["server_id"] = server_id
        out.append(entry)
    return out


def assistant_message(content: str | None, calls: list[dict[str, Any]], style: str
                      ) -> dict[str, Any]:
    """The assistant turn as it goes back to the endpoint (and into the trajectory)."""
    text = content or ""
    if not calls:
        return {"role": "assistant", "content": text}
    wire_calls = [{"id": c["id"], "type": "function",
                   "function": {"name": c["function"]["name"],
                                "arguments": wire_arguments(c["function"]["arguments"])}}
                  for c in calls]
    body: str | None = text if text or style != "null" else None
    return {"role": "assistant", "content": body, "tool_calls": wire_calls}


def tool_message(call: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call, "content": text if text else EMPTY_RESULT}


# --- what a failed request says about the endpoint -------------------------------------------

_OVERFLOW = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|max_model_len|maximum model length|"
    r"prompt is too long|input is too long|too many tokens|exceeds? the (available )?context|"
    r"input length exceeds|reads at most \d+", re.IGNORECASE)
_NO_TOOLS = re.compile(
    r"tool[ _-]?choice|tool[ _-]?call[ _-]?parser|enable-auto-tool-choice|"
    r"(does not|doesn't) support tools|tools? (are|is) not supported|"
    r"tool (calling|use) is not supported|unsupported.{0,20}tools?", re.IGNORECASE)


def is_context_overflow(failure: CallFailure | None) -> bool:
    """A request the endpoint refused because the conversation does not fit its context:
    OpenAI and vLLM ("maximum context length is N tokens"), llama.cpp ("exceeds the available
    context size"), llama-cpp-python (``context_length_exceeded``), Anthropic ("prompt is too
    long"), Ollama ("input length exceeds the context length"), the local model."""
    if failure is None or failure.status not in (400, 413, 422):
        return False
    return bool(_OVERFLOW.search(failure.message or ""))


def rejects_tools(failure: CallFailure | None) -> bool:
    """A 4xx that says the endpoint cannot take the offered tools: vLLM without
    ``--enable-auto-tool-choice --tool-call-parser`` ("\\"auto\\" tool choice requires ..."), or a
    server saying tools are unsupported."""
    if failure is None or failure.status is None or not 400 <= failure.status < 500:
        return False
    if failure.status in (401, 403, 404, 429) or is_context_overflow(failure):
        return False
    return bool(_NO_TOOLS.search(failure.message or ""))
