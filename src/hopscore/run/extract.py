"""Answer extraction from model output: strict, flexible, and MCR's rule.

* :func:`extract_strict`: the rest of the last line that *starts* with the prompt's answer marker
  (``Answer: Paris``), stripped of whitespace; None when no line does. It measures whether the
  model followed the format, so it forgives nothing else.
* :func:`extract_flexible`: what a careful reader takes as the answer. ``<think>`` blocks are
  dropped; then, in order, the last answer-marker line in any common spelling (``**Answer:**``,
  ``Final answer:``, ``So the answer is``), the last ``\\boxed{...}``, an inline "the answer is
  X", and finally a fallback for the kind of answer (the last yes/no word, choice, label or
  number, or the last line). The value is cleaned (LaTeX and markdown wrappers, quotes, one
  trailing period, a trailing explanation) and mapped to the answer kind: ``yes``/``no``, a
  choice label, a verdict label (supported, refuted, not enough info), or a number with its
  unit that pint can read.
* :func:`extract_mcr`: MCR's exact rule (``official-metrics.md`` §4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopscore.run.numbers import parse_number_answer
from hopscore.text.labels import feverous_label as feverous_label
from hopscore.text.labels import strip_think as strip_think
from hopscore.text.labels import without_think_tags
from hopscore.text.labels import yes_no as yes_no
from hopscore.text.normalize import normalize_answer

SPAN, YESNO, CHOICE, NUMBER, LABEL = "span", "yesno", "choice", "number", "label"
#: a free-text answer kept whole: a span whose parentheses, semicolons and later sentences
#: are part of it, not an explanation to cut ("98 Years (Arlington, TX & Rubik's Cube)")
TEXT = "text"
KINDS = (SPAN, TEXT, YESNO, CHOICE, NUMBER, LABEL)
DEFAULT_MARKER = "Answer:"
MCR_MARKER = "the answer is:"

#: A line that announces the answer, after markdown decoration (#, >, -, *, 1.) is removed.
_MARKER_LINE = re.compile(
    r"^(?:so\s*,?\s*|therefore\s*,?\s*|thus\s*,?\s*)?(?:the\s+|my\s+)?(?:final\s+|short\s+)?"
    r"answer[*_]*\s*(?:is\b[*_]*\s*[:：]?|[:：])[*_]*\s*(?P<value>.*)$",
    re.I,
)
#: A line where the model starts a new (hallucinated) example after answering.
_NEXT_EXAMPLE = re.compile(r"^\s*(?:question|q|claim)\s*[:：]", re.I)
_INLINE = re.compile(r"(?:the\s+)?(?:final\s+)?answer\s+is\s*[:：]?\s*(?P<value>[^\n]+)", re.I)
_DECORATION = re.compile(r"^(?:[#>*_`\-+•]+\s*|\d+[.)]\s+)+")
_WRAPPERS = ("**", "__", "`", "*", "_", '"', "'", "“", "”", "‘", "’", "«", "»")
_EXPLANATION = re.compile(
    r"(?:,?\s+(?:because|due to|as it is|as they are)\s|\s+[-–—]\s|\s+\(|;\s)", re.I
)
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "inc", "ltd", "co", "mt", "no", "ft", "jan",
     "feb", "aug", "sept", "oct", "nov", "dec", "gen", "col", "lt", "sgt", "prof", "rev"}
)  # fmt: skip
_LATEX_TEXT = re.compile(r"\\(?:text|mathrm|textbf|mathbf)\{([^{}]*)\}")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")
_LAST_WORD = re.compile(r"[A-Za-z]+$")
_LABEL_NAME = re.compile(r"SUPPORTS|REFUTES|NOT ENOUGH INFO", re.I)
_YES_NO_WORD = re.compile(r"\b(yes|no|true|false)\b", re.I)


@dataclass(frozen=True, slots=True)
class Hints:
    """What flexible extraction knows about the expected answer."""

    kind: str = SPAN
    #: (label, text) pairs of a multiple-choice question
    choices: tuple[tuple[str, str], ...] = ()
    #: the unit the question asks for, if any; appended to a bare number
    unit: str | None = None


@dataclass(frozen=True, slots=True)
class McrAnswer:
    """MCR's reading of an output: the answer, or an abstention (no marker, or "unknown")."""

    answer: str | None
    abstained: bool


def extract_strict(output: str, marker: str = DEFAULT_MARKER) -> str | None:
    """The rest of the last line starting with ``marker`` (any case), stripped; else None."""
    lowered = marker.lower()
    for line in reversed(output.splitlines()):
        stripped = line.strip()
        if stripped.lower().startswith(lowered):
            return stripped[len(marker):].strip() or None
    return None


def extract_mcr(output: str) -> McrAnswer:
    """MCR's rule: the text after the last case-sensitive ``"the answer is:"``, stripped, one
    trailing "." dropped, newlines removed; abstain when the marker is absent or the answer
    contains "unknown" in any case."""
    if MCR_MARKER not in output:
        return McrAnswer(None, True)
    answer = output.split(MCR_MARKER)[-1].strip()
    if answer.endswith("."):
        answer = answer[:-1]
    answer = answer.replace("\n", "").strip()
    if "unknown" in answer.lower():
        return McrAnswer(answer, True)
    return McrAnswer(answer, False)


def extract_flexible(
    output: str, hints: Hints = Hints(), marker: str = DEFAULT_MARKER
) -> str | None:
    """The answer a careful reader would take from ``output``, mapped to ``hints.kind``."""
    text = strip_think(output)
    if not text.strip():  # the model never left its reasoning: read the reasoning itself
        text = without_think_tags(output)
    lines = _until_next_example(text.splitlines(), marker)
    for value in _candidates(lines, marker):
        mapped = _map(clean(value, cut=hints.kind != TEXT), hints)
        if mapped:
            return mapped
    return _fallback(lines, hints)


def _is_marker_line(line: str, marker: str) -> str | None:
    """The value on an answer-marker line (maybe empty), or None when it is no such line."""
    bare = _undecorate(line)
    custom = marker.strip()
    if custom and bare.lower().startswith(custom.lower()):
        return bare[len(custom):].strip().strip("*_").strip()
    match = _MARKER_LINE.match(bare)
    return match.group("value").strip().strip("*_").strip() if match else None


def _until_next_example(lines: list[str], marker: str) -> list[str]:
    """Cut a run-on output where, after an answer line, the model starts a new "Question:"."""
    answered = False
    for index, line in enumerate(lines):
        if answered and _NEXT_EXAMPLE.match(_undecorate(line)):
            return lines[:index]
        answered = answered or _is_marker_line(line, marker) is not None or bool(
            _INLINE.search(line)
        )
    return lines


def _candidates(lines: list[str], marker: str) -> list[str]:
    """Answer values in order of trust: the last marker line, \\boxed{}, inline 'answer is'."""
    found: list[str] = []
    for index in range(len(lines) - 1, -1, -1):
        value = _is_marker_line(lines[index], marker)
        if value is None:
            continue
        if not value:  # "Answer:" alone: the answer is on the next non-empty line
            value = next((line.strip() for line in lines[index + 1:] if line.strip()), "")
        if value:
            found.append(value)
            break
    text = "\n".join(lines)
    boxed = last_boxed(text)
    if boxed is not None:
        found.append(boxed)
    inline = list(_INLINE.finditer(text))
    if inline:
        found.append(inline[-1].group("value"))
    return found


def _undecorate(line: str) -> str:
    return _DECORATION.sub("", line).strip()


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (nested braces allowed), or None."""
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth = 0
    begin = start + len("\\boxed{")
    for position in range(begin, len(text)):
        char = text[position]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return text[begin:position]
            depth -= 1
    return None


def clean(value: str, *, cut: bool = True) -> str:
    """Unwrap LaTeX and markdown, drop quotes, a trailing period and (``cut``) a trailing
    explanation."""
    value = value.strip()
    boxed = last_boxed(value)
    if boxed is not None:
        value = boxed
    latex = "\\" in value  # every LaTeX rewrite below needs a backslash
    if latex:
        value = _LATEX_TEXT.sub(r"\1", value)
        value = value.replace("\\$", "$").replace("\\%", "%").replace("\\,", "")
    if value.startswith("$") and value.endswith("$") and len(value) > 1 and value.count("$") == 2:
        value = value[1:-1]
    if latex:
        value = value.replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    if cut:
        value = _cut_explanation(value)
    for _ in range(3):  # nested wrappers: **"Paris"**.
        before = value
        value = value.strip().rstrip(".。!").strip()
        for wrapper in _WRAPPERS:
            if len(value) > 2 * len(wrapper) and value.startswith(wrapper) and value.endswith(
                wrapper
            ):
                value = value[len(wrapper): -len(wrapper)]
        value = value.strip("*_`").strip()
        if value == before:
            break
    return value


def _cut_explanation(value: str) -> str:
    """Cut "Paris, because ...", "Paris (the capital)...", "Paris. It is ..." to "Paris"."""
    match = _EXPLANATION.search(value)
    if match and match.start() > 0:
        value = value[: match.start()]
    if "." not in value:
        return value
    for sentence_end in _SENTENCE_END.finditer(value):
        word = _LAST_WORD.findall(value[: sentence_end.start()])
        if word and len(word[0]) > 1 and word[0].lower() not in _ABBREVIATIONS:
            return value[: sentence_end.start()]
    return value


def choice_label(value: str, choices: tuple[tuple[str, str], ...]) -> str | None:
    """The label a value names: "A", "(A)", "A.", "Option A", or exactly one choice's text."""
    if not choices:
        return None
    labels = "|".join(re.escape(label) for label, _ in choices)
    # "A" alone, "A." "A)" "A:" "(A)" "Option A": never "A darker roof" (an article)
    pattern = re.compile(
        rf"^(?:(?i:option|choice|answer)\s*:?\s*\(?(?P<a>{labels})\)?(?:[.):,]|\s|$)"
        rf"|\((?P<b>{labels})\)|(?P<c>{labels})(?:[.):,]|$))"
    )
    stripped = value.strip()
    match = pattern.match(stripped)
    if match:
        return match.group("a") or match.group("b") or match.group("c")
    normalized = normalize_answer(stripped)
    exact = [label for label, text in choices if normalize_answer(text) == normalized]
    if len(exact) == 1:
        return exact[0]
    padded = f" {normalized} "
    named = [label for label, text in choices if f" {normalize_answer(text)} " in padded]
    return named[0] if len(named) == 1 else None


def _map(value: str, hints: Hints) -> str | None:
    if not value:
        return None
    if hints.kind == YESNO:
        return yes_no(value)
    if hints.kind == CHOICE:
        return choice_label(value, hints.choices)
    if hints.kind == LABEL:
        return feverous_label(value)
    if hints.kind == NUMBER:
        return parse_number_answer(value, hints.unit)
    return value


def _fallback(lines: list[str], hints: Hints) -> str | None:
    """No marker anywhere: the last thing in the text that looks like an answer of this kind."""
    filled = [line for line in lines if line.strip()]
    if hints.kind == YESNO:
        words = _YES_NO_WORD.findall("\n".join(filled))
        return yes_no(words[-1]) if words else None
    if hints.kind == NUMBER:
        for line in reversed(filled):
            number = parse_number_answer(line, hints.unit, last=True)
            if number:
                return number
        return None
    if hints.kind == LABEL:
        named = list(_LABEL_NAME.finditer("\n".join(filled)))
        if named:
            return feverous_label(named[-1].group(0))
        return feverous_label(filled[-1]) if filled else None
    for line in reversed(filled):
        if _is_marker_line(line, "") is not None:
            continue  # an answer line with no answer on it (or after it)
        value = clean(_undecorate(line), cut=hints.kind != TEXT)
        if hints.kind == CHOICE:
            label = choice_label(value, hints.choices)
            if label:
                return label
        elif value:
            return value
    return None
