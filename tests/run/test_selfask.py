"""Self-ask chains, SC's votes and the meta-reasoner's input, against MCR's code's behaviour
(``mcr-methods-and-feverous-db.md`` A1-A5), on hand-computed cases."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hopscore.run.extract import Hints
from hopscore.run.metareason import meta_context, qa_facts, read_meta
from hopscore.run.methods import chain_methods
from hopscore.run.selfask import (
    Chain,
    Evidence,
    Step,
    chain_answer,
    clean_reply,
    generate_chain,
    keep_first,
    keep_next,
    parse_steps,
)

CHAIN = """Follow up: Who directed Quiet Harbor?
Intermediate answer: Edward Marlow.
Knowledge Follow up: Where was Edward Marlow born?
Intermediate answer: Dover.
So the final answer is: Dover."""


def test_parse_steps_follows_format_decompsition_string():
    steps = parse_steps(CHAIN)
    assert steps == [Step("Who directed Quiet Harbor?", "Edward Marlow."),
                     Step("Where was Edward Marlow born?", "Dover."), Step(None, "Dover.")]
    assert chain_answer(steps) == "Dover"  # one trailing "." dropped
    # an answer line without a pending follow-up is ignored; text after prefixes is kept as is
    assert parse_steps("Intermediate answer: x\nFollow up: q \nIntermediate answer:  a ") == [
        Step("q ", " a ")]
    assert chain_answer(parse_steps("So the final answer is: 3.5..")) == "3.5."
    assert chain_answer(parse_steps("Follow up: q\nIntermediate answer: a")) is None
    assert chain_answer(parse_steps("So the final answer is: ")) is None


def test_what_each_call_keeps():
    assert keep_first("Follow up: A?\nIntermediate answer: guess\nFollow up: B?") == \
        "Follow up: A?\n"
    assert keep_next("Intermediate answer: x\nFollow up: B?\nIntermediate answer: y\n") == \
        "Intermediate answer: x\nFollow up: B?\n"
    assert keep_next("Intermediate answer: x\nSo the final answer is: y") == \
        "Intermediate answer: x\nSo the final answer is: y"


def test_chat_replies_are_cleaned_into_the_chain_format():
    accepted = "Follow up: A?"
    reply = ("Are follow up questions needed here: Yes.\nFollow up: A?\n"
             "**Intermediate answer:** x  \n- follow up: B?\nso the final answer is: **C**")
    assert clean_reply(reply, accepted) == \
        "Intermediate answer: x\nFollow up: B?\nSo the final answer is: C"


def run_chain(replies: list[str], *, retrieve: bool = True, max_calls: int = 5
              ) -> tuple[Chain, list[str], list[str]]:
    tails: list[str] = []
    queries: list[str] = []

    async def complete(tail: str, call: int) -> tuple[str, dict[str, Any]]:
        tails.append(tail)
        return replies[call], {}

    async def lookup(query: str) -> Evidence | None:
        queries.append(query)
        return Evidence(f"T{len(queries)}", f"snippet for {query}", f"doc{len(queries)}")

    chain = asyncio.run(generate_chain(0, "Q?", complete, lookup if retrieve else None,
                                       max_calls=max_calls))
    return chain, tails, queries


def test_generation_with_retrieval_per_follow_up():
    replies = [
        "Follow up: A?\nIntermediate answer: the model's own guess, discarded",
        "Intermediate answer: a\nFollow up: B?\nIntermediate answer: ignored",
        "Intermediate answer: b\nSo the final answer is: c.",
    ]
    chain, tails, queries = run_chain(replies)
    assert queries == ["Q?", "A?", "B?"]  # the question first, then each follow-up
    assert chain.finished and chain.answer == "c" and len(chain.calls) == 3
    assert chain.body == ("Follow up: A?\nIntermediate answer: a\nFollow up: B?\n"
                          "Intermediate answer: b\nSo the final answer is: c.")
    # every call sees all contexts so far at the top, then the question and the chain
    assert tails[0] == ("Context1: T1: snippet for Q?\nQuestion: Q?\n"
                        "Are follow up questions needed here: Yes.")
    assert tails[2].startswith("Context1: T1: snippet for Q?\nContext2: T2: snippet for A?\n"
                               "Context3: T3: snippet for B?\nQuestion: Q?")
    assert tails[2].endswith("Follow up: A?\nIntermediate answer: a\nFollow up: B?")
    # context i+1 goes with the i-th follow-up (Context1 is the question's)
    assert [s.evidence.source if s.evidence else None for s in chain.steps] == \
        ["doc2", "doc3", None]
    assert chain.text().startswith("Context1: T1: snippet for Q?\nContext2:")


def test_five_calls_without_a_final_answer_leave_the_chain_unanswered():
    replies = ["Follow up: A?"] + [f"Intermediate answer: x{i}\nFollow up: N{i}?"
                                   for i in range(10)]
    chain, tails, _ = run_chain(replies)
    assert len(tails) == 5 and not chain.finished and chain.answer is None


def test_direct_answer_and_no_retrieval():
    chain, tails, queries = run_chain(["So the final answer is: Yes"], retrieve=False)
    assert queries == [] and len(tails) == 1 and tails[0].startswith("Question: Q?")
    assert chain.answer == "Yes" and chain.steps == [Step(None, "Yes")]


def test_sc_majority_ties_go_to_the_first_answer_and_sa_is_the_first_answered_chain():
    scores = {"Paris": 1.0, "paris": 1.0, "Lyon": 0.0, "lyon": 0.0, "Nice": 0.5}
    answers = [(1, "Lyon"), (2, "Paris"), (3, "lyon"), (4, "paris"), (5, "Nice")]  # 0: none
    methods = chain_methods(answers, scores.get, lower_winner=True)
    assert methods["sa"].answer == "Lyon" and methods["sa"].chain == 1
    assert methods["sc"].votes == {"lyon": 2, "paris": 2, "nice": 1}
    assert methods["sc"].answer == "lyon"  # tie: seen first; MCR scores the lower-cased form
    assert methods["oracle"].answer == "Paris" and methods["oracle"].score == 1.0
    spelled = chain_methods(answers, scores.get, lower_winner=False)
    assert spelled["sc"].answer == "Lyon" and spelled["sc"].chain == 1
    none = chain_methods([], scores.get, lower_winner=True)
    assert none["sa"].answer is None and not none["sc"].answered


def chain_of(index: int, steps: list[Step]) -> Chain:
    return Chain(index, "Q?", [], "", steps, chain_answer(steps), True, [])


def test_meta_input_layout_in_the_three_modes():
    e = Evidence("T", "text", "d")
    direct = chain_of(0, [Step(None, "Yes.")])
    asked = chain_of(1, [Step("A?", "a", e), Step("B?", "b", None), Step(None, "No.")])
    assert qa_facts([direct, asked], "Q?") == ["Q? Yes.", "A? a", "B? b"]
    assert meta_context([direct, asked], "Q?", "qa") == \
        "Q? Yes.\nA? a\nB? b\n\nQuestion:\nQ?\n\nAnswer:"
    assert meta_context([asked], "Q?", "evidence") == \
        "A? | T: text\n\nB? | \n\nQuestion:\nQ?\n\nAnswer:"
    assert meta_context([asked], "Q?", "both") == (
        "A? | T: text\n\nB? | \n\nDerived facts:\nA? a\nB? b\n\nQuestion:\nQ?\n\nAnswer:")


@pytest.mark.parametrize(("output", "answer", "abstained"), [
    ("Both agree. So the answer is: Dover.", "Dover", False),
    ("So the answer is: Unknown.", "Unknown", True),
    ("The answer is: Dover.", None, True),  # case-sensitive marker: MCR abstains
    ("So the final answer is: Dover.", None, True),
    ("x the answer is: a. y the answer is: b.\n", "b", False),
    ("So the answer is: not known (unknown)", "not known (unknown)", True),
])
def test_meta_reading_under_mcrs_rule(output: str, answer: str | None, abstained: bool):
    read = read_meta(output, Hints(), "mcr")
    assert read.abstained is abstained
    assert read.strict == answer


def test_meta_reading_under_the_default_protocol_is_lenient_and_mapped():
    assert read_meta("The answer is: yes.", Hints(kind="yesno"), "default").answer == "yes"
    assert read_meta("**Answer:** Unknown", Hints(), "default").abstained
    assert read_meta("I cannot say.", Hints(kind="yesno"), "default").abstained
