"""Judge prompt templates: the built-in one, user files, placeholder checks, and their hash.

A template has three placeholders, ``{question}``, ``{answer}`` (the answer being graded) and
``{expected_answer}`` (the gold). Filling follows ``str.format`` for every template that
``str.format`` accepts (``{{`` and ``}}`` are literal braces), so a benchmark's own template
gives byte-identical prompts; other single braces (a JSON example, say) are kept as written
instead of failing. Values are inserted in one pass, so an answer that itself contains
``{answer}`` is not filled again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hopscore.engine.types import sha256_text
from hopscore.errors import InputError, Location
from hopscore.files.io import read_text
from hopscore.judge.parse import JudgeVerdict, parse_judge_output, strip_thinking

PLACEHOLDERS = ("question", "answer", "expected_answer")

#: The built-in prompt, written for hopscore. Same four-field reply layout as the BrowseComp
#: family of graders, so the same parser reads both.
DEFAULT_TEMPLATE = """\
You are grading one answer to a question. A reference answer is given; decide whether the \
answer to grade states the same final answer.

Question:
{question}

Answer to grade:
{answer}

Reference answer:
{expected_answer}

Rules:
- Grade only the final answer that the answer to grade commits to. Do not solve the question \
yourself and do not judge the reasoning that led to the answer.
- The answers match when they name the same thing or value. Differences in wording, \
formatting, capitalisation or an added explanation do not matter. For a number, a small \
rounding difference is acceptable.
- They do not match when the final answer is different, missing, only partly right, hedged \
between several options, or cannot be checked against the reference.

Reply with exactly these four lines and nothing else:
extracted_final_answer: <the final answer as stated in the answer to grade, copied exactly; \
None if it states no final answer>
reasoning: <one or two sentences on whether and why the extracted answer matches the reference \
answer>
correct: <yes or no>
confidence: <the confidence the answer to grade states for its final answer, as a percentage \
from 0 to 100; 100 if it states none>
"""

_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


#: The name recorded for the built-in prompt (``--judge-preset builtin``).
BUILTIN = "builtin"


@dataclass(frozen=True, slots=True)
class JudgePrompt:
    """A checked template plus where it came from and the sha256 of its text; ``preset``: the
    judge preset it is or stands in for (``builtin``, ``BENCHMARK/NAME``; None: a user's
    ``--prompt-file`` alone), ``reader``: the module whose ``read_verdict`` reads a reply
    (:mod:`hopscore.benchmarks.judge_presets`; None: the four-field reader)."""

    template: str
    source: str
    sha256: str
    preset: str | None = BUILTIN
    reader: str | None = None

    @staticmethod
    def builtin() -> JudgePrompt:
        return JudgePrompt(DEFAULT_TEMPLATE, BUILTIN, sha256_text(DEFAULT_TEMPLATE))

    @staticmethod
    def from_text(template: str, source: str, *, preset: str | None = None,
                  reader: str | None = None) -> JudgePrompt:
        check_template(template, source)
        return JudgePrompt(template, source, sha256_text(template), preset, reader)

    def read(self, raw: str) -> JudgeVerdict:
        """The verdict of a judge reply: the four-field reader, or the preset's own reader given
        the reply without its thinking text."""
        if self.reader is None:
            return parse_judge_output(raw)
        import importlib

        read_verdict = importlib.import_module(self.reader).read_verdict
        verdict: JudgeVerdict = read_verdict(strip_thinking(raw))
        return verdict

    @staticmethod
    def from_file(path: Path) -> JudgePrompt:
        return JudgePrompt.from_text(read_text(path), str(path))

    def render(self, question: str, answer: str, expected_answer: str) -> str:
        values = {"question": question, "answer": answer, "expected_answer": expected_answer}
        pieces = _pieces(self.template)
        return "".join([piece if index % 2 == 0 else values.get(piece, "{" + piece + "}")
                        for index, piece in enumerate(pieces)])


@lru_cache(maxsize=32)
def _pieces(template: str) -> tuple[str, ...]:
    """``template`` split once: text (``{{`` and ``}}`` already made single braces) at even
    places, a placeholder's name at odd ones; filled in one pass, so an inserted value is never
    read as a placeholder."""
    pieces: list[str] = []
    text: list[str] = []
    start = 0
    for match in _FIELD.finditer(template):
        text.append(template[start:match.start()])
        start = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            text.append(token[0])
        else:
            pieces.append("".join(text))
            pieces.append(match.group(1))
            text = []
    text.append(template[start:])
    pieces.append("".join(text))
    return tuple(pieces)


def check_template(template: str, source: str) -> None:
    """Every placeholder must be present, and no other ``{name}`` may appear (a likely typo)."""
    if not template.strip():
        raise InputError(source, "the judge prompt template is empty")
    found: set[str] = set()
    for number, line in enumerate(template.splitlines(), start=1):
        for match in _FIELD.finditer(line):
            name = match.group(1)
            if name is None:
                continue
            if name not in PLACEHOLDERS:
                raise InputError(
                    Location(source, line=number),
                    f"unknown placeholder {{{name}}}; a judge template may use "
                    + ", ".join("{" + p + "}" for p in PLACEHOLDERS)
                    + " (write {{ and }} for literal braces)",
                )
            found.add(name)
    missing = [p for p in PLACEHOLDERS if p not in found]
    if missing:
        raise InputError(
            source,
            "the judge prompt template lacks " + ", ".join("{" + p + "}" for p in missing),
        )
