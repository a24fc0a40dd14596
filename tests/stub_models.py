"""Scripted endpoints for the API doctests and the docs tests: a judge that reads the prompt
the way a grader would, and a QA model that answers the bundled sample questions.

Both run on :class:`tests.openai_server.FakeOpenAI` (a real HTTP server on 127.0.0.1), so the
code under test goes through the OpenAI SDK as it would against a hosted model.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from hopscore.text.normalize import normalize_answer
from tests.openai_server import Reply, judge_reply

_ANSWER = re.compile(r"Answer to grade:\n(?P<answer>.*?)\n\nReference answer:\n(?P<gold>.*?)\n\n",
                     re.S)


def judge_responder(prompt: str, attempt: int) -> Reply:
    """The built-in judge prompt: correct when one normalized answer contains the other."""
    found = _ANSWER.search(prompt)
    if found is None:
        return Reply("I cannot grade this.")
    answer, gold = normalize_answer(found["answer"]), normalize_answer(found["gold"])
    same = bool(answer and gold) and (answer in gold or gold in answer)
    return judge_reply(same, answer=found["answer"].strip(), confidence="100%")


def qa_responder(answers: dict[str, str]) -> object:
    """A model that knows ``answers`` (question text -> answer) and says "unknown" otherwise;
    every reply ends with an ``Answer:`` line, as the built-in prompts ask."""

    def respond(prompt: str, attempt: int) -> Reply:
        if "Answer to grade:" in prompt:
            return judge_responder(prompt, attempt)
        for question, answer in answers.items():
            if question in prompt:
                return Reply(f"The question asks about a known fact.\nAnswer: {answer}")
        return Reply("I am not sure.\nAnswer: unknown")

    return respond


def sample_answers(gold: Path, wrong_every: int = 3) -> dict[str, str]:
    """Question -> answer for a HotpotQA-style gold file: the gold answer, except every
    ``wrong_every``-th question, which gets a wrong one (a model that is right two times in
    three)."""
    answers = {}
    for index, record in enumerate(json.loads(gold.read_text(encoding="utf-8"))):
        right = record["answer"]
        answers[record["question"]] = right if (index + 1) % wrong_every else f"not {right}"
    return answers


def docs_model(packages: Path) -> object:
    """The stand-in model of the docs examples (``tests/docs_runner.py``), a body responder.

    It grades like :func:`judge_responder` when asked to judge; otherwise it answers the bundled
    HotpotQA sample's questions, citing supporting facts as the built-in prompt asks, and the
    Bamboogle sample's. Models whose name contains "mini" get every third answer wrong (and cite
    only the first fact); the others answer everything right. ``packages``: the folder of the
    benchmarks' packages (each sample in ``<package>/samples/``).
    """
    gold = json.loads((packages / "hotpotqa" / "samples" / "gold.json").read_text(encoding="utf-8"))
    bamboogle_gold = packages / "bamboogle" / "samples" / "gold.csv"
    with bamboogle_gold.open(encoding="utf-8", newline="") as handle:
        bamboogle = [(row["Question"], row["Answer_corrected"] or row["Answer"])
                     for row in csv.DictReader(handle)]

    def respond(body: dict[str, object], attempt: int) -> Reply:
        messages = body.get("messages") or []
        prompt = "\n".join(m.get("content") or "" for m in messages  # type: ignore[union-attr]
                           if isinstance(m, dict) and isinstance(m.get("content"), str))
        if "Answer to grade:" in prompt:
            return judge_responder(prompt, attempt)
        small = "mini" in str(body.get("model", ""))
        for index, record in enumerate(gold):
            if record["question"] in prompt:
                wrong = small and index % 3 == 2
                facts = record["supporting_facts"][:1] if small else record["supporting_facts"]
                cited = ", ".join(f"[{title}, {sentence}]" for title, sentence in facts)
                answer = f"not {record['answer']}" if wrong else record["answer"]
                return Reply(f"Reading the paragraphs step by step.\nSupporting facts: {cited}\n"
                             f"Answer: {answer}")
        for index, (question, answer) in enumerate(bamboogle):
            if question in prompt:
                wrong = small and index % 3 == 2
                return Reply("Thinking about the two hops.\nAnswer: "
                             + (f"not {answer}" if wrong else answer))
        return Reply("I do not know.\nAnswer: unknown")

    return respond
