"""Prompt templates: every benchmark renders in both protocols, zero- and few-shot; user
templates override or extend the built-in ones; errors are located."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopscore.errors import HopscoreError
from hopscore.run.prompts import PromptTemplate, load_shots, split_messages
from hopscore.run.settings import RunSettings
from hopscore.run.tasks import prepare
from tests.conftest import FIXTURES

HYBRID_TABLES = FIXTURES / "hybridqa" / "tables"
GOLDS = {
    "hotpotqa": (FIXTURES / "hotpotqa" / "dev_small.json", {}),
    "2wikimultihopqa": (FIXTURES / "2wikimultihopqa" / "dev_small.json", {}),
    "hybridqa": (FIXTURES / "hybridqa" / "run_questions.json", {"tables_dir": HYBRID_TABLES}),
    "strategyqa": (FIXTURES / "strategyqa" / "gold.json", {}),
    "fermi": (FIXTURES / "fermi" / "gold.json", {}),
    "quartz": (FIXTURES / "quartz" / "dev_small.jsonl", {}),
    "feverous": (FIXTURES / "feverous" / "gold.jsonl", {}),
    "bamboogle": (FIXTURES / "bamboogle" / "gold_small.csv", {}),
}


def settings(name: str, **kwargs: object) -> RunSettings:
    gold, extra = GOLDS[name]
    options = {"limit": 2, **extra, **kwargs}
    return RunSettings(benchmark=name, gold=gold, model="openai/m", output_dir=Path("unused"),
                       **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", list(GOLDS))
@pytest.mark.parametrize("shots", [0, 2])
def test_every_benchmark_renders(name: str, shots: int) -> None:
    prepared = prepare(settings(name, shots=shots))
    for task in prepared.tasks:
        roles = [m["role"] for m in task.request.messages]
        assert roles == ["system", "user"]
        user = task.request.messages[1]["content"]
        assert task.example.question.strip()[:30] in user or name == "hybridqa"
        assert "Answer:" in task.request.messages[0]["content"]
        assert user.count("Example 1") == (1 if shots and name in ("hotpotqa", "2wikimultihopqa",
                                                                   "hybridqa") else 0)


def test_paragraph_benchmarks_number_sentences_and_hybridqa_shows_table() -> None:
    task = prepare(settings("hotpotqa")).tasks[0]
    user = task.request.messages[1]["content"]
    title, sentences = task.example.context[0]  # type: ignore[attr-defined]
    assert f"Paragraph 1: {title}" in user
    assert f"  [0] {sentences[0].strip()}" in user
    hybrid = prepare(settings("hybridqa")).tasks[0].request.messages[1]["content"]
    assert "| Rank | Crew | Club | Time |" not in hybrid  # the exemplar is not shown at 0 shots
    assert "| Name | Town | Opened |" in hybrid
    assert "Passages linked from the table's cells:" in hybrid


@pytest.mark.parametrize("name", [n for n in GOLDS if n != "hybridqa"])
def test_mcr_protocol_renders_mcr_questions(name: str) -> None:
    prepared = prepare(settings(name, protocol="mcr", shots=2))
    system, user = (m["content"] for m in prepared.tasks[0].request.messages)
    assert '"So the answer is: X."' in system and "Unknown" in system
    assert user.count("So the answer is:") == 2
    if name == "feverous":
        assert "Question: Is it true that " in user
    if name == "quartz":
        assert " A. " in user.splitlines()[-1] and " B. " in user.splitlines()[-1]


def test_mcr_with_exemplars_stops_where_a_new_exemplar_would_begin() -> None:
    assert prepare(settings("bamboogle", protocol="mcr", shots=2)).tasks[0].request.stop == [
        "\nQuestion:"]
    assert prepare(settings("bamboogle", protocol="mcr")).tasks[0].request.stop is None
    both = prepare(settings("bamboogle", protocol="mcr", shots=1, stop=("###",)))
    assert both.tasks[0].request.stop == ["\nQuestion:", "###"] and both.stop == both.tasks[
        0].request.stop
    assert prepare(settings("bamboogle", shots=2)).tasks[0].request.stop is None


def test_mcr_refuses_hybridqa() -> None:
    with pytest.raises(HopscoreError, match="MCR did not evaluate HybridQA"):
        prepare(settings("hybridqa", protocol="mcr"))


def test_shots_beyond_the_built_in_exemplars_are_an_error() -> None:
    with pytest.raises(HopscoreError, match="has 3 built-in exemplars"):
        load_shots("hotpotqa", "default", 4)


def test_user_template_extends_a_builtin_one(tmp_path: Path) -> None:
    template = tmp_path / "mine.jinja"
    template.write_text(
        '{% import "builtin/_common.jinja" as common %}\n'
        "[[system]]\nBe brief. End with {{ answer_marker }} X\n[[user]]\n"
        "{{ common.paragraphs(paragraphs) }}Q: {{ question }}\n",
        encoding="utf-8",
    )
    prepared = prepare(settings("hotpotqa", prompt_template=template, answer_marker="Final:"))
    system, user = (m["content"] for m in prepared.tasks[0].request.messages)
    assert system == "Be brief. End with Final: X"
    assert user.startswith("Paragraph 1:") and "\nQ: " in user
    assert set(prepared.template.sources) == {"mine.jinja", "builtin/_common.jinja"}


def test_template_errors_are_located(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text("line one\n{% if %}\n", encoding="utf-8")
    with pytest.raises(HopscoreError, match=r"bad\.jinja:2: template syntax error"):
        PromptTemplate.from_file(bad)
    unknown = tmp_path / "unknown.jinja"
    unknown.write_text("{{ no_such_variable }}", encoding="utf-8")
    with pytest.raises(HopscoreError, match="'no_such_variable' is undefined"):
        prepare(settings("bamboogle", prompt_template=unknown))
    with pytest.raises(HopscoreError, match="prompt template not found"):
        PromptTemplate.from_file(tmp_path / "missing.jinja")


def test_split_messages() -> None:
    assert split_messages("just a question", "t") == [
        {"role": "user", "content": "just a question"}
    ]
    text = "[[system]]\nS\n[[user]]\nU1\n[[assistant]]\nA1\n[[user]]\nU2\n"
    assert [m["role"] for m in split_messages(text, "t")] == ["system", "user", "assistant", "user"]
    with pytest.raises(HopscoreError, match="must be a user message"):
        split_messages("[[user]]\nU\n[[assistant]]\nA", "t")
    with pytest.raises(HopscoreError, match=r"\[\[system\]\] message rendered empty"):
        split_messages("[[system]]\n\n[[user]]\nU", "t")


def test_sample_is_mcrs_seeded_draw_and_limit_the_first_k() -> None:
    import random

    from hopscore.run.tasks import select

    examples = list(range(40))
    seed = settings("bamboogle").sample_seed  # MCR's, by default
    chosen = select(examples, limit=None, sample=7, sample_seed=seed)  # type: ignore[arg-type]
    random.seed(11)
    assert chosen == random.sample(examples, 7)
    first = select(examples, limit=3, sample=None, sample_seed=seed)  # type: ignore[arg-type]
    assert first == [0, 1, 2]
    with pytest.raises(HopscoreError, match="exclude each other"):
        settings("bamboogle", limit=2, sample=3).check()


def _split_line_by_line(text: str, name: str) -> list[dict[str, str]]:
    """split_messages as hopscore wrote it before its one-pass path (a regex per line): the
    oracle of the messages, hence of the prompt hashes and cache keys, it must keep."""
    import re

    role_line = re.compile(r"^\[\[(system|user|assistant)\]\]\s*$")
    if "[[" not in text:
        if not text.strip():
            raise HopscoreError(f"{name}: the template rendered no message")
        return [{"role": "user", "content": text.strip("\n").strip()}]
    messages: list[dict[str, str]] = []
    role: str | None = None
    lines: list[str] = []

    def close() -> None:
        content = "\n".join(lines).strip("\n")
        if role is None:
            if content.strip():
                messages.append({"role": "user", "content": content.strip()})
            return
        if not content.strip():
            raise HopscoreError(f"{name}: the [[{role}]] message rendered empty")
        messages.append({"role": role, "content": content.strip()})

    for line in text.splitlines():
        match = role_line.match(line.strip())
        if match:
            close()
            role, lines = match.group(1), []
        else:
            lines.append(line)
    close()
    if not messages:
        raise HopscoreError(f"{name}: the template rendered no message")
    if messages[-1]["role"] != "user":
        raise HopscoreError(f"{name}: the last message must be a user message, "
                            f"not {messages[-1]['role']}")
    return messages


_PIECES = ["[[system]]", "[[user]]", "[[assistant]]", "[[tool]]", "[[ user ]]", "[[user]]x",
           "\n", "\n", "\n", " ", "\t", "\x1f", "\xa0", "\u3000", "\r\n", "\r", "\x0b", "\x85",
           "\u2028", "text", "Q: a?", "[[", "]]", "é"]


def _outcome(split: object, text: str) -> object:
    try:
        return split(text, "t")  # type: ignore[operator]
    except HopscoreError as exc:
        return str(exc)


@pytest.mark.parametrize("text", [
    "[[system]]\nS\n[[user]]\nU", "  [[system]]  \nS\n\t[[user]]\xa0\nU\n", "A\n[[user]]\nB\n",
    "[[user]]\n[[user]]\nU", "[[user]]\nU\n[[assistant]]\n", "[[system]]\n\n[[user]]\nU",
    "[[user]]\r\nU\r\n[[assistant]]\r\nA\r\n[[user]]\r\nV", "[[user]]x\n[[user]]\nU",
])
def test_split_messages_one_pass_is_line_by_line(text: str) -> None:
    assert _outcome(split_messages, text) == _outcome(_split_line_by_line, text)


def test_split_messages_one_pass_on_random_text() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=600, deadline=None)
    @given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
    def check(text: str) -> None:
        assert _outcome(split_messages, text) == _outcome(_split_line_by_line, text)

    check()
