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

Shorthand (``shorthand=True``, the agent's text protocol against a remote endpoint, where
no decoding can be forced): a model too small to write the tags still tends to answer in a
fenced code block labelled with what it means (```` ```sql ````). When a reply has no tagged
call, its first fenced block whose label is the name of a tool's first required string
argument, for exactly one tool, is read as a call of that tool with the block as that argument
(```` ```sql ... ``` ```` calls ``run_sql``); failing that, a bare JSON object
``{"name": <an offered tool>, "arguments": {...}}`` (as some servers return calls in the
content) is a call. The tools prompt then says so, and the call is written back in the tagged
form, so the model sees the canonical format in its own history.
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


def tools_prompt(tools: list[dict[str, Any]], shorthand: bool = False) -> str:
    example = _example(tools)
    lines = [
        "You have tools. To call one, reply with a JSON object between tool-call tags, "
        "exactly like this:",
        f"{OPEN}\n{example}\n{CLOSE}",
        "Call one tool per reply, then wait for its result. The tools (? marks an optional "
        "argument):",
        *(_signature(tool) for tool in tools),
    ]
    fenced = _fence_tools(tools) if shorthand else {}
    for label, name in fenced.items():
        lines.append(f"A reply that is a ```{label} fenced block calls {name} with it.")
    return "\n".join(lines)


def _fence_tools(tools: list[dict[str, Any]]) -> dict[str, str]:
    """Fence label -> tool: the first required string argument's name, when one tool has it."""
    owners: dict[str, list[str]] = {}
    for tool in tools:
        function = tool.get("function") or {}
        parameters = function.get("parameters") or {}
        required = parameters.get("required") or []
        if not required or not function.get("name"):
            continue
        spec = (parameters.get("properties") or {}).get(required[0]) or {}
        if spec.get("type") == "string":
            owners.setdefault(str(required[0]), []).append(str(function["name"]))
    return {label: names[0] for label, names in owners.items() if len(names) == 1}


def _call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    raw = function.get("arguments")
    try:
        arguments: Any = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        arguments = raw
    body = json.dumps({"name": function.get("name"), "arguments": arguments}, ensure_ascii=False)
    return f"{OPEN}\n{body}\n{CLOSE}"


def text_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                  shorthand: bool = False) -> list[dict[str, Any]]:
    """The conversation with tools described in text and tool turns as plain messages."""
    prompt = tools_prompt(tools, shorthand)
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


_FENCE = re.compile(r"```[ \t]*([A-Za-z_][\w-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


def _shorthand_call(text: str, tools: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    fenced = _fence_tools(tools)
    for match in _FENCE.finditer(text):
        label, body = match.group(1).lower(), match.group(2).strip()
        if label in fenced and body:
            rest = (text[: match.start()] + text[match.end():]).strip()
            return rest, {"id": "call_0", "type": "function", "function": {
                "name": fenced[label], "arguments": json.dumps({label: body},
                                                               ensure_ascii=False)}}
    value = _first_object(text)
    names = set(tool_names(tools))
    if isinstance(value, dict) and value.get("name") in names and \
            isinstance(value.get("arguments", {}), (dict, str)):
        raw = value.get("arguments", {})
        arguments = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
        return "", {"id": "call_0", "type": "function",
                    "function": {"name": value["name"], "arguments": arguments}}
    return None


def parse_tool_calls(text: str, tools: list[dict[str, Any]] | None = None
                     ) -> tuple[str, list[dict[str, Any]]]:
    """``(remaining text, OpenAI tool_calls)`` of a reply in the text protocol; with ``tools``,
    a reply without tagged calls is also read for the shorthand (module docstring)."""
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
    if not calls and tools:
        shorthand = _shorthand_call(text, tools)
        if shorthand is not None:
            return shorthand[0], [shorthand[1]]
    rest = _BLOCK.sub("", text).strip() if calls else text
    return rest, calls
