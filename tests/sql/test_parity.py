"""Parity with the reference S2SQL evaluator on a corpus of our own cases.

``tests/fixtures/sql_parity/cases.jsonl`` holds the records; ``expected.jsonl`` the verdicts
the reference evaluator gave on them (run outside this repository by ``make_expected.py``,
default and ``--strict``); ``differences.json`` the cases where hopscore deliberately gives
another verdict, with the bug class and what hopscore gives instead. Every other case must
agree on every verdict field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.sql.match_job import MatchOptions, evaluate
from hopscore.sql.records import parse_record
from hopscore.sql.sandbox import SqlExecutor
from tests.conftest import FIXTURES
from tests.sql.dbs import build_shop

CORPUS = FIXTURES / "sql_parity"
FIELDS = ("match", "score", "reason", "agent_sql", "agent_sql_source", "column_precision",
          "column_recall", "order_sensitive", "agent_exec_error", "gold_exec_error")
CASES = {c["instance_id"]: c for c in map(json.loads, (CORPUS / "cases.jsonl").open())}
EXPECTED = [json.loads(line) for line in (CORPUS / "expected.jsonl").open()]
DIFFERENCES: dict[str, Any] = json.loads((CORPUS / "differences.json").read_text())


@pytest.fixture(scope="module")
def parity_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parity").resolve()
    build_shop(root / "shop.sqlite")
    return root


def ours(case_id: str, mode: str, root: Path, executor: SqlExecutor) -> dict[str, Any]:
    from hopscore.errors import Location

    record = parse_record(CASES[case_id], Location("cases.jsonl", line=1))
    options = MatchOptions(db_root=root, db_template="{db}.sqlite", timeout_s=1.0, compare=mode)
    verdict = evaluate(record, options, executor).to_json()
    return json.loads(json.dumps({k: verdict[k] for k in FIELDS}).replace(str(root), "<root>"))


def test_corpus_is_complete() -> None:
    assert {row["instance_id"] for row in EXPECTED} == set(CASES)
    assert {row["mode"] for row in EXPECTED} == {"reference", "strict"}
    assert set(DIFFERENCES) <= set(CASES)
    for name, entry in DIFFERENCES.items():
        assert entry["class"] and entry["why"], name


@pytest.mark.parametrize("row", EXPECTED, ids=lambda r: f"{r['instance_id']}-{r['mode']}")
def test_parity(row: dict[str, Any], parity_root: Path, executor: SqlExecutor) -> None:
    case_id, mode = row["instance_id"], row["mode"]
    got = ours(case_id, mode, parity_root, executor)
    difference = DIFFERENCES.get(case_id)
    if difference is None:
        assert row["crash"] is None, f"the reference crashed on {case_id}: {row['crash']}"
        assert got == row["verdict"]
        return
    # A deliberate difference: hopscore gives what differences.json says, and the reference
    # really did something else (crashed, or another verdict).
    for key, value in difference["ours"].get(mode, difference["ours"].get("any", {})).items():
        assert got[key] == value, (key, got[key], value)
    if row["crash"] is None:
        assert any(got[k] != row["verdict"][k] for k in FIELDS), "no longer differs"
