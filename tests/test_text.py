import re
import string
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from hopscore.text.normalize import (
    exact_match,
    hotpot_prf,
    normalize_answer,
    normalize_no_articles,
    set_f1,
    squad2_f1,
    token_prf,
)


def test_normalize_deletes_ascii_punctuation_without_spaces():
    assert normalize_answer("U.S.") == "us"
    assert normalize_answer("1,000") == "1000"
    assert normalize_answer("the-end") == "theend"


def test_normalize_keeps_unicode_punctuation():
    assert normalize_answer("1–2") != normalize_answer("1-2")
    assert normalize_answer("“Quoted”") == "“quoted”"


def test_normalize_removes_whole_word_articles_only():
    assert normalize_answer("The Eiffel Tower!") == "eiffel tower"
    assert normalize_answer("an apple a day") == "apple day"
    assert normalize_answer("theatre") == "theatre"
    assert normalize_answer("A") == ""


def test_evidence_normalization_keeps_articles():
    assert normalize_no_articles("The  U.S.") == "the us"


def test_exact_match_and_empty():
    assert exact_match("an", "The") == 1.0
    assert token_prf([], []) == (0.0, 0.0, 0.0)


def test_multiset_f1():
    f1, p, r = token_prf(["a", "b", "b"], ["a", "a", "b"])
    assert abs(f1 - 2 / 3) < 1e-12 and abs(p - 2 / 3) < 1e-12 and abs(r - 2 / 3) < 1e-12
    assert abs(token_prf(["paris", "paris"], ["paris"])[0] - 2 / 3) < 1e-12


def test_yes_no_rule():
    assert hotpot_prf("yes sir", "yes") == (0.0, 0.0, 0.0)
    assert hotpot_prf("yes", "yes sir") == (0.0, 0.0, 0.0)
    assert hotpot_prf("yes", "yes") == (1.0, 1.0, 1.0)


def test_squad2_empty_rule():
    assert squad2_f1("", "") == 1.0
    assert squad2_f1("", "x") == 0.0


def test_mcr_set_f1_underscores_repeats():
    assert set_f1("bora bora", "bora bora") == 0.5
    assert set_f1("", "") == 1.0


@given(st.text(), st.text())
def test_em_implies_f1_outside_empty(pred, gold):
    p, g = normalize_answer(pred), normalize_answer(gold)
    if p == g and p:
        assert hotpot_prf(p, g)[0] == 1.0
        assert squad2_f1(p, g) == 1.0


@given(st.text())
def test_normalize_is_idempotent(text):
    once = normalize_answer(text)
    assert normalize_answer(once) == once


# --- the fast paths agree with the official formulation ---------------------------------------


def official_normalize(text: str) -> str:
    """``normalize_answer`` as the SQuAD scripts write it (character loop, capturing regex)."""
    exclude = set(string.punctuation)
    text = "".join(ch for ch in text.lower() if ch not in exclude)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def official_prf(pred: list[str], gold: list[str]) -> tuple[float, float, float]:
    num_same = sum((Counter(pred) & Counter(gold)).values())
    if num_same == 0:
        return 0.0, 0.0, 0.0
    precision = 1.0 * num_same / len(pred)
    recall = 1.0 * num_same / len(gold)
    return (2 * precision * recall) / (precision + recall), precision, recall


answer_text = st.lists(
    st.sampled_from([*"aAnNtThHeE xy.,!-'\"–“”İß\t\u00a0", "the", "an", " a ", "The "]),
    max_size=20,
).map("".join)
token_lists = st.lists(st.sampled_from(["a", "b", "c", "paris", "x"]), max_size=20)


@given(st.text())
def test_normalize_equals_the_official_loop_on_any_text(text: str) -> None:
    assert normalize_answer(text) == official_normalize(text)


@given(answer_text)
def test_normalize_equals_the_official_loop_on_answer_like_text(text: str) -> None:
    assert normalize_answer(text) == official_normalize(text)
    kept = "".join(c for c in text.lower() if c not in set(string.punctuation))
    assert normalize_no_articles(text) == " ".join(kept.split())


ascii_answer_text = st.lists(
    st.one_of(st.sampled_from(["a", "an", "the", "A", "An", "THE", " ", "  ", "a.", "(the)",
                               "_a_", "an-", "K", "\u212a", "\u0130"]),
              st.characters(min_codepoint=0, max_codepoint=127)),
    max_size=20,
).map("".join)


@given(ascii_answer_text)
def test_normalize_equals_the_official_loop_on_ascii_text(text: str) -> None:
    """The printable-ASCII path (words split at spaces) and the general one (control
    characters, the Kelvin sign that lowers to ASCII) agree with the official loop."""
    assert normalize_answer(text) == official_normalize(text)


@given(token_lists, token_lists)
def test_token_prf_is_bit_identical_to_the_counter_formula(
    pred: list[str], gold: list[str]
) -> None:
    assert token_prf(pred, gold) == official_prf(pred, gold)


@given(answer_text, answer_text)
def test_benchmark_answer_scores_match_the_official_formulas(pred: str, gold: str) -> None:
    from hopscore.benchmarks.hotpotqa.official_scores import answer_scores
    from hopscore.benchmarks.hybridqa import exact_and_f1

    p, g = official_normalize(pred), official_normalize(gold)
    if p != g and (p in ("yes", "no", "noanswer") or g in ("yes", "no", "noanswer")):
        hotpot = (0.0, 0.0, 0.0)
    else:
        hotpot = official_prf(p.split(), g.split())
    assert answer_scores(pred, gold) == (float(p == g), *hotpot)
    if not p.split() or not g.split():
        squad2 = float(p.split() == g.split())
    else:
        squad2 = official_prf(p.split(), g.split())[0]
    assert exact_and_f1(pred, g) == (float(p == g), squad2)
