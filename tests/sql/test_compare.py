"""Result-table comparison: every rule of the reference mode, and the strict modes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.sql.cells import Column, json_equal, multiset_equal, ordered_equal, values_equal
from hopscore.sql.table_match import compare_tables


def cmp(agent: list[tuple[Any, ...]], gold: list[tuple[Any, ...]], *, ordered: bool = False,
        mode: str = "reference"):
    width = lambda rows: len(rows[0]) if rows else 1  # noqa: E731
    return compare_tables(agent, width(agent), gold, width(gold), mode=mode, order_matters=ordered)


def col(values: list[Any]) -> list[tuple[Any, ...]]:
    return [(v,) for v in values]


# --- cells -------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "equal"), [
    ("No", "no", True), (" x ", "X", True), ("a  b", "a b", False), ("ß", "SS", True),
    (3.14159, 3.142, True), (3.1415, 3.1416, True), (0.001, 0.0014, True), (0.001, 0.0016, False),
    (5, 5.0, True), ("5", 5, False), (None, None, True), (None, "", False),
    (1000000, 1000005.0, True), (1000000, 1000005, False),
    (b"\x00", b"\x00", True), (b"a", "a", False),
    ("{}", '{"a": 1}', True), ('{"a": 1}', '{"b": 1, "c": 2}', True),
    ('{"a": 1}', '{"a": 2}', False),
    ("[1, 2]", "[2, 1]", False), ("[true]", "[1]", True), ('{"a": "X"}', '{"k": "x"}', True),
    ("[1]", 1, False), ("[TRUE]", "[true]", True),
])
def test_cell_equality(a: Any, b: Any, equal: bool) -> None:
    from hopscore.sql.cells import round_cell
    left, right = Column([round_cell(a)]), Column([round_cell(b)])
    assert left.cell_equal(0, right, 0) is equal
    assert multiset_equal(left, right) is equal
    assert ordered_equal(left, right) is equal


def test_json_rule_details() -> None:
    assert json_equal({}, {"x": [1, 2]})
    # An object against a list: both are wrapped, then an object meets a list: unequal.
    assert not json_equal({"a": 1}, [{"b": 1}])
    assert not json_equal([{"a": 1}], [{"a": 1}, {"a": 1}])
    assert values_equal(1.0, True)


def naive_greedy(a: Column, b: Column) -> bool:
    """The reference's greedy first fit, pair by pair (the oracle for the counting version)."""
    if len(a) != len(b):
        return False
    unused = list(range(len(b)))
    for i in range(len(a)):
        for pos, j in enumerate(unused):
            if a.cell_equal(i, b, j):
                del unused[pos]
                break
        else:
            return False
    return True


numbers = st.one_of(
    st.integers(999_990, 1_000_020),
    st.integers(999_990, 1_000_020).map(float),
    st.sampled_from([0.001, 0.0014, 100.001, 100.002, 1e8 + 1000.0, 2.0**53, 2**53 + 1]),
    st.none(),
    st.sampled_from(["a", "A", "1000000"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(numbers, max_size=12), st.randoms(use_true_random=False))
def test_counting_equals_pairwise_greedy(values: list[Any], rnd: Any) -> None:
    other = list(values)
    rnd.shuffle(other)
    for index in range(len(other)):
        if rnd.random() < 0.3 and isinstance(other[index], (int, float)):
            other[index] = other[index] + rnd.choice([1, 5, 11, 0.001])
    a, b = Column(values), Column(other)
    assert multiset_equal(a, b) is naive_greedy(a, b)
    assert multiset_equal(b, a) is naive_greedy(b, a)


def test_greedy_false_negative_is_kept() -> None:
    # A perfect matching exists (5-to-0 and 16-to-10) but greedy first fit takes 10 for 5.
    a, b = Column([1000005.0, 1000016.0]), Column([1000010.0, 1000000.0])
    assert not multiset_equal(a, b)


# --- the reference mode ------------------------------------------------------------------


def test_empty_tables() -> None:
    assert cmp([], []).decided_by == "both_empty"
    assert cmp([], [], mode="strict").match
    assert not cmp([], col([1])).match


def test_rows_in_any_order_when_gold_unordered() -> None:
    result = cmp(col(["b", "a", "c"]), col(["a", "b", "c"]))
    assert result.match and result.decided_by == "columns" and "unordered_columns" in result.flags


def test_order_enforced_only_in_strict() -> None:
    agent, gold = col(["c", "b", "a"]), col(["a", "b", "c"])
    lenient = cmp(agent, gold, ordered=True)
    assert lenient.match and lenient.decided_by == "overlap_boost"
    assert "order_ignored" in lenient.flags
    strict = cmp(agent, gold, ordered=True, mode="strict")
    assert not strict.match and strict.raw_score == 0.5


def test_extra_and_missing_columns() -> None:
    gold = [("x", 1), ("y", 2)]
    assert cmp([(9, "x", 1, 0), (9, "y", 2, 0)], gold).match  # two extra columns
    missing = cmp(col(["x", "y"]), gold)
    assert not missing.match and missing.raw_score == 0.5 and missing.column_precision == 0.5
    five_extra = [("x", 1, 0, 0, 0, 0, 0), ("y", 2, 0, 0, 0, 0, 0)]
    boosted = cmp(five_extra, gold)  # beyond 3 extra, the overlap boost still accepts (C2)
    assert boosted.match and boosted.decided_by == "overlap_boost"
    assert not cmp(five_extra, gold, mode="strict").match


def test_seventy_five_percent_boost() -> None:
    gold = [(1, "a", 2.5, "p"), (2, "b", 3.5, "q")]
    one_wrong = [(1, "a", 2.5, "WRONG"), (2, "b", 3.5, "WRONG2")]
    result = cmp(one_wrong, gold)
    assert result.match and result.column_precision == 0.75
    assert "gold_columns_unmatched" in result.flags
    two_wrong = [(1, "a", 0, "x"), (2, "b", 0, "y")]
    assert not cmp(two_wrong, gold).match


def test_columns_matched_independently() -> None:
    # Same values per column, rows paired differently: the reference accepts (C1).
    gold = [("Walter", "Albuquerque"), ("Gus", "Santa Fe")]
    swapped = [("Walter", "Santa Fe"), ("Gus", "Albuquerque")]
    result = cmp(swapped, gold)
    assert result.match and "rows_mode_mismatch" in result.flags
    assert not cmp(swapped, gold, mode="rows").match


def test_one_vs_many() -> None:
    gold_top = [("Gus", 52)]
    agent_all = [("Gus", 52), ("Walter", 50), ("Hank", 44)]
    result = cmp(agent_all, gold_top, ordered=True)
    assert result.match and result.decided_by == "one_vs_many_gold_row"
    assert not cmp(agent_all, gold_top, ordered=False).match
    assert not cmp(agent_all, gold_top, ordered=True, mode="strict").match
    agent_top = cmp(gold_top, agent_all, ordered=True)
    assert agent_top.match and agent_top.decided_by == "one_vs_many_agent_row"
    # Gold 1 row x 4 columns; the agent's single column only has to equal one gold value (C4).
    wide = [("Gus", "Santa Fe", 52, "2009-05-03")]
    lenient = cmp(col([52, 50, 44]), wide, ordered=True)
    assert lenient.match and "gold_columns_omitted" in lenient.flags


def test_percentage_rule_and_coercion() -> None:
    result = cmp(col([25.0, 50.0, 75.0]), col([0.25, 0.5, 0.75]))
    assert result.match and "percentage_rule" in result.flags
    assert cmp(col([100, 200]), col([1, 2])).match is False  # 200 > 100: rule off
    assert cmp(col([100]), col([1])).match  # small integers (C6)
    numeric = cmp(col(["1.50", "3"]), col([1.5, 3.0]))
    assert numeric.match and "numeric_coercion" in numeric.flags


def test_mixed_types_and_blobs_never_crash() -> None:
    mixed = col([1, "a", 2.5, None])
    result = cmp(list(reversed(mixed)), mixed, ordered=False)
    assert result.match and "unsortable_column" in result.flags
    blobs = col([b"\x00", b"\xff", None])
    assert cmp(list(reversed(blobs)), blobs).match
    assert not cmp(col([b"\x00", b"\x01", None]), blobs).match


def test_duplicate_names_do_not_matter_by_position() -> None:
    # Columns are positions: (1, 2) is not (1, 1), whatever the names.
    assert not cmp([(1, 1)], [(1, 2)]).match
    assert cmp([(2, 1)], [(1, 2)]).match


def test_json_cells_flagged() -> None:
    result = cmp(col(['{"job": "teacher", "kids": 2}']), col(["{}"]))
    assert result.match and "json_cells" in result.flags


def test_unknown_mode() -> None:
    with pytest.raises(ValueError):
        cmp([], [], mode="nope")


# --- the strict row modes ----------------------------------------------------------------


def test_rows_mode() -> None:
    gold = [("a", 1.0), ("b", 2.0)]
    assert cmp([(2, "B"), (1, "a")], gold, mode="rows").match  # columns and rows permuted
    assert cmp([(1, "a"), (2, "b")], gold, mode="rows", ordered=True).match
    assert not cmp([(2, "b"), (1, "a")], [("a", 1), ("b", 2)], ordered=True, mode="rows").match
    assert cmp([("a", 1, "extra"), ("b", 2, "extra")], gold, mode="rows").match
    assert not cmp(col(["a", "b"]), gold, mode="rows").match
    assert not cmp([("a", 1), ("a", 1)], [("a", 1), ("b", 2)], mode="rows").match
    assert cmp(col(['{"b": 1, "a": 2}']), col(['{"a": 2, "b": 1}']), mode="rows").match
    assert not cmp(col(["{}"]), col(['{"a": 1}']), mode="rows").match


def test_spider_mode() -> None:
    gold = [("a", 1), ("b", 2)]
    assert cmp([(2, "b"), (1, "a")], gold, mode="spider").match
    assert not cmp([("A", 1), ("b", 2)], gold, mode="spider").match  # raw values
    assert not cmp([("a", 1, 0), ("b", 2, 0)], gold, mode="spider").match
    assert not cmp([("b", 2), ("a", 1)], gold, mode="spider", ordered=True).match
    assert cmp([("a", 1), ("a", 1)], [("a", 1), ("a", 1)], mode="spider").match
    assert not cmp([("a", 1), ("a", 1)], [("a", 1), ("b", 2)], mode="spider").match


def test_bird_mode() -> None:
    gold = [("a", 1), ("b", 2)]
    assert cmp([("b", 2), ("a", 1), ("a", 1)], gold, mode="bird").match  # a set of rows
    assert not cmp([(1, "a"), (2, "b")], gold, mode="bird").match  # column order matters
    assert cmp([], [], mode="bird").match


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["a", "B", "c"])), min_size=1,
                max_size=8), st.randoms(use_true_random=False))
def test_unordered_verdict_ignores_row_order(rows: list[tuple[int, str]], rnd: Any) -> None:
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    for mode in ("reference", "strict", "rows", "spider", "bird"):
        assert cmp(shuffled, rows, mode=mode).match, mode


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(-1e6, 1e6),
    st.integers(-10**7, 10**7).map(lambda k: k / 1000 + 0.0005),  # exact halves, nearly
    st.integers(-10**7, 10**7).map(lambda k: k / 2000),
), min_size=64, max_size=200), st.integers(0, 4))
def test_vectorized_rounding_is_round(values: list[float], digits: int) -> None:
    from hopscore.sql.cells import round_floats

    got = round_floats(values, digits)
    expected = [round(v, digits) for v in values]
    assert [repr(x) for x in got] == [repr(x) for x in expected]
