"""Differential fuzzing of the comparison against the reference evaluator's own function.

    /path/to/hdr-venv/bin/python bench/sql_parity_fuzz.py --reference /path/to/HybridDeepResearch \
        [--cases 3000] [--seed 1]

Draws random result tables (integers, floats near rounding and tolerance boundaries, large
close numbers, text in mixed case, numeric text, JSON text, NULLs, BLOBs, mixed types), derives
an agent table from each gold one (rows or columns permuted, cells tweaked, columns dropped or
added, values scaled by 100, cut to one row, turned to text), and checks that
``compare_tables`` gives the reference's ``compare_execution_results`` (score, column precision,
column recall) in default and strict mode. Cases where the reference raises (mixed-type columns)
are counted apart: hopscore gives a verdict there by design. Needs a Python with the
reference's dependencies (numpy, pandas, scipy, sqlglot); the reference code is imported from
the given checkout, never copied here.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hopscore.sql.table_match import compare_tables

Columns = list[list[Any]]
TEXT = ["a", "A", " a ", "b", "B", "5", "10", "9", "x1", "0.25", "25", "ß", "SS", "", "[1]",
        "[ 1 ]", '{"k": 1}', '{"k": 1, "j": 2}', "{}", "[TRUE]", "[true]", "nan", "inf", "1e2",
        " 7 "]
FLOATS = [100.001, 100.002, 1000.001, 1000.0, 0.25, 25.0, 1000000.0, 1000004.0, 1e8 + 1000.005]


def cell(rng: random.Random, kind: str) -> Any:
    if rng.random() < 0.05 and kind != "mixed":
        return None
    if kind == "int":
        return rng.choice([rng.randint(-3, 12), rng.choice([0, 1, 100, 1000000, 1000003])])
    if kind == "float":
        if rng.random() < 0.5:
            return rng.randint(0, 5) + rng.choice([0.0, 0.5, 0.0004, 0.0006, 0.001])
        return rng.choice([rng.uniform(-10, 10), *FLOATS])
    if kind == "big":
        value = 1_000_000 + rng.choice([0, 1, 2, 5, 8, 10, 11, 0.001, 0.5, -1])
        return float(value) if rng.random() < 0.5 else value
    if kind == "text":
        return rng.choice(TEXT)
    if kind == "blob":
        return rng.choice([b"\x00", b"ab"])
    return rng.choice([1, "1", 1.0, None, "a", 2.5])


def table(rng: random.Random, rows: int, width: int) -> Columns:
    kinds = rng.choices(["int", "float", "text", "big", "mixed", "blob"],
                        weights=[3, 3, 4, 2, 1, 1], k=width)
    return [[cell(rng, kind) for _ in range(rows)] for kind in kinds]


def derive(rng: random.Random, gold: Columns) -> Columns:
    rows = len(gold[0])
    cols = [list(c) for c in gold]
    if rng.random() < 0.3:
        order = list(range(rows))
        rng.shuffle(order)
        cols = [[c[i] for i in order] for c in cols]
    for _ in range(rng.choice([0, 0, 1, 2])):
        j, i = rng.randrange(len(cols)), rng.randrange(rows)
        value = cols[j][i]
        if isinstance(value, str):
            cols[j][i] = value.upper()
        elif isinstance(value, float):
            cols[j][i] = value + rng.choice([0.0004, 0.001, 0.01, 1e-6, 5.0])
        elif isinstance(value, int):
            cols[j][i] = float(value) + rng.choice([0.0, 0.0001, 1])
        else:
            cols[j][i] = rng.choice([None, 1, "x"])
    if rng.random() < 0.2 and len(cols) > 1:
        del cols[rng.randrange(len(cols))]
    if rng.random() < 0.2:
        cols.append(table(rng, rows, 1)[0])
    if rng.random() < 0.2:
        rng.shuffle(cols)
    if rng.random() < 0.15:
        cols = [[v * 100 if type(v) in (int, float) else v for v in c] for c in cols]
    if rng.random() < 0.1 and rows > 1:
        cols = [c[:1] for c in cols]
    if rng.random() < 0.1:
        cols = [[None if v is None else str(v) for v in c] for c in cols]
    return cols


def rows_of(cols: Columns) -> list[tuple[Any, ...]]:
    return list(zip(*cols, strict=True)) if cols and cols[0] else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(args.reference.resolve() / "evaluation"))
    import execution_match as ref  # type: ignore[import-not-found]

    rng = random.Random(args.seed)
    agree = differ = crashed = 0
    for number in range(args.cases):
        gold = table(rng, rng.choice([1, 2, 3, 4, 6, 20, 80]), rng.choice([1, 2, 3, 4, 5]))
        agent = derive(rng, gold) if rng.random() < 0.85 else table(
            rng, rng.choice([1, 2, 4, 6]), rng.choice([1, 2, 3, 4]))
        ordered, strict = rng.random() < 0.4, rng.random() < 0.2
        try:
            expected = ref.compare_execution_results(
                {f"c{i}": c for i, c in enumerate(agent)}, {f"c{i}": c for i, c in enumerate(gold)},
                order_matters=ordered, strict=strict, ignore_extra_columns_for_recall=True,
                float_digits=3)
        except Exception:
            crashed += 1
            continue
        got = compare_tables(rows_of(agent), len(agent), rows_of(gold), len(gold),
                             mode="strict" if strict else "reference", order_matters=ordered)
        if (got.raw_score, got.column_precision, got.column_recall) == tuple(expected):
            agree += 1
        else:
            differ += 1
            print(f"case {number}: ordered={ordered} strict={strict}\n  gold {gold}\n  agent "
                  f"{agent}\n  reference {expected}\n  hopscore {got}")
    print(f"{args.cases} cases: {agree} agree, {differ} differ, {crashed} crash the reference")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
