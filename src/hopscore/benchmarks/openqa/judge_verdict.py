"""The verdict reader of the ``acc_l`` judge preset (``judge_acc_l.txt``): R1-Searcher's ACC_L
protocol, where the judge replies True or False and ACC_L is the share of "True" (their result
files hold exactly "True" or "False"; ``evaluation/metric_calc_gpt_as_judge.py`` does not
aggregate).

Rule: the reply, with surrounding whitespace, markdown (``*``, `````, quotes) and one trailing
``.`` removed, is ``True`` (correct) or ``False`` (not), in any case. Anything else is a parse
failure, counted apart by the judge's summary and graded wrong, as R1-Searcher's share of
"True" counts it. The reply comes with any ``<think>`` text already removed.
"""

from __future__ import annotations

from hopscore.benchmarks.judge_presets import JudgeVerdict

_WRAPPERS = " \t\r\n*_`\"'"


def read_verdict(reply: str) -> JudgeVerdict:
    """The verdict of one True/False reply (see the module docstring)."""
    word = reply.strip(_WRAPPERS).removesuffix(".").strip(_WRAPPERS).lower()
    decided = word in ("true", "false")
    return JudgeVerdict(correct=word == "true", parse_ok=decided, extracted_final_answer=None,
                        reasoning=None, confidence=None, verdict_lines=int(decided))
