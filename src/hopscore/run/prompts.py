"""Prompt templates (Jinja) and few-shot exemplars for model runs.

A template renders the whole conversation. Lines holding only ``[[system]]``, ``[[user]]`` or
``[[assistant]]`` start a message of that role; a template without them is one user message.
The built-in templates are package data: each benchmark's own beside its module (its
``template.jinja``, ``Benchmark.resource``, so a third-party benchmark ships its own), and the
shared ones in ``hopscore/run/templates`` (``mcr.jinja`` for ``--protocol mcr``, the chain
strategies' ``selfask.jinja`` and ``meta.jinja``, macros in ``_common.jinja``). All are
reachable from a user's template as ``builtin/<name>`` (a benchmark's as
``builtin/<benchmark>.jinja``), so an override can ``{% extends "builtin/<benchmark>.jinja" %}``
and replace a block, or ``{% import "builtin/_common.jinja" as common %}``.

Variables: the benchmark's own (``question``, ``paragraphs``, ``table``, ``passages``,
``facts``, ``unit``, ``para``, ``choices``, ``claim``, ``mcr_question``; see each benchmark's
``prompt_variables``), plus ``shots`` (the exemplars, a list of dicts with the same fields and
``reasoning`` and ``answer``), ``documents`` (retrieved ``{id, title, text}``), ``protocol``,
``answer_marker`` and ``benchmark``. An undefined variable is an error, never empty text.

The exemplars are package data too, beside the benchmark's module (its ``shots.json``:
``{"default": [...], "mcr": [...]}``), written for hopscore.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.meta

from hopscore import benchmarks
from hopscore.engine import canonical_json, sha256_text
from hopscore.errors import HopscoreError

BUILTIN_PREFIX = "builtin/"
#: A benchmark's own template and exemplars, beside its module (``Benchmark.resource``).
TEMPLATE_FILE = "template.jinja"
SHOTS_FILE = "shots.json"
ROLES = ("system", "user", "assistant")
_ROLE_LINE = re.compile(r"^\[\[(system|user|assistant)\]\]\s*$")


def _package_source(name: str) -> str | None:
    """A shared template of ``hopscore/run/templates``, else ``<benchmark>.jinja``: the
    benchmark's own template."""
    path = resources.files("hopscore.run") / "templates" / name
    if not path.is_file():
        stem = name.removesuffix(".jinja")
        if stem == name or stem not in benchmarks.names():
            return None
        path = benchmarks.get(stem).resource(TEMPLATE_FILE)
    return path.read_text(encoding="utf-8") if path.is_file() else None


def _builtin_loader() -> jinja2.BaseLoader:
    def load(name: str) -> str | None:
        return _package_source(name[len(BUILTIN_PREFIX):] if name.startswith(BUILTIN_PREFIX)
                               else name)

    return jinja2.FunctionLoader(load)


def _environment(user_dir: Path | None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if user_dir is not None:
        loaders.append(jinja2.FileSystemLoader(str(user_dir)))
    loaders.append(_builtin_loader())
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        autoescape=False,
    )


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A loaded template: renders example variables to chat messages."""

    name: str
    #: sha256 of each template source it uses (itself, and what it extends, includes, imports)
    sources: dict[str, str]
    template: jinja2.Template = field(repr=False, compare=False)

    @property
    def sha256(self) -> str:
        return sha256_text(canonical_json(self.sources))

    @classmethod
    def builtin(cls, name: str) -> PromptTemplate:
        if _package_source(name) is None:
            raise HopscoreError(f"no built-in prompt template {name!r}")
        return cls._load(_environment(None), BUILTIN_PREFIX + name)

    @classmethod
    def from_file(cls, path: Path) -> PromptTemplate:
        if not path.is_file():
            raise HopscoreError(f"{path}: prompt template not found")
        return cls._load(_environment(path.resolve().parent), path.name, label=str(path))

    @classmethod
    def _load(cls, env: jinja2.Environment, name: str, label: str | None = None) -> PromptTemplate:
        try:
            template = env.get_template(name)
            sources = _sources(env, name)
        except jinja2.TemplateSyntaxError as exc:
            raise HopscoreError(
                f"{exc.filename or exc.name or name}:{exc.lineno}: template syntax error: "
                f"{exc.message}"
            ) from None
        except jinja2.TemplateNotFound as exc:
            raise HopscoreError(f"{label or name}: template {exc.name!r} not found") from None
        return cls(label or name, sources, template)

    def render(self, variables: dict[str, Any]) -> list[dict[str, str]]:
        """The chat messages for one example."""
        try:
            text = self.template.render(**variables)
        except jinja2.UndefinedError as exc:
            raise HopscoreError(f"{self.name}: {exc.message} (variables: "
                                f"{', '.join(sorted(variables))})") from None
        except jinja2.TemplateError as exc:
            raise HopscoreError(f"{self.name}: cannot render: {exc}") from None
        return split_messages(text, self.name)


def _sources(env: jinja2.Environment, name: str) -> dict[str, str]:
    """sha256 of every template ``name`` uses, followed through extends/include/import."""
    assert env.loader is not None
    seen: dict[str, str] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        source, _, _ = env.loader.get_source(env, current)
        seen[current] = sha256_text(source)
        for child in jinja2.meta.find_referenced_templates(env.parse(source)):
            if child is not None:
                pending.append(child)
    return dict(sorted(seen.items()))


def split_messages(text: str, name: str) -> list[dict[str, str]]:
    """Split rendered text on ``[[role]]`` lines into messages (none: one user message)."""
    if "[[" not in text:  # no role line: one user message (skips a regex per line)
        if not text.strip():
            raise HopscoreError(f"{name}: the template rendered no message")
        return [{"role": "user", "content": text.strip("\n").strip()}]
    if not any(brk in text for brk in _OTHER_LINE_BREAKS):  # lines end at "\n" only
        return _split_on_newlines(text, name)
    messages: list[dict[str, str]] = []
    role: str | None = None
    lines: list[str] = []

    def close() -> None:
        content = "\n".join(lines).strip("\n")
        if role is None:
            if content.strip():
                messages.append({"role": "user", "content": content.strip()})
            return
        if not content.strip():
            raise HopscoreError(f"{name}: the [[{role}]] message rendered empty")
        messages.append({"role": role, "content": content.strip()})

    for line in text.splitlines():
        match = _ROLE_LINE.match(line.strip())
        if match:
            close()
            role, lines = match.group(1), []
        else:
            lines.append(line)
    close()
    if not messages:
        raise HopscoreError(f"{name}: the template rendered no message")
    if messages[-1]["role"] != "user":
        raise HopscoreError(f"{name}: the last message must be a user message, "
                            f"not {messages[-1]['role']}")
    return messages


#: the line boundaries of str.splitlines besides "\n" (nine `in` tests take a fifth of the time
#: of one regex search for the class)
_OTHER_LINE_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
#: a role marker; it starts a message when the rest of its line is blank
_ROLE_MARK = re.compile(r"\[\[(system|user|assistant)\]\]")


def _split_on_newlines(text: str, name: str) -> list[dict[str, str]]:
    """:func:`split_messages` of text without other line boundaries than "\n": the same
    messages and errors, from the few ``[[role]]`` marks instead of a match per line (a
    message's text is the stretch between two role lines, stripped, as the lines joined and
    stripped)."""
    messages: list[dict[str, str]] = []
    role: str | None = None
    start = 0

    def close(end: int) -> None:
        content = text[start:end].strip()
        if role is None:
            if content:
                messages.append({"role": "user", "content": content})
            return
        if not content:
            raise HopscoreError(f"{name}: the [[{role}]] message rendered empty")
        messages.append({"role": role, "content": content})

    for match in _ROLE_MARK.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        line_end = text.find("\n", match.end())
        if line_end < 0:
            line_end = len(text)
        # a role line is [[role]] between blanks (what _ROLE_LINE.match(line.strip()) accepts)
        if text[line_start:match.start()].strip() or text[match.end():line_end].strip():
            continue
        close(line_start)
        role, start = match.group(1), line_end
    close(len(text))
    if not messages:
        raise HopscoreError(f"{name}: the template rendered no message")
    if messages[-1]["role"] != "user":
        raise HopscoreError(f"{name}: the last message must be a user message, "
                            f"not {messages[-1]['role']}")
    return messages


def builtin_template_name(benchmark: str, protocol: str) -> str:
    return "mcr.jinja" if protocol == "mcr" else f"{benchmark}.jinja"


def load_shots(benchmark: str, protocol: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` built-in exemplars of a benchmark for a protocol."""
    if count <= 0:
        return []
    path = benchmarks.get(benchmark).resource(SHOTS_FILE)
    if not path.is_file():
        raise HopscoreError(f"{benchmark} has no built-in few-shot exemplars")
    data = json.loads(path.read_text(encoding="utf-8"))
    available = data.get(protocol, [])
    if count > len(available):
        raise HopscoreError(f"--shots {count}: {benchmark} has {len(available)} built-in "
                            f"exemplars for the {protocol} protocol")
    shots: list[dict[str, Any]] = available[:count]
    return shots
