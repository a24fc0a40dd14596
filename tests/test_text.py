from hypothesis import given
from hypothesis import strategies as st

from hopscore.text import (
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
