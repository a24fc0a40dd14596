"""Read a judge's four-field reply the way a careful human would.

Rules (the README's "LLM judge" section states them for users):

* Text inside ``<think>...</think>`` (or ``<thinking>``) is ignored; so is everything before an
  orphan ``</think>`` (servers that strip the opening tag) and after an unclosed ``<think>``.
* A *label line* starts, after optional heading marks (``#``), block quotes (``>``), bullets
  (``-``, ``*``, ``+``, ``•``, ``1.``) and markdown wrappers (``**``, ``*``, ``__``, ``_``,
  backticks, quotes, ``[``), with a field name and a colon: ``extracted_final_answer``,
  ``correct_answer``, ``reasoning``, ``correct``, ``confidence`` (any case; spaces may stand for
  underscores).
* The verdict is the LAST ``correct:`` label line whose value, unwrapped, is the whole word
  ``yes`` or ``no``, optionally followed by punctuation and more text (``yes.``, ``no (the years
  differ)``). ``correct: yesterday``, ``correct: Note that ...``, ``incorrect: no`` and a
  ``correct: no`` in the middle of a sentence are not verdicts.
* Confidence is the number on the last ``confidence:`` label line that has one (``85``,
  ``85%``, ``72.5 %``); no scaling, no range check (``0.9`` stays 0.9). None when absent.
* The extracted answer and the reasoning run from their (last) label to the next label line.
* No verdict: ``parse_ok`` is false and ``correct`` is false.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hopscore.benchmarks.judge_presets import JudgeVerdict as JudgeVerdict

_THINK_BLOCK = re.compile(r"<(think|thinking)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think(?:ing)?\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?\b[^>]*>", re.IGNORECASE)

_LINE_PREFIX = re.compile(r"^(?:\s*(?:#{1,6}\s*|>\s?|[-+•]\s+|\*\s+|\d{1,3}[.)]\s+))*")
_WRAP = "*_`\"'“”‘’"
_WRAPPERS = (("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("`", "`"), ('"', '"'),
             ("'", "'"), ("“", "”"), ("‘", "’"))
_LABEL_LINE = re.compile(
    r"^(?P<pre>[" + re.escape(_WRAP) + r"\[]*)\s*"
    r"(?P<label>[A-Za-z][A-Za-z_ ]{0,40}?)"
    r"\s*(?P<mid>[" + re.escape(_WRAP) + r"\]]*)\s*:"
    r"(?P<value>.*)$"
)
LABELS = ("extracted_final_answer", "correct_answer", "reasoning", "correct", "confidence")
_VERDICT = re.compile(r"^(yes|no)(?![A-Za-z0-9_])(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_NUMBER = re.compile(r"^[+]?(\d+(?:\.\d*)?|\.\d+)\s*%?")
_TRAILING_OK = re.compile(r"^\s*(?:$|[.,;:!?)\]\-–—(/])")


@dataclass(frozen=True, slots=True)
class _Field:
    label: str
    value: str
    line: int


def strip_thinking(text: str) -> str:
    """Remove reasoning-model thinking: closed blocks, an orphan close, an unclosed open."""
    if "<" not in text:  # no tag (every pattern starts with "<"): three searches saved
        return text
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    opened = _THINK_OPEN.search(text)
    if opened:
        text = text[: opened.start()]
    return text


def unwrap(value: str) -> str:
    """Strip whitespace and markdown/quote wrappers around a value (``**Paris**`` -> Paris)."""
    value = value.strip()
    while len(value) >= 2:
        for left, right in _WRAPPERS:
            inner = len(value) - len(left) - len(right)
            if inner > 0 and value.startswith(left) and value.endswith(right):
                value = value[len(left): -len(right)].strip()
                break
        else:
            break
    return value


def label_of(line: str) -> tuple[str, str] | None:
    """``(field name, raw value)`` when ``line`` is a label line of a known field, else None."""
    body = _LINE_PREFIX.sub("", line.strip(), count=1)
    match = _LABEL_LINE.match(body)
    if match is None:
        return None
    label = match.group("label").strip().lower().replace(" ", "_")
    if label not in LABELS:
        return None
    value = match.group("value")
    opener = match.group("pre").strip("[")
    if opener and not match.group("mid"):
        closer = opener[::-1]
        if value.startswith(closer):  # **label:** value
            value = value[len(closer):]
        elif value.rstrip().endswith(closer):  # **label: value**
            value = value.rstrip()[: -len(closer)]
    return label, value


def _fields(text: str) -> list[_Field]:
    """Every label line with the text that follows it up to the next label line."""
    fields: list[_Field] = []
    lines = text.splitlines()
    current: tuple[str, list[str], int] | None = None
    for number, line in enumerate(lines):
        found = label_of(line)
        if found is not None:
            if current is not None:
                fields.append(_Field(current[0], "\n".join(current[1]), current[2]))
            current = (found[0], [found[1]], number)
        elif current is not None:
            current[1].append(line)
    if current is not None:
        fields.append(_Field(current[0], "\n".join(current[1]), current[2]))
    return fields


def verdict_word(value: str) -> bool | None:
    """True for yes, False for no, None when the value is not a whole-word yes/no."""
    first_line = value.strip().splitlines()[0] if value.strip() else ""
    body = first_line.lstrip(_WRAP + "([ \t")
    match = _VERDICT.match(body)
    if match is None:
        return None
    rest = match.group("rest").lstrip(_WRAP)
    if not _TRAILING_OK.match(rest):
        return None
    return match.group(1).lower() == "yes"


def confidence_value(value: str) -> float | None:
    body = value.strip().lstrip(_WRAP + "([ \t")
    match = _NUMBER.match(body)
    return float(match.group(1)) if match else None


def _text_field(fields: list[_Field], label: str) -> str | None:
    for field in reversed(fields):
        if field.label == label:
            return unwrap(field.value)
    return None


def parse_judge_output(raw: str) -> JudgeVerdict:
    """Parse a judge reply; see the module docstring for the rules."""
    fields = _fields(strip_thinking(raw))
    verdicts = [
        v for f in fields if f.label == "correct" if (v := verdict_word(f.value)) is not None
    ]
    confidences = [
        c for f in fields if f.label == "confidence" if (c := confidence_value(f.value)) is not None
    ]
    return JudgeVerdict(
        correct=bool(verdicts) and verdicts[-1],
        parse_ok=bool(verdicts),
        extracted_final_answer=_text_field(fields, "extracted_final_answer"),
        reasoning=_text_field(fields, "reasoning"),
        confidence=confidences[-1] if confidences else None,
        verdict_lines=len(verdicts),
        conflicting_verdicts=len(set(verdicts)) > 1,
    )


_REFERENCE_VERDICT = re.compile(r"correct:\s*(yes|no)", re.IGNORECASE)


def reference_verdict(raw: str) -> tuple[bool, bool]:
    """``(correct, parse_ok)`` as the agent benchmark's reference reads a reply (spec §7).

    Double asterisks are removed, then the FIRST ``correct:`` anywhere followed by optional
    whitespace and yes/no decides, with no line anchor and no word boundary. Kept only to report
    rows where the robust reading differs from the reference one.
    """
    match = _REFERENCE_VERDICT.search(raw.replace("**", ""))
    if match is None:
        return False, False
    return match.group(1).lower() == "yes", True


#: What a provider's error notice says (an overloaded or rate-limited upstream, a gateway that
#: timed out), as some gateways send it as a 200 reply's text instead of an error status.
_PROVIDER_ERROR = re.compile(
    r"\b(?:overloaded|over\s+capacity|at\s+capacity|rate[\s_-]?limit\w*|too\s+many\s+requests|"
    r"(?:temporarily|service|currently)\s+unavailable|try\s+again|please\s+retry|timed\s+out|"
    r"quota\s+exceeded|internal\s+server\s+error|bad\s+gateway|gateway\s+time-?out|"
    r"upstream\s+(?:connect\s+)?error)\b",
    re.IGNORECASE,
)
#: Longer replies are never taken for a provider's error notice.
MAX_NOTICE_CHARS = 600


def provider_error(raw: str) -> str | None:
    """The reply itself when a judge reply that gave no verdict reads as a provider's error
    notice (short, no label line, and it says overloaded, rate limit, unavailable, try again,
    ...), else None. Such a reply is a failed request, never a verdict."""
    text = strip_thinking(raw).strip()
    if not text or len(text) > MAX_NOTICE_CHARS or _fields(text):
        return None
    if _PROVIDER_ERROR.search(text) is None:
        return None
    return " ".join(text.split())[:200]
