"""SQLite databases the SQL tests build for themselves (no downloaded data).

``build_shop`` writes one database with every kind of cell the comparison has rules for: text
in mixed case, integers, floats that need rounding, NULLs, ISO dates, JSON text, BLOBs, a
column literally named ``last_update``, a 'Walter White', a mixed-type column, two tables whose
join repeats column names, and a 20,000-row table.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

BIG_ROWS = 20_000

PEOPLE = [
    # id, name, city, age, score, joined, profile (JSON), avatar (BLOB), last_update
    (1, "Walter White", "Albuquerque", 50, 3.14159, "2008-01-20", '{"job": "teacher", "kids": 2}',
     b"\x00\x01", "2013-09-29"),
    (2, "Jesse Pinkman", "Albuquerque", 24, 2.71828, "2008-01-20", '{"job": "cook"}', b"\xff",
     "2013-09-29"),
    (3, "Saul Goodman", "albuquerque", None, 1.0005, "2009-04-26", "{}", None, None),
    (4, "Gus Fring", "Santa Fe", 52, 0.3333333, "2009-05-03", '{"job": "owner", "kids": 0}',
     b"gf", "2011-10-09"),
    (5, "Skyler White", "ALBUQUERQUE", 39, 99.9999, "2008-01-20", '[1, 2, 3]', None, "2013-09-29"),
    (6, "Hank Schrader", "Albuquerque ", 44, 100.0004, "2008-02-10", '{"job": "dea", "kids": 0}',
     None, "2013-09-15"),
]
ORDERS = [
    # id, person_id, amount, status, placed
    (1, 1, 10.5, "paid", "2012-01-01"),
    (2, 1, 20.25, "PAID", "2012-02-01"),
    (3, 2, 5.0, "refunded", "2012-02-03"),
    (4, 4, 1000000.0, "paid", "2012-03-01"),
    (5, 5, 0.125, "open", None),
    (6, 6, 33.3333, "paid", "2012-03-05"),
]
NUMS = [
    # id, x, pct, txt, n
    (1, 0.25, 25.0, "1.50", 1),
    (2, 0.5, 50.0, "2", 2),
    (3, 0.75, 75.0, "abc", 3),
    (4, 1.0, 100.0, "10", 100),
]
MIXED = [(1, 1), (2, "a"), (3, 2.5), (4, None)]
NEAR = [(1, 1000005.0), (2, 1000016.0), (3, 1000010.0), (4, 1000000.0)]


def build_shop(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT, age INTEGER, "
            "score REAL, joined TEXT, profile TEXT, avatar BLOB, last_update TEXT)")
        conn.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", PEOPLE)
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, person_id INTEGER, "
                     "amount REAL, status TEXT, placed TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDERS)
        conn.execute("CREATE TABLE nums (id INTEGER PRIMARY KEY, x REAL, pct REAL, txt TEXT, "
                     "n INTEGER)")
        conn.executemany("INSERT INTO nums VALUES (?, ?, ?, ?, ?)", NUMS)
        conn.execute("CREATE TABLE mixed (id INTEGER PRIMARY KEY, v)")
        conn.executemany("INSERT INTO mixed VALUES (?, ?)", MIXED)
        conn.execute("CREATE TABLE near (id INTEGER PRIMARY KEY, v REAL)")
        conn.executemany("INSERT INTO near VALUES (?, ?)", NEAR)
        conn.execute("CREATE TABLE big (i INTEGER PRIMARY KEY, s TEXT, f REAL)")
        conn.executemany(
            "INSERT INTO big VALUES (?, ?, ?)",
            ((i, f"row{i % 977}", (i * 7919 % 10007) / 7.0) for i in range(BIG_ROWS)),
        )
    conn.close()
    return path


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def factorial_columns(n: int, seed: int = 1) -> tuple[list[list[int]], list[list[int]]]:
    """The factorial-alignment case: 5 gold columns, each a permutation of ``range(n)``, and 8
    agent columns, each a gold column shifted by 1 to 8 rows (every column holds the same
    values, no alignment of 5 agent columns gives the gold's rows)."""
    import random

    rnd = random.Random(seed)
    gold = []
    for _ in range(5):
        column = list(range(n))
        rnd.shuffle(column)
        gold.append(column)
    agent = [gold[i % 5][s:] + gold[i % 5][:s] for i, s in enumerate(range(1, 9))]
    return gold, agent
