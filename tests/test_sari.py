from hypothesis import given
from hypothesis import strategies as st

from hopscore.benchmarks.strategyqa.sari import ngrams, sari, sari_components, strategyqa_tokens


def test_hand_computed_single_reference():
    # n=1: keep 1, add 0 (C is not in the reference), delete 1 (B is dropped by both);
    # n=2: keep 1 (0/0), add 0, delete 1; n=3,4: nothing to compare, every part 1 (0/0 = 1).
    total, keep, add, delete = sari_components(["A", "B"], ["A", "C"], [["A", "D"]])
    assert (keep, add, delete) == (1.0, 0.5, 1.0)
    assert abs(total - 2.5 / 3) < 1e-15


def test_weighted_references():
    # B is kept by one reference of two: weight 0.5 in keep's recall and delete's precision.
    total, keep, add, delete = sari_components(["A", "B"], ["A"], [["A"], ["A", "B"]])
    assert (keep, add, delete) == (0.7, 1.0, 0.625)
    assert abs(total - 0.775) < 1e-15


def test_copying_the_source_when_the_reference_rewrites_it():
    total, keep, add, delete = sari_components(list("abc"), list("abc"), [["x"]])
    assert (keep, add, delete) == (0.25, 0.75, 1.0)
    assert abs(total - 2 / 3) < 1e-15


def test_everything_empty_scores_one():
    assert sari([], [], [[]]) == 1.0


def test_case_sensitive_and_ngrams_are_sets():
    assert sari(["Is", "it"], ["is", "it"], [["Is", "it"]]) < 1.0
    assert ngrams(["a", "a", "a"], 1) == {("a",)}
    assert ngrams(["a", "b"], 3) == set()


def test_strategyqa_tokenization_splits_question_marks():
    assert strategyqa_tokens("Is #1 > #2?Yes?") == ["Is", "#1", ">", "#2", "?Yes", "?"]


tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "?"]), max_size=8)


@given(tokens, tokens, st.lists(tokens, min_size=1, max_size=3))
def test_sari_is_a_fraction(source, output, references):
    assert 0.0 <= sari(source, output, references) <= 1.0


@given(tokens, tokens)
def test_output_equal_to_the_reference_scores_one(source, reference):
    assert sari(source, reference, [reference]) == 1.0
