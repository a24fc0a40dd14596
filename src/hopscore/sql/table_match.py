"""Compare an agent's result table with the gold one.

Modes:

``reference`` (default)
    The agent benchmark's S2SQL rule (spec §6.3) with all its leniencies, so verdicts equal the
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
from hopscore.sql.modes import MODES
from hopscore.sql.overlap import OverlapColumn, column_overlap
from hopscore.sql.signatures import (
    column_signature,
    hashes,
    may_be_equal,
    multiset_sum,
    pair_sum,
    row_signatures,
)

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


def _max_matching(edges: list[list[int]]) -> dict[int, int]:
    """A maximum matching of a bipartite graph (left ``i`` to each of ``edges[i]``), as a map
    left -> right: one breadth-first augmenting path per left vertex (Kuhn's algorithm)."""
    match_left: dict[int, int] = {}
    match_right: dict[int, int] = {}
    for start in range(len(edges)):
        reached_from: dict[int, int] = {}  # right vertex -> the left vertex that reached it
        seen = {start}
        queue = [start]
        free: int | None = None
        while queue and free is None:
            following: list[int] = []
            for left in queue:
                for right in edges[left]:
                    if right in reached_from:
                        continue
                    reached_from[right] = left
                    holder = match_right.get(right)
                    if holder is None:
                        free = right
                        break
                    if holder not in seen:
                        seen.add(holder)
                        following.append(holder)
                if free is not None:
                    break
            queue = following
        flip: int | None = free
        while flip is not None:  # flip the path back to start
            left = reached_from[flip]
            previous = match_left.get(left)
            match_left[left] = flip
            match_right[flip] = left
            flip = None if left == start else previous
    return match_left


def _classes(sums: list[int], same: Callable[[int, int], bool]) -> list[int]:
    """Group items that are equal under an exact equivalence: ``sums`` are their signatures
    (equal items have equal sums) and ``same`` the exact test, run against one member of each
    group only. Returns each item's group (the index of its first member)."""
    members: dict[int, list[int]] = {}
    group: list[int] = []
    for index, total in enumerate(sums):
        for first in members.get(total, ()):
            if same(first, index):
                group.append(first)
                break
        else:
            members.setdefault(total, []).append(index)
            group.append(index)
    return group


def _similarity(agent: _Table, gold: _Table, ordered: bool) -> tuple[float, list[tuple[int, int]]]:
    """The reference's Hungarian column score (1, 0.5 for one missing column, 0.5x for order).

    The cost matrix is 0 where the columns are equal and 1 elsewhere, so the minimal total cost
    of an assignment is the smaller width minus a maximum matching of the equal pairs; only
    pairs whose signatures agree (:mod:`hopscore.sql.signatures`) are tested.
    """
    if agent.width == 0:
        return 0.0, []
    extra = agent.width - gold.width
    if extra > MAX_EXTRA_COLUMNS or -extra > MAX_MISSING_COLUMNS:
        return 0.0, []
    test = ordered_equal if ordered else multiset_equal
    gold_signatures = [column_signature(gold.cells(j)) for j in range(gold.width)]
    buckets: dict[Any, list[int]] = {}
    unsigned: list[int] = []
    for j, signature in enumerate(gold_signatures):
        if signature is None:
            unsigned.append(j)
        else:
            buckets.setdefault(signature.exact, []).append(j)
    agent_signatures = [column_signature(agent.cells(i)) for i in range(agent.width)]
    # Columns without floats or JSON are equal exactly when their key counts are: an
    # equivalence, so each is counted against one column of its group only.
    columns = [agent.cells(i) for i in range(agent.width)] + \
        [gold.cells(j) for j in range(gold.width)]
    signatures = agent_signatures + gold_signatures
    exact = [sig is not None and not sig.has_float for sig in signatures]

    def same(x: int, y: int) -> bool:
        return test(columns[x], columns[y])

    group = _classes([hash((sig.exact, sig.numbers_hash)) if exact[k] and sig is not None
                      else -k - 1 for k, sig in enumerate(signatures)], same) \
        if not ordered else list(range(len(columns)))
    edges: list[list[int]] = []
    for i, signature in enumerate(agent_signatures):
        if signature is None:
            candidates = list(range(gold.width))
        else:
            candidates = sorted(buckets.get(signature.exact, []) + unsigned)
        row: list[int] = []
        for j in candidates:
            if not ordered and exact[i] and exact[agent.width + j]:
                if group[i] == group[agent.width + j]:
                    row.append(j)
            elif may_be_equal(signature, gold_signatures[j]) and test(agent.cells(i),
                                                                       gold.cells(j)):
                row.append(j)
        edges.append(row)
    matched = _max_matching(edges)
    min_cost = min(agent.width, gold.width) - len(matched)
    pairs = sorted(matched.items())
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
    """An alignment under which the rows are equal (multiset, or sequence), or None.

    Each gold column's candidates are the agent columns equal to it (as sequences, or as
    multisets: value signatures first, then counts); no alignment exists unless every gold
    column can get its own candidate (a maximum matching says). Unordered, an alignment must
    also give every pair of gold columns the same multiset of value pairs (pair signatures,
    checked while the alignment is built) and the same multiset of row signatures before rows
    are counted exactly. Ordered, equal columns make equal rows, so the first alignment is one.
    """
    if not gold.width <= agent.width <= max_width or agent.n_rows != gold.n_rows:
        return None
    a_keys = [keys(agent, i) for i in range(agent.width)]
    g_keys = [keys(gold, j) for j in range(gold.width)]
    if ordered:
        candidates = [[i for i in range(agent.width) if a_keys[i] == g_keys[j]]
                      for j in range(gold.width)]
    else:
        a_hash = [hashes(column) for column in a_keys]
        g_hash = [hashes(column) for column in g_keys]
        a_sum = [multiset_sum(h) for h in a_hash]
        g_sum = [multiset_sum(h) for h in g_hash]
        all_keys = a_keys + g_keys
        counts: dict[int, Counter[Any]] = {}

        def same_bag(x: int, y: int) -> bool:
            for k in (x, y):
                if k not in counts:
                    counts[k] = Counter(all_keys[k])
            return same_counts(counts[x], counts[y])

        group = _classes(a_sum + g_sum, same_bag)
        candidates = [[i for i in range(agent.width) if group[i] == group[agent.width + j]]
                      for j in range(gold.width)]
    inverse: list[list[int]] = [[] for _ in range(agent.width)]
    for j, column in enumerate(candidates):
        for i in column:
            inverse[i].append(j)
    if len(_max_matching(candidates)) < gold.width:
        return None
    chosen: list[int] = []
    if ordered:
        def assign(j: int) -> bool:
            if j == gold.width:
                return True
            for i in candidates[j]:
                if i not in chosen:
                    chosen.append(i)
                    if assign(j + 1):
                        return True
                    chosen.pop()
            return False

        return tuple((i, j) for j, i in enumerate(chosen)) if assign(0) else None
    ambiguous = any(len(column) > 1 for column in candidates)
    a_pairs: dict[tuple[int, int], int] = {}
    g_pairs: dict[tuple[int, int], int] = {}

    def pairs_agree(k: int, j: int, i: int) -> bool:
        """Whether agent columns (chosen[k], i) hold the value pairs of gold (k, j)."""
        if (k, j) not in g_pairs:
            g_pairs[(k, j)] = pair_sum(g_hash[k], g_hash[j])
        key = (chosen[k], i)
        if key not in a_pairs:
            a_pairs[key] = pair_sum(a_hash[chosen[k]], a_hash[i])
        return a_pairs[key] == g_pairs[(k, j)]

    gold_rows: Counter[Any] | None = None
    gold_row_signature: Any = None
    tried = 0

    def rows_equal() -> bool:
        nonlocal gold_rows, gold_row_signature
        if ambiguous:
            if gold_row_signature is None:
                gold_row_signature = row_signatures(g_hash)
            if not bool((row_signatures([a_hash[i] for i in chosen]) == gold_row_signature)
                        .all()):
                return False
        if gold_rows is None:
            gold_rows = Counter(zip(*g_keys, strict=True))
        projected = Counter(zip(*(a_keys[i] for i in chosen), strict=True))
        return same_counts(projected, gold_rows)

    def search(j: int) -> bool:
        nonlocal tried
        if j == gold.width:
            tried += 1
            return rows_equal()
        anchors = range(j) if j <= 16 else [*range(4), *range(j - 8, j)]
        for i in candidates[j]:
            if i in chosen or tried >= _MAX_ALIGNMENTS:
                continue
            if ambiguous and not all(pairs_agree(k, j, i) for k in anchors):
                continue
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
