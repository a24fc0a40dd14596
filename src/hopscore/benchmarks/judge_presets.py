"""The judge presets a benchmark declares (:attr:`Benchmark.judge_presets`), and the verdict
record every judge reply becomes.

A preset is a prompt template shipped beside the benchmark's module (package data, read
through :meth:`Benchmark.resource`) plus how a reply to it is read: the judge's four-field
reader (``extracted_final_answer`` / ``reasoning`` / ``correct`` / ``confidence``,
:func:`hopscore.judge.parse.parse_judge_output`), or the ``read_verdict(reply)`` function of a
module of the benchmark's own (:attr:`JudgePresetSpec.reader`), given the reply with any
``<think>`` text already removed and returning a :class:`JudgeVerdict`. The judge machinery
(:mod:`hopscore.judge.presets`) finds, checks and pins them; it never names a benchmark.

:class:`JudgeVerdict` is defined here, below the judge, so that a benchmark's reader can make
one without importing the judge (which imports the benchmarks); :mod:`hopscore.judge.parse`
names it too.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """What a judge reply says. ``parse_ok`` is whether a verdict was found at all."""

    correct: bool
    parse_ok: bool
    extracted_final_answer: str | None
    reasoning: str | None
    confidence: float | None
    #: how many lines gave a verdict, and whether they disagreed
    verdict_lines: int = 0
    conflicting_verdicts: bool = False


@dataclass(frozen=True, slots=True)
class JudgePresetSpec:
    """One named judge preset of a benchmark.

    ``template``: the file name of the prompt template among the package data beside the
    benchmark's module (placeholders ``{question}``, ``{answer}``, ``{expected_answer}``, as for
    ``--prompt-file``). ``reader``: the module whose ``read_verdict(reply: str) ->
    JudgeVerdict`` reads a reply, or None for the judge's four-field reader. ``about``: one
    line for ``--help`` and the docs.
    """

    template: str
    reader: str | None = None
    about: str = ""
