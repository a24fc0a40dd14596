"""Self-ask chains with retrieval for each follow-up question, as MCR's released code makes them.

MCR (``oriyor/reasoning-on-cots``, accessor ``gpt_accessor_with_retrieval_context_first``;
``mcr-methods-and-feverous-db.md`` A1-A3) writes a chain in this text contract::

    Context1: <snippet for the question>
    Context2: <snippet for the first follow-up>
    Question: <question>
    Are follow up questions needed here: Yes.
    Follow up: <sub-question>
    Intermediate answer: <answer>
    ...
    So the final answer is: <answer>

and builds it in at most :data:`MAX_CALLS` model calls. Every call sees the exemplars, then all
contexts so far, the question, the fixed "Yes." line and the chain accepted so far. From the
first call only the text before its first "Intermediate answer:" is kept (the first follow-up;
the model's own answer to it is discarded); from each later call, the text up to and including
the next complete "Follow up: ..." line. When the kept text asks a follow-up, the retriever's
snippet for it becomes the next context, so the next call answers it with that evidence at the
top. The chain ends when a call gives "So the final answer is:" and no further follow-up; a
chain still open after the last call has no answer.

Chat models do not continue raw text, so each call asks the model to continue the last
example; its reply is read after a light cleanup (:func:`clean_reply`): markdown emphasis at the
start of a line and the letter case of the line prefixes are fixed, trailing spaces dropped, and
lines that restate the header or the accepted chain are skipped. Generation stops at
"\\nIntermediate answer:" (what MCR cuts at anyway), a new "Question:" or an exemplar
separator "#".

Parsing (:func:`parse_steps`) is MCR's ``format_decompsition_string``: a "Follow up:" line
(also "Knowledge Follow up:", "Reasoning Follow up:") sets the pending question, an
"Intermediate answer:" line with a pending question emits a step, a "So the final answer is:"
line emits a final step; the text after a prefix is kept as it is. A chain's answer
(:func:`chain_answer`) is its last step's final answer minus one trailing ".".
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

FOLLOW_UP = "Follow up: "
KNOWLEDGE_FOLLOW_UP = "Knowledge Follow up: "
REASONING_FOLLOW_UP = "Reasoning Follow up: "
INTERMEDIATE = "Intermediate answer: "
FINAL = "So the final answer is: "
QUESTION = "Question: "
NEEDED = "Are follow up questions needed here: Yes."
#: MCR's budget of model calls per chain.
MAX_CALLS = 5
#: Where a call may stop: MCR keeps nothing after these anyway.
CHAIN_STOP = ["\nIntermediate answer:", "\nQuestion:", "\n#"]
_FOLLOW_UP_LINE = re.compile(r"Follow up:.*(?:\n|$)")
_PREFIXES = (
    ("knowledge follow up:", KNOWLEDGE_FOLLOW_UP),
    ("reasoning follow up:", REASONING_FOLLOW_UP),
    ("follow up:", FOLLOW_UP),
    ("follow-up:", FOLLOW_UP),
    ("intermediate answer:", INTERMEDIATE),
    ("so the final answer is:", FINAL),
)
_DECORATION = re.compile(r"^[\s>*_`\-•]+")
_HEADER = re.compile(r"^(?:context\s*\d*\s*:|question\s*:|are follow[ -]up questions needed here)",
                     re.I)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One retrieved snippet: MCR's context line is ``"<title>: <text>"``."""

    title: str
    text: str
    #: where it came from (a document id, URL or element id), for audit and recall metrics
    source: str | None = None

    def line(self) -> str:
        if self.title and self.text:
            return f"{self.title}: {self.text}"
        return self.title or self.text

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "text": self.text, "source": self.source}


@dataclass(frozen=True, slots=True)
class Step:
    """A (sub-question, intermediate answer) pair, or the final answer (``question`` None)."""

    question: str | None
    answer: str
    #: the context retrieved for this follow-up (None: no retrieval or a final step)
    evidence: Evidence | None = None

    @property
    def final(self) -> bool:
        return self.question is None

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer,
                "evidence": None if self.evidence is None else self.evidence.to_json()}


def _after(line: str, prefix: str) -> str:
    return line.split(prefix)[1]


def parse_steps(text: str) -> list[Step]:
    """MCR's ``format_decompsition_string`` over a chain's text."""
    steps: list[Step] = []
    question: str | None = None
    for line in text.split("\n"):
        if line.startswith(KNOWLEDGE_FOLLOW_UP):
            question = _after(line, KNOWLEDGE_FOLLOW_UP)
        elif line.startswith(REASONING_FOLLOW_UP):
            question = _after(line, REASONING_FOLLOW_UP)
        elif line.startswith(FOLLOW_UP):
            question = _after(line, FOLLOW_UP)
        if line.startswith(FINAL):
            steps.append(Step(None, _after(line, FINAL)))
        if line.startswith(INTERMEDIATE) and question is not None:
            steps.append(Step(question, _after(line, INTERMEDIATE)))
            question = None
    return steps


def chain_answer(steps: Sequence[Step]) -> str | None:
    """The last step's final answer without one trailing "."; None when there is none."""
    if not steps or not steps[-1].final or not steps[-1].answer:
        return None
    answer = steps[-1].answer
    return answer[:-1] if answer.endswith(".") else answer


def clean_reply(reply: str, accepted: str) -> str:
    """A chat model's continuation in the chain format (see the module docstring)."""
    known = {line.strip() for line in accepted.split("\n") if line.strip()}
    lines: list[str] = []
    for raw in reply.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.rstrip()
        bare = _DECORATION.sub("", line)
        lowered = bare.lower()
        for spelled, canonical in _PREFIXES:
            if lowered.startswith(spelled):
                value = bare[len(spelled):].lstrip("*_` ").rstrip("*_` ")
                line = canonical + value
                break
        if not lines and (not line.strip() or _HEADER.match(line.strip())
                          or line.strip() in known):
            continue  # a restated header or chain before anything new
        lines.append(line)
    return "\n".join(lines).rstrip()


def keep_first(reply: str) -> str:
    """First call: the text before the first "Intermediate answer:"."""
    return reply.split("Intermediate answer:")[0]


def keep_next(reply: str) -> str:
    """Later calls: the text up to and including the next complete "Follow up: ..." line."""
    parts = _FOLLOW_UP_LINE.split(reply)
    kept = parts[0]
    if len(parts) > 1:
        line = _FOLLOW_UP_LINE.search(reply)
        assert line is not None
        kept += line.group(0)
    return kept


def first_follow_up(reply: str) -> str | None:
    """The question of the first line holding "Follow up: " (MCR retrieves for it)."""
    for line in reply.split("\n"):
        if FOLLOW_UP in line:
            return line.split(FOLLOW_UP)[-1].strip()
    return None


@dataclass(slots=True)
class ChainCall:
    """One model call of a chain."""

    reply: str
    kept: str
    #: the engine's bookkeeping for the call (cache key, tokens, latency, ...)
    usage: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"reply": self.reply, "kept": self.kept, **self.usage}


@dataclass(slots=True)
class Chain:
    """One finished (or exhausted) chain."""

    index: int
    question: str
    contexts: list[Evidence]
    #: the accepted chain text after the header (follow-ups, answers, the final line)
    body: str
    steps: list[Step]
    answer: str | None
    finished: bool
    calls: list[ChainCall]
    temperature: float | None = None
    seed: int | None = None

    def text(self) -> str:
        """The whole chain in MCR's contract: contexts, question, "Yes." line, body."""
        lines = [f"Context{i + 1}: {c.line()}" for i, c in enumerate(self.contexts)]
        return "\n".join([*lines, QUESTION + self.question, NEEDED, self.body]).rstrip()

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index, "temperature": self.temperature, "seed": self.seed,
            "text": self.text(), "steps": [s.to_json() for s in self.steps],
            "answer": self.answer, "finished": self.finished,
            "contexts": [c.to_json() for c in self.contexts],
            "calls": [c.to_json() for c in self.calls],
        }  # fmt: skip


def prompt_tail(question: str, contexts: Sequence[Evidence], body: str) -> str:
    """What follows the exemplars in every call: contexts, question, "Yes." line, chain so far."""
    lines = [f"Context{i + 1}: {c.line()}" for i, c in enumerate(contexts)]
    lines += [QUESTION + question, NEEDED]
    if body:
        lines.append(body)
    return "\n".join(lines)


Complete = Callable[[str, int], Awaitable[tuple[str, dict[str, Any]]]]
Retrieve = Callable[[str], Awaitable["Evidence | None"]]


def align_evidence(steps: list[Step], contexts: list[Evidence], offset: int) -> list[Step]:
    """Context ``offset + i`` belongs to the i-th follow-up (``format_ir_decomposition``)."""
    out: list[Step] = []
    follow = 0
    for step in steps:
        if step.final:
            out.append(step)
            continue
        position = offset + follow
        follow += 1
        evidence = contexts[position] if position < len(contexts) else None
        out.append(Step(step.question, step.answer, evidence))
    return out


async def generate_chain(
    index: int,
    question: str,
    complete: Complete,
    retrieve: Retrieve | None,
    *,
    max_calls: int = MAX_CALLS,
    temperature: float | None = None,
    seed: int | None = None,
) -> Chain:
    """Build one chain: ``complete(tail, call)`` returns the model's reply to the prompt whose
    last part is ``tail`` (and the call's bookkeeping); ``retrieve(query)`` a snippet or None.

    Failures of ``complete`` (an engine failure after its retries) propagate to the caller.
    """
    contexts: list[Evidence] = []
    offset = 0
    if retrieve is not None:
        contexts.append(await retrieve(question) or Evidence("", ""))
        offset = 1
    body = ""
    calls: list[ChainCall] = []
    finished = False
    for call in range(max_calls):
        reply, usage = await complete(prompt_tail(question, contexts, body), call)
        cleaned = clean_reply(reply, body)
        kept = keep_first(cleaned) if call == 0 else keep_next(cleaned)
        if kept.strip():
            body = f"{body}\n{kept.lstrip(chr(10))}" if body else kept.lstrip("\n")
        body = body.rstrip()
        calls.append(ChainCall(reply, kept, usage))
        query = first_follow_up(cleaned)
        if query is not None:
            if retrieve is not None:
                contexts.append(await retrieve(query) or Evidence("", ""))
        elif FINAL in cleaned:
            finished = True
            break
    steps = align_evidence(parse_steps(body), contexts, offset) if retrieve is not None \
        else parse_steps(body)
    return Chain(index, question, contexts, body, steps, chain_answer(steps), finished, calls,
                 temperature, seed)
