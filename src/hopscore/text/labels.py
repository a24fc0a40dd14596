"""Reading the answer a reply gives: dropping reasoning blocks, yes/no, claim-verification
verdicts (SUPPORTS / REFUTES / NOT ENOUGH INFO).

Pure helpers shared by the benchmarks (reading a harness's replies) and by answer extraction
(:mod:`hopscore.run.extract`, which re-exports them).
"""

from __future__ import annotations

import re

_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1\s*>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</(?:think|thinking|reasoning)\s*>", re.I)
_THINK_OPEN = re.compile(r"<(?:think|thinking|reasoning)>", re.I)
_YES_NO_ANSWERS = frozenset({"yes", "no", "true", "false"})
_LABEL_WORDS = (
    ("NOT ENOUGH INFO", re.compile(
        r"not enough info|\bnei\b|insufficient|cannot be (?:determined|verified)|"
        r"can't be (?:determined|verified)|not enough (?:evidence|information)|undetermined|"
        r"\bunknown\b|\bunverifiable\b", re.I)),
    ("REFUTES", re.compile(
        r"\brefute|\bfalse\b|\bno\b|\bincorrect\b|\bcontradict|\bwrong\b|\bnot\s+support|"
        r"\bunsupported", re.I)),
    ("SUPPORTS", re.compile(r"\bsupport|\btrue\b|\byes\b|\bcorrect\b|\bconfirm", re.I)),
)  # fmt: skip


def strip_think(text: str) -> str:
    """Drop ``<think>...</think>`` blocks, everything before an orphan closing tag, and an
    unclosed block to the end."""
    if "<" not in text:  # no tag (every pattern starts with "<"): three searches saved
        return text
    text = _THINK_BLOCK.sub("", text)
    closers = list(_THINK_CLOSE.finditer(text))
    if closers:
        text = text[closers[-1].end():]
    opener = _THINK_OPEN.search(text)
    if opener:
        text = text[: opener.start()]
    return text


def without_think_tags(text: str) -> str:
    """The text with its ``<think>`` / ``</think>`` tags removed and what they held kept."""
    return _THINK_OPEN.sub("", _THINK_CLOSE.sub("", text))


def yes_no(value: str) -> str | None:
    """"yes"/"no" when the value starts with yes/no/true/false (or names only one of them)."""
    words = re.findall(r"[A-Za-z]+", value.lower())
    if words and words[0] in ("yes", "true"):
        return "yes"
    if words and words[0] in ("no", "false"):
        return "no"
    named = {("yes" if w in ("yes", "true") else "no") for w in words if w in _YES_NO_ANSWERS}
    return named.pop() if len(named) == 1 else None


def verdict_label(value: str) -> str | None:
    """SUPPORTS / REFUTES / NOT ENOUGH INFO from a label or a yes/no/true/false answer."""
    upper = value.strip().upper().replace("_", " ")
    for label, _ in _LABEL_WORDS:
        if upper == label:
            return label
    for label, pattern in _LABEL_WORDS:
        if pattern.search(value):
            return label
    return None


#: The former name of :func:`verdict_label`, still imported by :mod:`hopscore.run.extract`.
feverous_label = verdict_label
