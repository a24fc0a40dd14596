"""``fitting_line``: a row within its caps is encoded once (the line the results file writes)
and never walked; it answers exactly when the full capping would leave the row as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.engine import ResultLog
from hopscore.engine.resume import run_key_of
from hopscore.files import rowcap
from hopscore.files.jsontext import dumps_encodable

# texts with control characters, astral characters and lone surrogates (escaped in a line)
TEXT = st.text(st.characters(blacklist_categories=()), max_size=40)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20)


def slow_cap(row: dict[str, Any], cells: int, size: int) -> tuple[dict[str, Any], list[str]]:
    """cap_row without its fast path: every text checked, the line's size measured."""
    cut: list[str] = []
    out = {name: rowcap._clip_all(value, cells, name, cut) for name, value in row.items()}
    if not cut and rowcap.json_size(out) <= size:
        return row, []
    return out, cut or ["(over the size)"]


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=5), st.integers(0, 60), st.integers(0, 400))
def test_a_line_is_given_exactly_for_a_row_the_caps_leave_as_it_is(
        row: dict[str, Any], cells: int, size: int) -> None:
    line = rowcap.fitting_line(row, cells, size)
    expected, cut = slow_cap(row, cells, size)
    if line is not None:
        assert line == dumps_encodable(row)
        assert cut == [] and expected is row
        assert rowcap.cap_row(row, cells, size) == (row, [])
    elif not any("\ud800" <= c <= "\udfff" for c in json.dumps(row, ensure_ascii=False)):
        # passed on to the long way only when that cuts something (a lone surrogate is
        # written as a 6-byte escape but measured as 3 bytes: a line may be over by that)
        assert cut != []


def test_a_row_with_a_long_text_in_a_short_line_is_not_given_a_line() -> None:
    row = {"a": "x" * 30, "b": [{"c": "y" * 5}]}
    assert rowcap.fitting_line(row, 100, 10_000) is not None
    assert rowcap.fitting_line(row, 29, 10_000) is None  # the line is longer than 29 anyway
    # 10 characters, a line of 19 characters and 29 bytes
    assert rowcap.fitting_line({"a": "é" * 10}, 10, 29) is not None
    assert rowcap.fitting_line({"a": "é" * 10}, 10, 28) is None
    assert rowcap.fitting_line({"a": "é" * 10}, 9, 100) is None


def test_a_line_handed_to_the_log_is_written_as_it_is(tmp_path: Path) -> None:
    log = ResultLog(tmp_path / "rows.jsonl", run_key_of)
    row = {"run_key": "k1", "text": "caf\u00e9 \ud800"}
    line = rowcap.fitting_line(row, 100, 10_000)
    assert line is not None
    log.append(row, line=line)
    log.append({"run_key": "k2", "text": "plain"})
    log.close()
    written = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert written == [dumps_encodable(row), json.dumps({"run_key": "k2", "text": "plain"})]
    assert json.loads(written[0])["text"] == row["text"]


def test_a_row_result_crosses_to_another_process_without_its_line() -> None:
    import pickle

    from hopscore.engine import RowResult

    result = RowResult({"run_key": "k"}, False, None, line='{"run_key": "k"}')
    assert pickle.loads(pickle.dumps(result)) == RowResult({"run_key": "k"}, False, None)
