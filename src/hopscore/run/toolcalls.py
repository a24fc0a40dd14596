"""A text protocol for tool calls, for models without native tool calling (``local/smollm2``).

The request's tool schemas are rendered into the system message, with the call format: a JSON
object ``{"name": ..., "arguments": {...}}`` between ``<tool_call>`` and ``</tool_call>``
(the tag convention of Hermes/Qwen-style chat templates). The conversation's earlier tool calls
are written back in that form, and tool results become user messages wrapped in
``<tool_response>`` tags, so a plain chat template can render every turn. The model's reply is
parsed back into OpenAI ``tool_calls``: every tagged block (the closing tag may be missing at
the end of the reply); a block whose JSON cannot be read still becomes a call when a tool name
can be found in it (its arguments are passed as written, so the harness answers with an
argument error the model can see), otherwise it stays text.
"""

from __future__ import annotations

import json
import re
from typing import Any

OPEN, CLOSE = "<tool_call>", "</tool_call>"
_BLOCK = re.compile(re.escape(OPEN) + r"(.*?)(?:" + re.escape(CLOSE) + r"|\Z)", re.DOTALL)
_NAME = re.compile(r'"name"\s*:\s*"([^"]+)"')


def _signature(tool: dict[str, Any]) -> str:
    function = tool.get("function") or {}
    parameters = function.get("parameters") or {}
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    args = ", ".join(f"{name}: {spec.get('type', 'any')}" + ("" if name in required else "?")
                     for name, spec in properties.items())
    return f"- {function.get('name')}({args}): {function.get('description', '')}"


def _example(tools: list[dict[str, Any]]) -> str:
    """A call of the first tool that takes a required argument (a model copies the shape)."""
    for tool in tools:
        function = tool.get("function") or {}
        required = (function.get("parameters") or {}).get("required") or []
        if required:
            return json.dumps({"name": function.get("name"),
                               "arguments": {str(required[0]): "..."}})
    name = (tools[0].get("function") or {}).get("name") if tools else "tool_name"
    return json.dumps({"name": name, "arguments": {}})


def tools_prompt(tools: list[dict[str, Any]]) -> str:
    example = _example(tools)
    lines = [
        "You have tools. To call one, reply with a JSON object between tool-call tags, "
        "exactly like this:",
        f"{OPEN}\n{example}\n{CLOSE}",
        "Call one tool per reply, then wait for its result. The tools (? marks an optional "
        "argument):",
        *(_signature(tool) for tool in tools),
    ]
    return "\n".join(lines)


def _call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments: Any = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        arguments = raw
    body = json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


def text_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """The conversation with tools described in text and tool turns as plain messages."""
    prompt = tools_prompt(tools)
    out: list[dict[str, Any]] = []
    if not messages or messages[0].get("role") != "system":
        out.append({"role": "system", "content": prompt})
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        if role == "system" and index == 0:
            out.append({"role": "system", "content": f"{text}\n\n{prompt}"})
        elif role == "assistant":
            parts = [text] if text.strip() else []
            parts += [_call_text(call) for call in message.get("tool_calls") or []]
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{text}\n</tool_response>"})
        else:
            out.append({"role": str(role), "content": text})
    return out


#: A forced call starts with this after the opening tag; the tool name follows.
NAME_PREFIX = '\n{"name": "'
#: Closers tried, in order, on a call cut off by the token budget.
_CLOSERS = ("", "}", "}}", '"}}', '"}}}', "]}}", '"]}}')


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or {}).get("name")) for t in tools
            if (t.get("function") or {}).get("name")]


def arguments_prefix(tools: list[dict[str, Any]], name: str) -> str:
    """What follows the chosen tool name: the arguments object, opened on the first required
    argument when that is a string (the model then writes its value)."""
    for tool in tools:
        function = tool.get("function") or {}
        if function.get("name") != name:
            continue
        parameters = function.get("parameters") or {}
        required = parameters.get("required") or []
        if required:
            spec = (parameters.get("properties") or {}).get(required[0]) or {}
            if spec.get("type") == "string":
                return f'", "arguments": {{"{required[0]}": "'
    return '", "arguments": {'


def _first_object(text: str) -> Any:
    """The first JSON value that starts at a ``{`` of ``text`` (None when there is none); a
    value cut off at the end of the text is closed when a few closing characters mend it."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start >= 0:
        for closer in _CLOSERS:
            try:
                value, _ = decoder.raw_decode(text[start:].rstrip() + closer)
                return value
            except json.JSONDecodeError:
                continue
        start = text.find("{", start + 1)
    return None


def parse_tool_calls(text: str) -> tuple[str, list[dict[str, Any]]]:
    """``(remaining text, OpenAI tool_calls)`` of a reply in the text protocol."""
    calls: list[dict[str, Any]] = []
    for block in _BLOCK.findall(text):
        value = _first_object(block)
        name = arguments = None
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            name = value["name"]
            raw = value.get("arguments", value.get("parameters", {}))
            arguments = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        else:
            found = _NAME.search(block)
            if found:
                name, arguments = found.group(1), block.strip()
        if name is None:
            continue
        calls.append({"id": f"call_{len(calls)}", "type": "function",
                      "function": {"name": name, "arguments": arguments}})
    rest = _BLOCK.sub("", text).strip() if calls else text
    return rest, calls
