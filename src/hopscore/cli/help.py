"""``--help`` for every command, readable in full at any width.

typer's own rendering keeps the hand breaks of a help text (lines end in orphan words at 80
columns), cuts option help with an ellipsis when the option column is wide, reads ``[local]``
as rich markup and shows ``<bool>`` after flags. This module renders the same parts (usage,
description, argument, option and command panels, examples) so that nothing is lost:

* a help text is paragraphs: single line breaks inside a paragraph are joined and the paragraph
  is wrapped to the terminal; a paragraph whose lines are indented is kept line by line;
* every text is plain (``[`` is never markup; a ``\\[`` written for rich is read as ``[``);
* an option is ``--name, -n VALUE``: a flag has no value; a required option is marked ``*``
  and says ``[required]``; its help, env var, default and range wrap in the help column, and an
  option name too long for the name column gets its own line with its help below;
* the ``Examples:`` paragraph of a description is a list of commands, each wrapped like a shell
  command (``\\`` at the end of a continued line), so it can be copied as it is.

Loaded only when ``--help`` is asked for.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.text import Text

#: the option-name column takes at most this share of the panel's width
NAME_SHARE = 0.36
MIN_HELP_WIDTH = 24
EXAMPLES = "Examples:"
#: panels that several commands share come in this order (others after them, as declared)
PANEL_ORDER = ("Model", "Examples and prompt", "Retrieval", "Output", "Requests (advanced)",
               "Intervals and clusters", "Tests")
#: a panel titled "... (hopscore run NAME)" holds options of that benchmark only: folded into
#: one line unless NAME (or one of its other names, Benchmark.also_called) is on the command line
_FOR_ONE = re.compile(r"\(hopscore \w+ ([\w-]+)\)$")
#: a line ``{benchmark examples: hopscore score}`` of a help text or epilog stands for the
#: examples the benchmarks declare for that command (Benchmark.help_examples), each a paragraph
#: indented as the line is; ``{benchmark titles: qa}`` for the titles of the benchmarks a model
#: runs on that way (Benchmark.runner), in registry order; ``{benchmark titles reading:
#: --tables-dir}`` (in an option's help) for the titles of the benchmarks that read that option
#: of hopscore run (Benchmark.reads_run_option); ``{benchmark short titles: agent}`` for their
#: abbreviations (Benchmark.short_title, else the title); ``{benchmark suite titles}``,
#: ``{benchmark suite layouts}`` and ``{benchmark suite count}`` for the benchmarks of hopscore
#: suite mcr in table order: how it names them, where their gold lies (Benchmark.suite_title,
#: suite_layout), how many they are, in words; ``{benchmark suite presets}`` for the named
#: suites of hopscore suite preset (Benchmark.suite_presets)
_DECLARED_EXAMPLES = re.compile(r"^([ \t]*)\{benchmark examples: ([\w -]+)\}[ \t]*$", re.M)
_DECLARED_TITLES = re.compile(r"\{benchmark (short )?titles: (\w+)\}")
_DECLARED_READERS = re.compile(r"\{benchmark titles reading: (--[\w-]+)\}")
#: every benchmark's name, built-in and plugin (read only when the help is)
_DECLARED_NAMES = "{benchmark names}"
_DECLARED_SUITE = re.compile(r"\{benchmark suite (titles|layouts|count|presets)\}")
#: a count of benchmarks in a help text, in words (beyond: digits)
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve")
STYLE_OPTION = "bold cyan"
STYLE_SWITCH = "bold green"
STYLE_METAVAR = "bold yellow"
STYLE_DIM = "dim"
STYLE_REQUIRED = "red"
_OPTION_WORD = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


@dataclass(frozen=True)
class Row:
    """One line of a panel: the marker (``*`` for required), the name part, and the help."""

    marker: str
    name: Text
    help: Text


def paragraphs(text: str) -> list[str]:
    """The paragraphs of a help text, each with its hand line breaks joined, except an
    indented (literal) paragraph, whose lines are kept."""
    text = inspect.cleandoc(text or "").partition("\f")[0].replace("\\[", "[")
    out = []
    for block in re.split(r"\n\s*\n", text):
        if not block.strip():
            continue
        lines = block.split("\n")
        if block.startswith("\b") or any(line.startswith((" ", "\t")) for line in lines[1:]) \
                or lines[0].startswith((" ", "\t")):
            out.append(block.lstrip("\b\n"))
        else:
            out.append(" ".join(line.strip() for line in lines))
    return out


def _highlight(text: Text) -> Text:
    text.highlight_regex(_OPTION_WORD, STYLE_OPTION)
    return text


def _metavar(param: Any, ctx: Any) -> str:
    """The value placeholder of an option or argument ("" for a flag)."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return ""
    if param.metavar:
        return str(param.metavar)
    kind = getattr(param.type, "name", "text")
    choices = getattr(param.type, "choices", None)
    if choices:
        return "|".join(str(c) for c in choices)
    if kind in ("int", "integer", "int range", "integer range"):
        return "INTEGER"
    if kind in ("float", "float range"):
        return "NUMBER"
    if kind in ("str", "text", "string"):
        return "TEXT"
    return kind.upper()


def _suffix(param: Any, ctx: Any) -> list[str]:
    """What follows an option's help: env var, default, range, required."""
    parts = []
    envvar = getattr(param, "envvar", None)
    if envvar and getattr(param, "show_envvar", False):
        parts.append("env var: " + (envvar if isinstance(envvar, str) else ", ".join(envvar)))
    if hasattr(param, "_extract_default_help_str"):
        default = param._extract_default_help_str(ctx=ctx)
        show_is_str = isinstance(param.show_default, str)
        if show_is_str or (default is not None and (param.show_default or ctx.show_default)):
            shown = param._get_default_string(ctx=ctx, show_default_is_str=show_is_str,
                                              default_value=default)
            if shown and not (getattr(param, "is_flag", False) and not param.secondary_opts
                              and not default):
                parts.append(f"default: {shown}")
    describe = getattr(param.type, "_describe_range", None)
    if describe is not None and not getattr(param, "count", False):
        parts.append(describe())
    if param.required:
        parts.append("required")
    return parts


def _param_row(param: Any, ctx: Any) -> Row:
    is_argument = param.param_type_name == "argument"
    name = Text()
    if is_argument:
        name.append(str(param.metavar or param.name).upper(), STYLE_METAVAR)
    else:
        longs = [o for o in param.opts if o.startswith("--")]
        shorts = [o for o in param.opts if not o.startswith("--")]
        seconds = list(getattr(param, "secondary_opts", ()))
        for i, opt in enumerate(longs):
            name.append(", " if i else "")
            name.append(opt + ("/" + seconds[i] if i < len(seconds) else ""), STYLE_OPTION)
        for opt in shorts:
            name.append(", " if len(name) else "")
            name.append(opt, STYLE_SWITCH)
        metavar = _metavar(param, ctx)
        if metavar:
            name.append(" " + metavar, STYLE_METAVAR)
    text = Text(" ".join(paragraphs(getattr(param, "help", None) or "")))
    _highlight(text)
    for part in _suffix(param, ctx):
        text.append((" [" if text.plain else "[") + part + "]",
                    STYLE_REQUIRED if part == "required" else STYLE_DIM)
    return Row("*" if param.required else "", name, text)


def _wrap(text: Text, width: int, console: Console) -> list[Text]:
    if not text.plain:
        return [Text()]
    lines = text.wrap(console, max(1, width), overflow="fold")
    return [line.copy() for line in lines]


def _name_width(lengths: list[int], cap: int) -> int:
    """The name column: as wide as the names that fit under ``cap``, except that a few much
    longer names (beyond the 85th percentile plus 6) get their own lines instead of widening
    the column for every row."""
    fitting = sorted(n for n in lengths if n <= cap) or [cap]
    if not lengths:
        return 0
    ordered = sorted(lengths)
    typical = ordered[min(len(ordered) - 1, int(0.85 * len(ordered)))] + 6
    within = [n for n in fitting if n <= typical]
    return max(within) if within else max(fitting)


def _panel(title: str, rows: list[Row], console: Console, width: int) -> Panel:
    """Rows as two columns (name, help) inside a box; a name too long for its column gets
    its own line with the help below it."""
    inner = width - 4  # the box's two borders and one space of padding on each side
    marker = 2 if any(row.marker for row in rows) else 0
    name_width = _name_width([len(row.name.plain) for row in rows],
                             max(8, int(inner * NAME_SHARE)))
    if inner - marker - name_width - 2 < MIN_HELP_WIDTH:
        name_width = max(0, inner - marker - 2 - MIN_HELP_WIDTH)
    help_width = inner - marker - name_width - 2
    lines: list[Text] = []
    for row in rows:
        head = Text()
        if marker:
            head.append(row.marker.ljust(marker), STYLE_REQUIRED)
        wrapped = _wrap(row.help, help_width, console)
        if len(row.name.plain) <= name_width:
            head.append_text(row.name)
            head.append(" " * (name_width - len(row.name.plain) + 2))
            head.append_text(wrapped[0])
            lines.append(head)
            rest = wrapped[1:]
        else:
            for k, piece in enumerate(_wrap(row.name, inner - marker, console)):
                line = head if k == 0 else Text(" " * marker)
                line.append_text(piece)
                lines.append(line)
            rest = wrapped if row.help.plain else []
        indent = " " * (marker + name_width + 2)
        for piece in rest:
            line = Text(indent)
            line.append_text(piece)
            lines.append(line)
    for line in lines:
        line.no_wrap = True
        line.overflow = "fold"
    return Panel(Group(*lines), title=title, title_align="left", border_style=STYLE_DIM,
                 padding=(0, 1), width=width)


def shell_lines(command: str, width: int) -> list[str]:
    """A command wrapped as a shell would read it: an option stays with its value, lines break
    between them, every continued line ends in ``\\`` and the next is indented four spaces."""
    units: list[str] = []
    for word in command.split():
        if units and not word.startswith("-") and units[-1].startswith("-") \
                and " " not in units[-1]:
            units[-1] += " " + word  # the option's value
        else:
            units.append(word)
    lines: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current} {unit}" if current else unit
        if current.strip() and len(candidate) > width - 2:  # room for " \\"
            lines.append(current + " \\")
            current = "    " + unit
        else:
            current = candidate
    lines.append(current)
    return lines


def _examples(block: list[str], width: int) -> Text:
    out = Text()
    for paragraph in block:
        for line in paragraph.split("\n"):
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                for piece in textwrap.wrap(stripped, width - 2) or [""]:
                    out.append("  " + piece + "\n", STYLE_DIM)
                continue
            for piece in shell_lines(stripped, width - 2):
                out.append("  " + piece + "\n")
    out.rstrip()
    return _highlight(out)


def _usage(obj: Any, ctx: Any) -> Text:
    pieces = [*ctx.command_path.split(), "[OPTIONS]"]
    for param in obj.get_params(ctx):
        if param.param_type_name == "argument":
            name = str(param.metavar or param.name).upper()
            if param.nargs == -1:
                name += "..."
            pieces.append(name if param.required else f"[{name}]")
    if hasattr(obj, "list_commands"):
        pieces += ["COMMAND", "[ARGS]..."]
    text = Text("Usage: ", "yellow")
    text.append(" ".join(pieces), "bold")
    return text


def split_examples(parts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(paragraphs before ``Examples:``, the indented example paragraphs after it, the
    paragraphs after those)."""
    if EXAMPLES not in parts:
        return parts, [], []
    index = parts.index(EXAMPLES)
    end = index + 1
    while end < len(parts) and parts[end].startswith((" ", "\t")):
        end += 1
    return parts[:index], parts[index + 1:end], parts[end:]


def _description(text: str) -> tuple[list[Any], list[str], list[str]]:
    """The description's renderables (first paragraph plain, the others dim), the paragraphs
    of its Examples block and the paragraphs after it."""
    parts, examples, after = split_examples(paragraphs(text))
    out: list[Any] = []
    for i, paragraph in enumerate(parts):
        literal = "\n" in paragraph
        body = Text(textwrap.dedent(paragraph) if literal else paragraph,
                    style="" if i == 0 else STYLE_DIM)
        _highlight(body)
        if literal:
            body.no_wrap = False
        out.append(Padding(body, (0, 1, 1, 1)))
    return out, examples, after


def render(obj: Any, ctx: Any, console: Console | None = None) -> None:
    """Print the help of a command or group (``obj``) in context ``ctx``."""
    from typer import rich_utils

    console = console or rich_utils._get_rich_console()
    width = console.width
    console.print(Padding(_usage(obj, ctx), (1, 1, 1, 1)))
    described, examples, after = _description(obj.help or "")
    for piece in described:
        console.print(piece)
    panels: dict[str, list[Row]] = {}
    arguments: dict[str, list[Row]] = {}
    for param in obj.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        title = getattr(param, "rich_help_panel", None)
        if param.param_type_name == "argument":
            arguments.setdefault(title or "Arguments", []).append(_param_row(param, ctx))
        else:
            panels.setdefault(title or "Options", []).append(_param_row(param, ctx))
    ordered = [*arguments.items()]
    if "Options" in panels:
        ordered.append(("Options", panels.pop("Options")))
    rank = {title: i for i, title in enumerate(PANEL_ORDER)}
    ordered += sorted(panels.items(), key=lambda item: (
        rank.get(item[0], len(rank)) + (1 if _FOR_ONE.search(item[0]) else 0)))
    words = {w.lower() for w in ctx.meta.get("hopscore.words", ())}
    for title, rows in ordered:
        only = _FOR_ONE.search(title)
        if only and not words & _names_of(only.group(1)):
            # options of one benchmark only (the agent's): one line saying where they are
            rows = [Row("", Text(f"{len(rows)} options"), _highlight(Text(
                f"Only for {only.group(1)}: hopscore {ctx.info_name} {only.group(1)} --help "
                "lists them.")))]
        console.print(_panel(title, rows, console, width))
    if hasattr(obj, "list_commands"):
        by_panel: dict[str, list[Row]] = {}
        for name in obj.list_commands(ctx):
            command = obj.get_command(ctx, name)
            if command is None or command.hidden:
                continue
            summary = command.short_help or (paragraphs(command.help or "") or [""])[0]
            title = getattr(command, "rich_help_panel", None) or "Commands"
            if "{benchmark " in title:  # a panel named after what the benchmarks declare
                title = with_declared(title)
            by_panel.setdefault(title, []).append(
                Row("", Text(name, STYLE_OPTION), _highlight(Text(summary))))
        for title, rows in by_panel.items():
            console.print(_panel(title, rows, console, width))
    before, more, later = split_examples(paragraphs(obj.epilog or ""))
    examples += more
    if examples:
        console.print(Padding(Text(EXAMPLES, "bold"), (1, 1, 0, 1)))
        console.print(Padding(_examples(examples, width - 2), (0, 1, 0, 1)))
    for paragraph in [*after, *before, *later]:
        console.print(Padding(_highlight(Text(paragraph, STYLE_DIM)), (1, 1, 0, 1)))
    console.print()


def _names_of(name: str) -> set[str]:
    """A benchmark's name and the other names the command line takes for it."""
    from hopscore import benchmarks

    if name not in benchmarks.names():
        return {name}
    return {name, *benchmarks.get(name).also_called}


def with_declared(text: str) -> str:
    """A help text or epilog (or an option's or argument's help, a panel's title) with what the
    benchmarks declare put in its placeholders (:data:`_DECLARED_EXAMPLES`,
    :data:`_DECLARED_TITLES`, :data:`_DECLARED_READERS`, :data:`_DECLARED_SUITE`): the command
    line's own help names no benchmark."""
    from hopscore import benchmarks

    declared = [benchmarks.get(name) for name in benchmarks.names()]

    def examples(match: re.Match[str]) -> str:
        indent, command = match.group(1), match.group(2).strip()
        lines = [example for bench in declared
                 for example in bench.help_examples.get(command, ())]
        return "\n\n".join(indent + line for line in lines)

    def titles(match: re.Match[str]) -> str:
        short, runner = match.group(1), match.group(2)
        return ", ".join((short and bench.short_title) or bench.title for bench in declared
                         if bench.runner == runner)

    def readers(match: re.Match[str]) -> str:
        return ", ".join(bench.title for bench in declared
                         if bench.reads_run_option(match.group(1))) or "no benchmark"

    text = _DECLARED_TITLES.sub(titles, _DECLARED_EXAMPLES.sub(examples, text))
    text = _DECLARED_READERS.sub(readers, text).replace(_DECLARED_NAMES,
                                                          ", ".join(benchmarks.names()))
    return _DECLARED_SUITE.sub(_suite, text) if _DECLARED_SUITE.search(text) else text


def _suite(match: re.Match[str]) -> str:
    """The benchmarks of ``hopscore suite mcr``: their names, where their gold lies, or how many
    they are (:data:`_DECLARED_SUITE`)."""
    from hopscore.run.suite import described

    if match.group(1) == "presets":
        from hopscore.run.suite_presets import described as presets

        return "; ".join(presets()) or "none is declared"
    found, asked = described(), match.group(1)
    if asked == "count":
        return NUMBER_WORDS[len(found)] if len(found) < len(NUMBER_WORDS) else str(len(found))
    if asked == "layouts":
        return "; ".join(layout for _, layout in found)
    return ", ".join(title for title, _ in found)
