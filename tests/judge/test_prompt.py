"""Judge prompt templates: filling, str.format parity, placeholder checks, hashing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.errors import InputError
from hopscore.judge.prompt import DEFAULT_TEMPLATE, JudgePrompt


def test_builtin_prompt_has_the_four_fields_and_placeholders() -> None:
    prompt = JudgePrompt.builtin()
    text = prompt.render("Q?", "A!", "G.")
    assert "Q?" in text and "A!" in text and "G." in text
    for field in ("extracted_final_answer:", "reasoning:", "correct:", "confidence:"):
        assert field in text
    assert prompt.sha256 == hashlib.sha256(DEFAULT_TEMPLATE.encode()).hexdigest()
    assert prompt.source == "builtin"


def test_file_template_matches_str_format_byte_for_byte(tmp_path: Path) -> None:
    template = (
        "Judge {{strictly}}.\n[question]: {question}\n[response]: {answer}\n"
        "gold={expected_answer}\n"
    )
    path = tmp_path / "answer_judge.txt"
    path.write_text(template, encoding="utf-8")
    prompt = JudgePrompt.from_file(path)
    values = {"question": "q", "answer": "a", "expected_answer": "g"}
    assert prompt.render(**values) == template.format(**values)
    assert prompt.source == str(path)
    assert prompt.sha256 == hashlib.sha256(template.encode()).hexdigest()


@given(st.text(max_size=40), st.text(max_size=40), st.text(max_size=40))
def test_values_are_inserted_once_and_literally(q: str, a: str, g: str) -> None:
    prompt = JudgePrompt.from_text("Q={question}|A={answer}|G={expected_answer}", "t")
    assert prompt.render(q, a, g) == f"Q={q}|A={a}|G={g}"


def test_answer_containing_a_placeholder_is_not_filled_again() -> None:
    prompt = JudgePrompt.builtin()
    assert "{expected_answer}" in prompt.render("q", "my answer is {expected_answer}", "gold")


def test_other_braces_are_kept() -> None:
    prompt = JudgePrompt.from_text('{question} {answer} {expected_answer} {"a": 1}', "t")
    assert prompt.render("q", "a", "g") == 'q a g {"a": 1}'


def test_missing_placeholder_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("{question} {answer}", encoding="utf-8")
    with pytest.raises(InputError, match=r"p\.txt: the judge prompt template lacks \{expected_"):
        JudgePrompt.from_file(path)


def test_unknown_placeholder_is_an_error_with_line() -> None:
    with pytest.raises(InputError, match=r"t:2: unknown placeholder \{response\}"):
        JudgePrompt.from_text("{question}\n{response} {answer} {expected_answer}", "t")


def test_empty_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="empty"):
        JudgePrompt.from_text("  \n", "t")
    with pytest.raises(InputError, match="file not found"):
        JudgePrompt.from_file(tmp_path / "nope.txt")


_TOKENS = ["{question}", "{answer}", "{expected_answer}", "{{", "}}", "{", "}", "{other}", "x",
           "\n", "{{question}}", "{{{answer}}}", "é"]


def _one_pass_sub(template: str, values: dict[str, str]) -> str:
    """The filling rule as one regex substitution (how render was first written)."""
    import re

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values.get(match.group(1), token)

    return re.sub(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}", fill, template)


@given(st.lists(st.sampled_from(_TOKENS), max_size=14).map("".join),
       st.lists(st.lists(st.sampled_from(_TOKENS), max_size=3).map("".join), min_size=3,
                max_size=3))
def test_render_is_the_one_pass_substitution(template: str, values: list[str]) -> None:
    """The template is split once and cached; filling it gives the substitution's text."""
    prompt = JudgePrompt(template, "t", "")
    q, a, g = values
    expected = _one_pass_sub(template, {"question": q, "answer": a, "expected_answer": g})
    assert prompt.render(q, a, g) == expected
