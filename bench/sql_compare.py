"""Time SQL result comparison: hopscore vs the reference, and executor overhead vs bare SQLite.

    python bench/sql_compare.py [--rows 10000] [--reference /path/to/HybridDeepResearch]

Builds 10,000-row x 5-column result tables (id, name, score needing rounding, date, category)
and times, per scenario, ``hopscore.sql.table_match.compare_tables`` against the reference's
``compare_execution_results`` on the same tables, checking that (score, column precision,
column recall) are identical. The reference needs numpy, pandas, scipy and sqlglot: run this
script with a Python that has them (hopscore itself needs numpy and scipy). Without
``--reference`` only hopscore is timed.

It then times the two queries of one record through bare ``sqlite3`` and through the
sandboxed executor (worker processes) plus the comparison, and reports the overhead.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hopscore.sql.sandbox import SqlExecutor
from hopscore.sql.table_match import compare_tables

Rows = list[tuple[Any, ...]]


def gold_rows(n: int, rng: random.Random) -> Rows:
    cities = ["Albuquerque", "Santa Fe", "Las Cruces", "Roswell", "Taos", "Gallup"]
    return [
        (i, f"person {i % 3001}", round(rng.uniform(0, 1000), 3),
         f"20{10 + i % 15}-{1 + i % 12:02d}-{1 + i % 28:02d}", cities[i % len(cities)])
        for i in range(n)
    ]


def scenarios(n: int) -> dict[str, tuple[Rows, Rows, bool]]:
    rng = random.Random(7)
    gold = gold_rows(n, rng)
    shuffled = list(gold)
    rng.shuffle(shuffled)
    # Same answer, other row order, other letter case, unrounded floats, columns permuted.
    agent = [(c.upper(), s + 0.0001, i, d, name.title()) for i, name, s, d, c in shuffled]
    # One row wrong in two of five columns: 60% of the columns match, below the 75% boost.
    wrong = list(agent)
    c, s, i, _, name = wrong[n // 2]
    wrong[n // 2] = (c, s + 5.0, i, "1999-12-31", name)
    ordered = [(c.upper(), s + 0.0001, i, d, name.title()) for i, name, s, d, c in gold]
    return {
        "unordered_match": (agent, gold, False),
        "unordered_one_row_wrong": (wrong, gold, False),
        "ordered_match": (ordered, gold, True),
    }


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def as_columns(rows: Rows) -> dict[str, list[Any]]:
    return {f"c{j}": [row[j] for row in rows] for j in range(len(rows[0]))}


def bench_compare(n: int, reference: Path | None, repeat: int) -> None:
    ref = None
    if reference is not None:
        sys.path.insert(0, str(reference / "evaluation"))
        import execution_match as ref  # type: ignore[import-not-found,no-redef]
    print(f"comparison of {n:,}-row x 5-column tables (median of {repeat} runs for hopscore)")
    for name, (agent, gold, ordered) in scenarios(n).items():
        ours_s, ours = timed(lambda a=agent, g=gold, o=ordered: compare_tables(
            a, 5, g, 5, mode="reference", order_matters=o), repeat)
        line = f"  {name:26s} hopscore {ours_s * 1000:8.1f} ms  match={ours.match}"
        if ref is not None:
            def reference_run(a: Rows = agent, g: Rows = gold, o: bool = ordered) -> Any:
                return ref.compare_execution_results(
                    as_columns(a), as_columns(g), order_matters=o,
                    ignore_extra_columns_for_recall=True, float_digits=3)

            ref_s, expected = timed(reference_run, 1)
            same = (ours.raw_score, ours.column_precision, ours.column_recall) == tuple(expected)
            line += (f" | reference {ref_s:8.2f} s  speed-up {ref_s / ours_s:7.1f}x"
                     f"  identical={same}")
        print(line, flush=True)


def bench_execution(n: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite"
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE t (i INTEGER, name TEXT, score REAL, day TEXT, city TEXT)")
        conn.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", gold_rows(n, random.Random(3)))
        conn.commit()
        conn.close()
        gold_sql = "SELECT i, name, round(score, 3), day, city FROM t"
        agent_sql = "SELECT upper(city), score, i, day, name FROM t ORDER BY random()"

        def bare() -> Any:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                return c.execute(gold_sql).fetchall(), c.execute(agent_sql).fetchall()

        with SqlExecutor(2) as ex:
            ex.execute(db, "SELECT 1")  # start the workers

            def sandboxed() -> Any:
                gold = ex.execute(db, gold_sql, max_rows=100_000)
                agent = ex.execute(db, agent_sql, max_rows=100_000)
                return gold, agent

            def full() -> Any:
                gold, agent = sandboxed()
                return compare_tables(agent.rows, 5, gold.rows, 5)

            bare_s, _ = timed(bare, repeat)
            sandbox_s, _ = timed(sandboxed, repeat)
            full_s, verdict = timed(full, repeat)
    print(f"execution of one record's two queries ({n:,} rows each, median of {repeat}):")
    print(f"  bare sqlite3 execute+fetchall      {bare_s * 1000:8.1f} ms")
    print(f"  sandboxed executor                 {sandbox_s * 1000:8.1f} ms  "
          f"(+{(sandbox_s - bare_s) * 1000:.1f} ms, {sandbox_s / bare_s:.2f}x)")
    print(f"  sandboxed executor + comparison    {full_s * 1000:8.1f} ms  "
          f"(+{(full_s - bare_s) * 1000:.1f} ms, {full_s / bare_s:.2f}x)  match={verdict.match}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--reference", type=Path, default=None,
                        help="a HybridDeepResearch checkout (outside this repository)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    bench_compare(args.rows, args.reference, args.repeat)
    bench_execution(args.rows, args.repeat)


if __name__ == "__main__":
    main()
