"""The verdict reader of FRAMES's rater preset (``judge_rater.txt``): the paper's auto-rater
replies with an explanation and a ``Decision:`` of TRUE or FALSE (Krishna et al. 2024, App.
Fig. 6); its parsing is not specified.

Rule (docs/benchmarks.md, FRAMES): the verdict is the LAST line that starts, after optional
markdown (``#``, ``>``, bullets, ``**``, backticks, quotes), with ``Decision:`` (any case), and
whose value is the whole word TRUE or FALSE (any case, markdown wrappers and trailing
punctuation allowed). TRUE is correct; FALSE, or no such line (a parse failure, counted apart by
the judge's summary), is not. The reasoning is the last ``Explanation:`` text. The reply comes
with any ``<think>`` text already removed.
"""

from __future__ import annotations

import re

from hopscore.benchmarks.judge_presets import JudgeVerdict

_PREFIX = r"^[\s#>*_`\"'\-+•]*"
_DECISION = re.compile(_PREFIX + r"decision[\s*_`\"']*:[\s*_`\"']*(?P<value>[^\n]*)$",
                       re.IGNORECASE | re.MULTILINE)
_EXPLANATION = re.compile(_PREFIX + r"explanation[\s*_`\"']*:(?P<value>[^\n]*)$",
                          re.IGNORECASE | re.MULTILINE)
_WORD = re.compile(r"^[\s*_`\"'\[(]*(true|false)(?![a-z0-9_])[\s*_`\"'\])]*[.!;,]?\s*$",
                   re.IGNORECASE)


def decision(value: str) -> bool | None:
    """True for TRUE, False for FALSE, None for anything else (``TRUE or FALSE`` included)."""
    match = _WORD.match(value)
    return None if match is None else match.group(1).lower() == "true"


def read_verdict(reply: str) -> JudgeVerdict:
    """The verdict of one rater reply (see the module docstring)."""
    verdicts = [v for m in _DECISION.finditer(reply)
                if (v := decision(m.group("value"))) is not None]
    explanations = [m.group("value").strip(" *_`\"'") for m in _EXPLANATION.finditer(reply)]
    return JudgeVerdict(
        correct=bool(verdicts) and verdicts[-1], parse_ok=bool(verdicts),
        extracted_final_answer=None,
        reasoning=explanations[-1] if explanations else None, confidence=None,
        verdict_lines=len(verdicts), conflicting_verdicts=len(set(verdicts)) > 1)
