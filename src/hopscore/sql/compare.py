"""Compare an agent's result table with the gold one.

Modes:

``reference`` (default)
    The HybridDeepResearch S2SQL rule (spec §6.3) with all its leniencies, so verdicts equal the
    leaderboard's: floats rounded to 3 digits, case-insensitive text, the JSON coverage rule,
    Hungarian column alignment (up to 3 extra agent columns, 1 missing gold column scores 0.5),
    columns compared as independent multisets unless the gold is ordered, the one-vs-many rule
    for ordered golds, and the boost that accepts 75% matching columns (each column sorted
    independently). Tables are read by position: duplicate or case-colliding column names stay
    distinct (the reference merges them).
``strict``
    The reference's strict mode: the Hungarian score alone, no one-vs-many rule, no boost.
``rows``
    No leniency beyond cell normalization: the agent's columns must cover every gold column
    (up to 3 extra agent columns), and the aligned rows must be equal as multisets, or as
    sequences when the gold is ordered. Cells compare after normalization (3-digit floats,
    stripped case-folded text, canonical JSON), exactly.
``spider``
    Spider's execution match: same number of columns, any column permutation, rows equal as a
    bag, or as a list when the gold is ordered; raw values.
``bird``
    BIRD's execution match: the sets of raw row tuples are equal.

Each :class:`Comparison` says which rule decided (``decided_by``) and carries flags such as
``boosted_by_overlap``, ``one_vs_many``, ``unordered_columns`` or ``percentage_rule``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from hopscore.sql.cells import (
    DIGITS,
    NOT_JSON,
    Column,
    multiset_equal,
    normalize,
    ordered_equal,
    round_floats,
    same_counts,
)
from hopscore.sql.overlap import OverlapColumn, column_overlap

MODES = ("reference", "strict", "rows", "spider", "bird")
MAX_EXTRA_COLUMNS = 3
MAX_MISSING_COLUMNS = 1
_MAX_ALIGNMENTS = 10_000


@dataclass(frozen=True, slots=True)
class Comparison:
    match: bool
    raw_score: float
    column_precision: float
    column_recall: float
    decided_by: str
    flags: tuple[str, ...] = ()
    #: (agent column, gold column) pairs of the alignment that decided, by position.
    alignment: tuple[tuple[int, int], ...] = ()


def _rounded(column: list[Any], types: set[type]) -> list[Any]:
    """The reference's table-wide float rounding, for one column."""
    if float not in types:
        return column
    if types == {float}:
        return round_floats(column, DIGITS)
    if types <= {float, int}:
        return list(map(round, column, repeat(DIGITS)))  # round() leaves integers as they are
    return [round(v, DIGITS) if type(v) is float else v for v in column]


class _Table:
    """A result table by column, with each column's comparison views built on demand."""

    def __init__(self, rows: Sequence[Sequence[Any]], width: int) -> None:
        self.rows = rows
        self.n_rows = len(rows)
        self.width = width if rows else 0
        columns = [list(map(itemgetter(j), rows)) for j in range(self.width)]
        self.types = [set(map(type, column)) for column in columns]
        self.raw = [_rounded(c, t) for c, t in zip(columns, self.types, strict=True)]
        self._cells: dict[int, Column] = {}
        self._overlap: dict[int, OverlapColumn] = {}

    def cells(self, index: int) -> Column:
        if index not in self._cells:
            self._cells[index] = Column(self.raw[index], rounded=True, types=self.types[index])
        return self._cells[index]

    def overlap(self, index: int) -> OverlapColumn:
        if index not in self._overlap:
            self._overlap[index] = OverlapColumn.build(self.raw[index], self.cells(index),
                                                       self.types[index])
        return self._overlap[index]

    def first_row(self) -> _Table:
        return _Table(self.rows[:1], self.width)


def _similarity(agent: _Table, gold: _Table, ordered: bool) -> tuple[float, list[tuple[int, int]]]:
    """The reference's Hungarian column score (1, 0.5 for one missing column, 0.5x for order)."""
    from scipy.optimize import linear_sum_assignment  # slow to import: only when comparing

    if agent.width == 0:
        return 0.0, []
    extra = agent.width - gold.width
    if extra > MAX_EXTRA_COLUMNS or -extra > MAX_MISSING_COLUMNS:
        return 0.0, []
    test = ordered_equal if ordered else multiset_equal
    cost = np.ones((agent.width, gold.width))
    for i in range(agent.width):
        for j in range(gold.width):
            if test(agent.cells(i), gold.cells(j)):
                cost[i, j] = 0.0
    rows, cols = linear_sum_assignment(cost)
    min_cost = round(float(cost[rows, cols].sum()))
    pairs = [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if cost[i, j] == 0.0]
    if extra < 0 and min_cost == 0:
        return 0.5, pairs
    if min_cost == 0:
        return 1.0, pairs
    if ordered and agent.n_rows == gold.n_rows:
        score, pairs = _similarity(agent, gold, False)
        return score * 0.5, pairs
    return 0.0, []


def _one_vs_many(top: _Table, many: _Table) -> bool:
    if not (top.n_rows == 1 and many.n_rows > 1):
        return False
    return _similarity(top, many.first_row(), True)[0] > 0.5


def _reference(agent: _Table, gold: _Table, order_matters: bool, strict: bool) -> Comparison:
    if agent.width == 0 and gold.width == 0:
        return Comparison(True, 1.0, 1.0, 1.0, "both_empty")
    if agent.width == 0 or gold.width == 0:
        return Comparison(False, 0.0, 0.0, 0.0, "one_empty")
    if agent.n_rows != gold.n_rows:
        if not strict and order_matters:
            if _one_vs_many(agent, gold):
                return Comparison(True, 1.0, 1.0, 1.0, "one_vs_many_agent_row", ("one_vs_many",))
            if _one_vs_many(gold, agent):
                omitted = ("gold_columns_omitted",) if agent.width < gold.width else ()
                return Comparison(True, 1.0, 1.0, 1.0, "one_vs_many_gold_row",
                                  ("one_vs_many", *omitted))
        return Comparison(False, 0.0, 0.0, 0.0, "row_count")
    pairs: list[tuple[int, int]] = []
    if agent.width + MAX_MISSING_COLUMNS < gold.width \
            or agent.width > gold.width + MAX_EXTRA_COLUMNS:
        eval_score = 0.0
    else:
        eval_score, pairs = _similarity(agent, gold, order_matters)
    overlap = column_overlap([agent.overlap(i) for i in range(agent.width)],
                             [gold.overlap(j) for j in range(gold.width)])
    precision, recall = overlap.precision, overlap.recall
    boost = bool(precision and recall and ((precision >= 0.75 and recall >= 0.75)
                                           or precision >= 1.0))
    score = 1.0 if boost and not strict else eval_score
    match = score >= 1.0
    flags: list[str] = []
    if overlap.unsortable:
        flags.append("unsortable_column")
    if any(agent.cells(i).has_json for i in range(agent.width)) \
            or any(gold.cells(j).has_json for j in range(gold.width)):
        flags.append("json_cells")
    if agent.width > gold.width:
        flags.append("extra_agent_columns")
    if eval_score >= 1.0:
        decided = "columns"
        if not order_matters:
            flags.append("unordered_columns")
            if _rows_match(agent, gold, _canonical, False, gold.width + MAX_EXTRA_COLUMNS) is None:
                flags.append("rows_mode_mismatch")
    elif match:
        decided = "overlap_boost"
        pairs = [(p, g) for p, g, _ in overlap.pairs]
        flags.append("boosted_by_overlap")
        if precision < 1.0:
            flags.append("gold_columns_unmatched")
        if order_matters:
            flags.append("order_ignored")
        rules = {rule for _, _, rule in overlap.pairs}
        if "numeric" in rules:
            flags.append("numeric_coercion")
        if "percent" in rules:
            flags.append("percentage_rule")
    else:
        decided = "mismatch"
    return Comparison(match, score, precision, recall, decided, tuple(flags), tuple(pairs))


def _canonical_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _canonical_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical_json(v) for v in value]
    key = normalize(value)
    return key if key is None or isinstance(key, (bool, int, float, str)) else str(key)


def _canonical(table: _Table, index: int) -> list[Any]:
    """The ``rows`` mode keys of a column: normalized cells, JSON in canonical form, exact."""
    cells = table.cells(index)
    if cells.parsed is None:
        return cells.keys
    return [
        key if parsed is NOT_JSON else "json:" + json.dumps(_canonical_json(parsed),
                                                            sort_keys=True)
        for key, parsed in zip(cells.keys, cells.parsed, strict=True)
    ]


def _raw(table: _Table, index: int) -> list[Any]:
    return [row[index] for row in table.rows]


def _rows_match(agent: _Table, gold: _Table, keys: Callable[[_Table, int], list[Any]],
                ordered: bool, max_width: int) -> tuple[tuple[int, int], ...] | None:
    """An alignment under which the rows are equal (multiset, or sequence), or None."""
    if not gold.width <= agent.width <= max_width or agent.n_rows != gold.n_rows:
        return None
    a_keys = [keys(agent, i) for i in range(agent.width)]
    g_keys = [keys(gold, j) for j in range(gold.width)]
    a_counts = [Counter(column) for column in a_keys]
    g_counts = [Counter(column) for column in g_keys]
    candidates = [
        [i for i in range(agent.width)
         if (a_keys[i] == g_keys[j] if ordered else same_counts(a_counts[i], g_counts[j]))]
        for j in range(gold.width)
    ]
    gold_rows = list(zip(*g_keys, strict=True))
    target: Any = gold_rows if ordered else Counter(gold_rows)
    tried = 0
    chosen: list[int] = []

    def search(j: int) -> bool:
        nonlocal tried
        if j == gold.width:
            tried += 1
            projected = list(zip(*(a_keys[i] for i in chosen), strict=True))
            if ordered:
                return bool(projected == target)
            return same_counts(Counter(projected), target)
        for i in candidates[j]:
            if i not in chosen and tried < _MAX_ALIGNMENTS:
                chosen.append(i)
                if search(j + 1):
                    return True
                chosen.pop()
        return False

    if search(0):
        return tuple((i, j) for j, i in enumerate(chosen))
    return None


def _rows_mode(agent: _Table, gold: _Table, ordered: bool, mode: str) -> Comparison:
    if agent.n_rows == 0 and gold.n_rows == 0:
        return Comparison(True, 1.0, 1.0, 1.0, "both_empty")
    if agent.n_rows == 0 or gold.n_rows == 0:
        return Comparison(False, 0.0, 0.0, 0.0, "one_empty")
    if mode == "bird":
        same = set(map(tuple, agent.rows)) == set(map(tuple, gold.rows))
        return Comparison(same, float(same), float(same), float(same), "row_set")
    if agent.n_rows != gold.n_rows:
        return Comparison(False, 0.0, 0.0, 0.0, "row_count")
    if mode == "spider":
        found = _rows_match(agent, gold, _raw, ordered, gold.width) \
            if agent.width == gold.width else None
    else:
        found = _rows_match(agent, gold, _canonical, ordered, gold.width + MAX_EXTRA_COLUMNS)
    decided = "row_sequence" if ordered else "row_bag"
    flags = ("extra_agent_columns",) if found and agent.width > gold.width else ()
    ok = float(found is not None)
    return Comparison(ok == 1.0, ok, ok, ok, decided, flags, found or ())


def compare_tables(agent_rows: Sequence[Sequence[Any]], agent_width: int,
                   gold_rows: Sequence[Sequence[Any]], gold_width: int, *,
                   mode: str = "reference", order_matters: bool = False) -> Comparison:
    """Compare two result tables given as rows (read by position) and their column counts.

    ``order_matters`` is whether the gold query is ordered (the caller picks the reference's or
    the SQLite reading; see :mod:`hopscore.sql.order`). A table without rows has no columns for
    the reference modes, as in the reference, so "empty vs empty" always matches.
    """
    if mode not in MODES:
        raise ValueError(f"unknown comparison mode {mode!r}; expected one of {', '.join(MODES)}")
    agent = _Table(agent_rows, agent_width)
    gold = _Table(gold_rows, gold_width)
    if mode in ("reference", "strict"):
        return _reference(agent, gold, order_matters, strict=mode == "strict")
    return _rows_mode(agent, gold, order_matters, mode)
