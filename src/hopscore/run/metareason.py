"""MCR's meta-reasoner: its input over several chains, and the reading of its output.

Input (``run.py`` ``_set_entailment_input``; ``mcr-methods-and-feverous-db.md`` A4): the chains
are taken in order. A chain whose first step is a final answer (it answered directly) gives the
fact "<question> <answer>" (the answer keeps its trailing "."); every intermediate step gives
"<sub-question> <intermediate answer>"; final answers of chains with follow-ups are left out.
Nothing is deduplicated: repeats and conflicts between chains are what the meta-reasoner
weighs. In evidence mode each intermediate step gives "<sub-question> | <retrieved snippet>"
instead. The part after the exemplars is ``Context:``, a newline, the evidence facts separated
by blank lines (evidence or both), a blank line and ``Derived facts:`` (both), the QA facts one
per line (qa or both), a blank line, ``Question:`` and the question on its own line, a blank
line, and ``Answer:``.

Output (``_call_gpt_for_entailment_with_batching``, A5): under ``--protocol mcr``, MCR's rule
(:func:`hopscore.run.extract.extract_mcr`): the text after the last case-sensitive
"the answer is:", one trailing "." dropped; no marker, or "unknown" anywhere in the answer, is
an abstention. Under the default protocol the answer is read leniently (any spelling of the
answer line, mapped to the answer kind), and the abstention is the same: nothing read, or
"unknown" in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hopscore.run.extract import Hints, extract_flexible, extract_mcr
from hopscore.run.selfask import Chain

META_MODES = ("qa", "evidence", "both")
#: Where the meta-reasoner's call stops (MCR: its exemplar separator "#").
META_STOP = ["\n#", "\nContext:"]


def qa_facts(chains: Sequence[Chain], question: str) -> list[str]:
    facts: list[str] = []
    for chain in chains:
        for position, step in enumerate(chain.steps):
            if position == 0 and step.final and step.answer:
                facts.append(f"{question} {step.answer}")
            elif not step.final:
                facts.append(f"{step.question} {step.answer}")
    return facts


def evidence_facts(chains: Sequence[Chain], question: str) -> list[str]:
    facts: list[str] = []
    for chain in chains:
        for position, step in enumerate(chain.steps):
            if position == 0 and step.final and step.answer:
                facts.append(f"{question} {step.answer}")
            elif not step.final:
                snippet = step.evidence.line() if step.evidence is not None else ""
                facts.append(f"{step.question} | {snippet}")
    return facts


def meta_context(chains: Sequence[Chain], question: str, mode: str) -> str:
    """The text after ``Context:`` up to and including ``Answer:``."""
    parts: list[str] = []
    if mode in ("evidence", "both"):
        parts.append("\n\n".join(evidence_facts(chains, question)))
    if mode == "both":
        parts.append("\nDerived facts:")
    if mode in ("qa", "both"):
        parts.append("\n".join(qa_facts(chains, question)))
    return "\n".join(parts) + f"\n\nQuestion:\n{question}\n\nAnswer:"


@dataclass(frozen=True, slots=True)
class MetaAnswer:
    answer: str | None
    abstained: bool
    #: the exact reading (MCR's rule) and the lenient one, both kept in the sample row
    strict: str | None
    flexible: str | None


def read_meta(output: str, hints: Hints, protocol: str) -> MetaAnswer:
    exact = extract_mcr(output)
    if protocol == "mcr":
        return MetaAnswer(exact.answer, exact.abstained or exact.answer is None, exact.answer,
                          None)
    flexible = extract_flexible(output, Hints(kind="span"), "the answer is:")
    unknown = flexible is None or "unknown" in flexible.lower()
    mapped = None if unknown else extract_flexible(output, hints, "the answer is:")
    abstained = unknown or mapped is None
    return MetaAnswer(None if abstained else mapped, abstained, exact.answer, flexible)
