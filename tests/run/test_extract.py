"""Answer extraction: strict, flexible and MCR's rule, on the shapes real models produce."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hopscore.run.extract import (
    CHOICE,
    LABEL,
    NUMBER,
    YESNO,
    Hints,
    choice_label,
    extract_flexible,
    extract_mcr,
    extract_strict,
    feverous_label,
    strip_think,
    yes_no,
)

QWEN_THINK = (
    "<think>\nOkay, the question asks where Ilse Varga was born. The paragraph says Tollin. "
    "Answer: maybe Tollin? No wait, it asks for the lake.\n</think>\n\n"
    "Ilse Varga was born in Tollin [Ilse Varga, 0], which lies on Lake Miren [Tollin, 1].\n\n"
    "Supporting facts: [Ilse Varga, 0], [Tollin, 1]\nAnswer: Lake Miren"
)
MARKDOWN_BOLD = "Let me reason.\n\n1. Tollin is on Lake Miren.\n\n**Answer:** Lake Miren"
FINAL_ANSWER_HEADING = "### Reasoning\nThe town is Tollin.\n\n### Final answer\n\nLake Miren."
BOXED = "The lake next to Tollin is Lake Miren.\n\nFinal Answer: $\\boxed{\\text{Lake Miren}}$"
TRAILING = "Answer: Lake Miren, because Tollin lies on its shore."
DEEPSEEK_ORPHAN = "reasoning about Answer: Tollin ...\n</think>\nThe answer is Lake Miren."
RUN_ON = (
    "Tollin is on Lake Miren.\nAnswer: Lake Miren\n\nQuestion: Who built the tower clock?\n"
    "She built it.\nAnswer: Ilse Varga"
)


@pytest.mark.parametrize(
    ("output", "strict", "flexible"),
    [
        (QWEN_THINK, "Lake Miren", "Lake Miren"),
        (MARKDOWN_BOLD, None, "Lake Miren"),
        (FINAL_ANSWER_HEADING, None, "Lake Miren"),
        (BOXED, None, "Lake Miren"),
        (TRAILING, "Lake Miren, because Tollin lies on its shore.", "Lake Miren"),
        (DEEPSEEK_ORPHAN, None, "Lake Miren"),
        (RUN_ON, "Ilse Varga", "Lake Miren"),
        ("Tollin. So the answer is: Lake Miren.\nQuestion: Who?\nThe answer is: Ilse Varga",
         None, "Lake Miren"),
        ('answer: "Lake Miren".', '"Lake Miren".', "Lake Miren"),
        ("So the answer is: Lake Miren (a lake in the north).", None, "Lake Miren"),
        ("Answer:\n\nLake Miren", None, "Lake Miren"),
        ("Paris. It is the capital of France.", None, "Paris"),
        ("The tower is in St. Louis", None, "The tower is in St. Louis"),
    ],
)
def test_span_answers(output: str, strict: str | None, flexible: str | None) -> None:
    assert extract_strict(output) == strict
    assert extract_flexible(output) == flexible


def test_strict_is_case_insensitive_on_the_marker_and_takes_the_last_line() -> None:
    assert extract_strict("ANSWER: first\nanswer: second") == "second"
    assert extract_strict("Verdict: yes", marker="Verdict:") == "yes"
    assert extract_strict("Answer:   ") is None
    assert extract_strict("no marker at all") is None


def test_think_stripping() -> None:
    assert strip_think("<think>a</think>b<thinking>c</thinking>d") == "bd"
    assert strip_think("a </think> b") == " b"
    assert strip_think("x <think> never closed") == "x "
    # only reasoning and no answer after it: flexible reads the reasoning as a last resort
    assert extract_flexible("<think>The answer is Paris.</think>") == "Paris"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("<think>hmm</think>\n**Answer:** Yes, a balloon can.", "yes"),
        ("Final answer: No.", "no"),
        ("Answer: TRUE", "yes"),
        ("Balloons reach 21 km and Everest is 8.8 km, so yes.", "yes"),
        ("I cannot tell.", None),
        ("It is not possible; no.\n\nAnswer: \\boxed{no}", "no"),
    ],
)
def test_yes_no(output: str, expected: str | None) -> None:
    assert extract_flexible(output, Hints(kind=YESNO)) == expected


CHOICES = (("A", "increase"), ("B", "decrease"))


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Answer: B", "B"),
        ("**Answer: (A)**", "A"),
        ("The answer is A. increase", "A"),
        ("Answer: decrease", "B"),
        ("Answer: Option B", "B"),
        # the last line names no choice ("A" is an article there); the one before does
        ("More air means more pressure, so it will increase.\nA darker roof is irrelevant.",
         "A"),
        ("Reasoning...\nB) decrease", "B"),
        ("Answer: it could increase or decrease", None),
    ],
)
def test_choices(output: str, expected: str | None) -> None:
    assert extract_flexible(output, Hints(kind=CHOICE, choices=CHOICES)) == expected


def test_choice_label_never_reads_an_article_as_a_label() -> None:
    assert choice_label("A darker roof", CHOICES) is None
    assert choice_label("A", CHOICES) == "A"
    assert choice_label("(B) decrease", CHOICES) == "B"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("SUPPORTS", "SUPPORTS"), ("refutes", "REFUTES"), ("NOT ENOUGH INFO", "NOT ENOUGH INFO"),
        ("The claim is supported.", "SUPPORTS"), ("The claim is not supported", "REFUTES"),
        ("False", "REFUTES"), ("Yes", "SUPPORTS"),
        ("There is not enough information to support it", "NOT ENOUGH INFO"),
        ("banana", None),
    ],
)  # fmt: skip
def test_feverous_labels(text: str, label: str | None) -> None:
    assert feverous_label(text) == label


def test_label_fallback_takes_the_last_named_label() -> None:
    output = "Is it SUPPORTS? The date is wrong, so the verdict is REFUTES\nThat is all."
    assert extract_flexible(output, Hints(kind=LABEL)) == "REFUTES"


@pytest.mark.parametrize(
    ("output", "unit", "expected"),
    [
        ("Answer: 3.2 × 10^13 kg", None, "3.2e+13 kg"),
        ("Answer: \\boxed{1.5 \\times 10^{9}}", "m**3", "1500000000 m**3"),
        ("... so about 960 km.\nAnswer: 60 km/h × 16 h = 960 km", "km", "960 km"),
        ("Answer: 22.3", "km", "22.3 km"),
        ("Answer: $7,224", "$", "7224"),
        ("Roughly 5 million litres are used.", None, "5000000 litres"),
        ("A train travels approximately 16 hours a day.", "km", "16 hours"),
        ("Answer: unknown", None, None),
    ],
)
def test_numbers(output: str, unit: str | None, expected: str | None) -> None:
    assert extract_flexible(output, Hints(kind=NUMBER, unit=unit)) == expected


@pytest.mark.parametrize(
    ("output", "answer", "abstained"),
    [
        ("Reasoning. So the answer is: Paris.", "Paris", False),
        ("So the answer is: Paris.\n", "Paris", False),
        ("So the answer is: Paris..", "Paris.", False),  # one trailing "." only
        ("So the answer is: New\nYork.", "NewYork", False),  # "\n" removed, not a space
        ("The answer is: Paris.", None, True),  # capital T: the marker does not occur
        ("Thus the answer is: Paris.", "Paris", False),
        ("THE ANSWER IS: Paris.", None, True),  # case-sensitive marker
        ("So the final answer is: Paris.", None, True),  # "final answer is:" is not it
        ("So the answer is: Unknown.", "Unknown", True),
        ("So the answer is: probably UNKNOWN to me", "probably UNKNOWN to me", True),
        ("x the answer is: A. the answer is: B.", "B", False),  # the last occurrence
    ],
)
def test_mcr_rule(output: str, answer: str | None, abstained: bool) -> None:
    result = extract_mcr(output)
    assert (result.answer, result.abstained) == (answer, abstained)


def _mcr_reference(text: str) -> str | None:
    """MCR's released code, restated: split, strip, one '.', newlines, 'unknown'."""
    if "the answer is:" not in text:
        return None
    answer = text.split("the answer is:")[-1].strip()
    if len(answer) and answer[-1] == ".":
        answer = answer[:-1]
    answer = answer.replace("\n", "").strip()
    return None if "unknown" in answer.lower() else answer


@given(st.text(alphabet=st.sampled_from(list("the answer is:.\nUNKOWnkow AB")), max_size=60))
def test_mcr_rule_matches_the_reference(text: str) -> None:
    result = extract_mcr(text)
    assert (None if result.abstained else result.answer) == _mcr_reference(text)


@given(st.text(max_size=300))
def test_extractors_never_raise(text: str) -> None:
    extract_strict(text)
    for hints in (Hints(), Hints(kind=YESNO), Hints(kind=CHOICE, choices=CHOICES),
                  Hints(kind=LABEL), Hints(kind=NUMBER, unit="km")):
        extract_flexible(text, hints)


def test_yes_no_helper() -> None:
    assert yes_no("Yes, because") == "yes"
    assert yes_no("false") == "no"
    assert yes_no("maybe") is None


def test_a_text_answer_is_kept_whole() -> None:
    from hopscore.run.extract import TEXT

    reply = "Reasoning...\nAnswer: 98 Years (Arlington, TX & Rubik's Cube)."
    assert extract_flexible(reply) == "98 Years"
    assert extract_flexible(reply, Hints(kind=TEXT)) == "98 Years (Arlington, TX & Rubik's Cube)"
    assert extract_flexible("Answer: **Paris; the capital**", Hints(kind=TEXT)) == \
        "Paris; the capital"


def _clean_reference(value: str, cut: bool) -> str:
    """``clean`` as first written: every LaTeX rewrite and sentence cut run on every value."""
    import re

    from hopscore.run import extract

    value = value.strip()
    boxed = extract.last_boxed(value)
    if boxed is not None:
        value = boxed
    value = re.sub(r"\\(?:text|mathrm|textbf|mathbf)\{([^{}]*)\}", r"\1", value)
    value = value.replace("\\$", "$").replace("\\%", "%").replace("\\,", "")
    if value.startswith("$") and value.endswith("$") and len(value) > 1 and value.count("$") == 2:
        value = value[1:-1]
    value = value.replace("\\(", "").replace("\\)", "").replace("\\[", "").replace("\\]", "")
    if cut:
        match = extract._EXPLANATION.search(value)
        if match and match.start() > 0:
            value = value[: match.start()]
        for end in re.finditer(r"\.\s+(?=[A-Z])", value):
            word = re.findall(r"[A-Za-z]+$", value[: end.start()])
            if word and len(word[0]) > 1 and word[0].lower() not in extract._ABBREVIATIONS:
                value = value[: end.start()]
                break
    for _ in range(3):
        before = value
        value = value.strip().rstrip(".。!").strip()
        for wrapper in extract._WRAPPERS:
            if len(value) > 2 * len(wrapper) and value.startswith(wrapper) \
                    and value.endswith(wrapper):
                value = value[len(wrapper): -len(wrapper)]
        value = value.strip("*_`").strip()
        if value == before:
            break
    return value


_CLEAN_PIECES = ["\\", "\\text{", "\\textbf{", "}", "{", "$", "\\$", "\\%", "\\,", "\\(", "\\)",
                 "\\[", "\\]", "\\boxed{", ".", ". ", "Paris", "Dr", " because ", " (", "**",
                 '"', " ", "A", "x", "St. Louis", "; "]


@given(st.lists(st.sampled_from(_CLEAN_PIECES), max_size=10).map("".join), st.booleans())
def test_clean_skips_only_what_cannot_apply(value: str, cut: bool) -> None:
    """Without a backslash no LaTeX rewrite runs, without a period no sentence cut: the same
    text as running them all."""
    from hopscore.run.extract import clean

    assert clean(value, cut=cut) == _clean_reference(value, cut)
