"""Pruning by value signatures never changes a verdict, and makes the factorial case fast.

The oracles are the plain algorithms the comparison used before pruning: the full cost matrix
with scipy's Hungarian assignment, and the search over every column alignment.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from hopscore.sql import table_match
from hopscore.sql.cells import multiset_equal, ordered_equal
from tests.sql.dbs import factorial_columns


def brute_similarity(agent: Any, gold: Any, ordered: bool) -> float:
    if agent.width == 0:
        return 0.0
    extra = agent.width - gold.width
    if extra > 3 or -extra > 1:
        return 0.0
    test = ordered_equal if ordered else multiset_equal
    cost = np.ones((agent.width, gold.width))
    for i in range(agent.width):
        for j in range(gold.width):
            if test(agent.cells(i), gold.cells(j)):
                cost[i, j] = 0.0
    rows, cols = linear_sum_assignment(cost)
    min_cost = round(float(cost[rows, cols].sum()))
    if extra < 0 and min_cost == 0:
        return 0.5
    if min_cost == 0:
        return 1.0
    if ordered and agent.n_rows == gold.n_rows:
        return brute_similarity(agent, gold, False) * 0.5
    return 0.0


def brute_rows_match(agent: Any, gold: Any, ordered: bool) -> bool:
    if not gold.width <= agent.width <= gold.width + 3 or agent.n_rows != gold.n_rows:
        return False
    a_keys = [table_match._canonical(agent, i) for i in range(agent.width)]
    g_keys = [table_match._canonical(gold, j) for j in range(gold.width)]
    target = list(zip(*g_keys, strict=True))
    for chosen in permutations(range(agent.width), gold.width):
        projected = list(zip(*(a_keys[i] for i in chosen), strict=True))
        if projected == target if ordered else Counter(projected) == Counter(target):
            return True
    return False


# What SQLite returns: integers, floats, text, BLOBs and NULL (never a bool).
POOL = [0, 1, 2, 1.0, 2.5, 1000000.0, 1000005.0, 1000016.0, "a", "A ", "b", None, "1",
        '{"k": 1}', "[1, 2]", "{}", b"\x00"]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 5), st.integers(-1, 3), st.integers(0, 7), st.booleans(), st.randoms())
def test_pruned_similarity_equals_the_full_assignment(gold_width: int, extra: int, n_rows: int,
                                                      ordered: bool,
                                                      rnd: random.Random) -> None:
    gold_rows = [tuple(rnd.choice(POOL) for _ in range(gold_width)) for _ in range(n_rows)]
    columns = [list(c) for c in zip(*gold_rows, strict=True)] if n_rows else \
        [[] for _ in range(gold_width)]
    agent_columns = []
    for _ in range(max(1, gold_width + extra)):
        column = list(rnd.choice(columns))
        if rnd.random() < 0.5:
            rnd.shuffle(column)
        if column and rnd.random() < 0.3:
            column[rnd.randrange(len(column))] = rnd.choice(POOL)
        agent_columns.append(column)
    agent_rows = list(zip(*agent_columns, strict=True)) if n_rows else []
    agent = table_match._Table(agent_rows, len(agent_columns))
    gold = table_match._Table(gold_rows, gold_width)
    assert table_match._similarity(agent, gold, ordered)[0] == \
        brute_similarity(agent, gold, ordered)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 8), st.booleans(), st.randoms())
def test_pruned_alignment_search_equals_every_permutation(gold_width: int, extra: int,
                                                          n_rows: int, ordered: bool,
                                                          rnd: random.Random) -> None:
    pool = [0, 1, 2, "a", "A", None, 2.5, 2.0]
    gold_rows = [tuple(rnd.choice(pool) for _ in range(gold_width)) for _ in range(n_rows)]
    # The agent: the gold's columns permuted, its rows shuffled or not, plus extra columns
    # (copies of gold columns with some values moved between rows, or random).
    columns = [list(column) for column in zip(*gold_rows, strict=True)] \
        if n_rows else [[] for _ in range(gold_width)]
    for _ in range(extra):
        copy = list(rnd.choice(columns))
        rnd.shuffle(copy)
        columns.append(copy)
    rnd.shuffle(columns)
    agent_rows = list(zip(*columns, strict=True)) if n_rows else []
    if not ordered:
        rnd.shuffle(agent_rows)
    if rnd.random() < 0.3 and agent_rows:
        row = list(agent_rows[0])
        row[rnd.randrange(len(row))] = "changed"
        agent_rows[0] = tuple(row)
    agent = table_match._Table(agent_rows, gold_width + extra)
    gold = table_match._Table(gold_rows, gold_width)
    found = table_match._rows_match(agent, gold, table_match._canonical, ordered, gold_width + 3)
    assert (found is not None) == brute_rows_match(agent, gold, ordered)
    if found is not None:  # the alignment found really gives the gold's rows
        chosen = [i for i, _ in sorted(found, key=lambda pair: pair[1])]
        keys = [table_match._canonical(agent, i) for i in chosen]
        projected = list(zip(*keys, strict=True)) if n_rows else []
        target = list(zip(*[table_match._canonical(gold, j) for j in range(gold_width)],
                          strict=True)) if n_rows else []
        assert projected == target if ordered else Counter(projected) == Counter(target)


def factorial_case(n: int) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    gold_columns, agent_columns = factorial_columns(n)
    return list(zip(*agent_columns, strict=True)), list(zip(*gold_columns, strict=True))


def test_the_factorial_case_keeps_its_verdict() -> None:
    agent, gold = factorial_case(3000)
    result = table_match.compare_tables(agent, 8, gold, 5, mode="reference")
    # Every column is a permutation of the same values: the reference matches column by
    # column, while no alignment of 5 of the 8 columns gives the gold's rows.
    assert result.match and result.decided_by == "columns"
    assert "rows_mode_mismatch" in result.flags
    assert not table_match.compare_tables(agent, 8, gold, 5, mode="rows").match
    # The same rows with their columns permuted are found without trying every alignment.
    permuted = [(r[3], r[1], r[4], r[0], r[2], r[0], r[1], r[2]) for r in gold]
    assert table_match.compare_tables(permuted, 8, gold, 5, mode="rows").match
