"""A loopback model for the chain strategies, scripted per prompt.

A self-ask call is recognised by its system message, its question (the last ``Question:``
line of the last exemplar block) and how many follow-ups the chain already holds; the script
says, per question and per chain (told apart by the request's seed: the tests pass ``--seed``,
so chain i of round r is sent seed + i + 1000 r), which follow-ups to ask, their answers and
the final answer. A meta-reasoner call is answered by ``meta(question, facts)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.openai_server import Reply

#: (follow-up, intermediate answer) pairs and the final answer of one chain
Plan = tuple[list[tuple[str, str]], str]


@dataclass
class Call:
    kind: str  # "chain", "meta" or "other"
    question: str
    follow_ups: int
    seed: int | None
    temperature: float | None
    block: str
    facts: list[str] = field(default_factory=list)


def user_text(body: dict[str, Any]) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


def parse_call(body: dict[str, Any]) -> Call:
    system = body["messages"][0]["content"] if body["messages"][0]["role"] == "system" else ""
    block = user_text(body).split("\n#\n")[-1]
    seed, temperature = body.get("seed"), body.get("temperature")
    if "lines of reasoning gathered" in system:
        question = block.split("\nQuestion:\n")[-1].split("\n\nAnswer:")[0].strip()
        context = block.split("Context:\n", 1)[-1].split("\n\nQuestion:\n")[0]
        facts = [line for line in context.split("\n") if line.strip()]
        return Call("meta", question, 0, seed, temperature, block, facts)
    if "simpler follow-up questions" in system:
        question = [line for line in block.split("\n") if line.startswith("Question: ")][-1][10:]
        after = block.split("Are follow up questions needed here: Yes.")[-1]
        follow_ups = sum(1 for line in after.split("\n") if line.startswith("Follow up:"))
        return Call("chain", question, follow_ups, seed, temperature, block)
    return Call("other", "", 0, seed, temperature, block)


def chain_reply(plan: Plan, follow_ups: int) -> str:
    """What a well-behaved model continues with, given the chain so far (it also writes its
    own guess after the first follow-up, which MCR's accessor discards)."""
    steps, final = plan
    if follow_ups == 0:
        if not steps:
            return f"So the final answer is: {final}."
        return f"Follow up: {steps[0][0]}\nIntermediate answer: (my own guess)"
    text = f"Intermediate answer: {steps[follow_ups - 1][1]}\n"
    if follow_ups < len(steps):
        return text + f"Follow up: {steps[follow_ups][0]}\nIntermediate answer: (guess)"
    return text + f"So the final answer is: {final}."


def scripted_chains(
    chains: Callable[[str, int | None], Plan | str],
    meta: Callable[[str, list[str]], str] | None = None,
    other: Callable[[Call], str] | None = None,
    log: list[Call] | None = None,
) -> Callable[[dict[str, Any], int], Reply]:
    """A body responder: ``chains(question, seed)`` gives a chain's plan (or a raw reply
    text); ``meta(question, facts)`` the meta-reasoner's whole reply."""

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        call = parse_call(body)
        if log is not None:
            log.append(call)
        if call.kind == "meta":
            assert meta is not None, "unexpected meta-reasoner call"
            return Reply(meta(call.question, call.facts))
        if call.kind == "chain":
            plan = chains(call.question, call.seed)
            return Reply(plan if isinstance(plan, str) else chain_reply(plan, call.follow_ups))
        assert other is not None, f"unexpected call: {call.block[-200:]}"
        return Reply(other(call))

    return respond
