"""The append-only, crash-tolerant results file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.engine import ResultLog
from hopscore.errors import HopscoreError, InputError


def key_of(row: dict[str, Any]) -> str | None:
    key = row.get("k")
    return key if isinstance(key, str) else None


def ok(row: dict[str, Any]) -> bool:
    return not row.get("failed")


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_append_then_finalize_in_order(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    log = ResultLog(path, key_of)
    assert log.load(ok) == 0
    for key in ["c", "a", "b"]:
        log.append({"k": key, "v": key.upper()})
    assert [r["k"] for r in lines(path)] == ["c", "a", "b"]  # completion order while running
    assert log.finalize(["a", "b", "c"]) == 0
    assert [r["k"] for r in lines(path)] == ["a", "b", "c"]


def test_reload_skips_done_and_latest_row_wins(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    log = ResultLog(path, key_of)
    log.append({"k": "a", "failed": True}, done=False)
    log.append({"k": "b"})
    log.close()
    again = ResultLog(path, key_of)
    assert again.load(ok) == 2
    assert again.done_keys() == {"b"} and not again.is_done("a")
    again.append({"k": "a", "v": 1})  # the retry succeeds
    assert again.finalize(["a", "b"]) == 1  # the failed row is superseded
    assert lines(path) == [{"k": "a", "v": 1}, {"k": "b"}]
    assert again.read("a") == {"k": "a", "v": 1}


def test_latest_gives_the_last_row_of_each_asked_key_in_asked_order(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    log = ResultLog(path, key_of)
    assert log.latest(["a"]) == {}  # no file yet
    log.append({"k": "a", "failed": True}, done=False)
    log.append({"k": "old"})  # a key of other settings
    log.append({"k": "b", "v": 2})
    log.append({"k": "a", "v": 1})  # the retry, while the file is still open
    assert log.latest(["b", "a", "missing"]) == {"b": {"k": "b", "v": 2}, "a": {"k": "a", "v": 1}}
    assert list(log.latest(["b", "a"])) == ["b", "a"]
    log.close()
    again = ResultLog(path, key_of)
    again.load(ok)
    assert again.latest(["a"]) == {"a": {"k": "a", "v": 1}}


def test_torn_last_line_is_cut_and_appending_continues(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"k": "a"}\n{"k": "b", "v": "half')
    log = ResultLog(path, key_of)
    assert log.load(ok) == 1
    assert log.torn_bytes == len(b'{"k": "b", "v": "half')
    log.append({"k": "b"})
    log.finalize(["a", "b"])
    assert lines(path) == [{"k": "a"}, {"k": "b"}]


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"k": "a"}')
    log = ResultLog(path, key_of)
    assert log.load(ok) == 1
    log.append({"k": "b"})
    log.finalize(["a", "b"])
    assert lines(path) == [{"k": "a"}, {"k": "b"}]


def test_a_broken_middle_line_or_foreign_row_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"k": "a"}\nnot json\n{"k": "b"}\n')
    with pytest.raises(InputError, match=r"out\.jsonl:2: unreadable line"):
        ResultLog(path, key_of).load(ok)
    path.write_bytes(b'{"k": "a"}\n{"other": 1}\n')
    with pytest.raises(InputError, match=r"out\.jsonl:2: .*no run key"):
        ResultLog(path, key_of).load(ok)
    path.write_bytes(b'[1, 2]\n')
    with pytest.raises(InputError, match=r"out\.jsonl:1: .*non-object"):
        ResultLog(path, key_of).load(ok)


def test_finalize_refuses_when_rows_are_missing_and_drops_foreign_keys(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    log = ResultLog(path, key_of)
    log.append({"k": "old"})
    log.append({"k": "a"})
    with pytest.raises(HopscoreError, match="1 row is not finished"):
        log.finalize(["a", "b"])
    log.append({"k": "b"})
    assert log.finalize(["a", "b"]) == 1
    assert [r["k"] for r in lines(path)] == ["a", "b"]
    with pytest.raises(ValueError):
        log.finalize(["a", "a"])


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'\n{"k": "a"}\n\n')
    assert ResultLog(path, key_of).load(ok) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abcdef"), st.booleans()), max_size=30),
    st.integers(0, 40),
)
def test_any_history_with_any_torn_tail_finalizes_to_one_row_per_key(
    tmp_path_factory: pytest.TempPathFactory, history: list[tuple[str, bool]], cut: int
) -> None:
    path = tmp_path_factory.mktemp("log") / "out.jsonl"
    log = ResultLog(path, key_of)
    for n, (key, done) in enumerate(history):
        log.append({"k": key, "n": n, "failed": not done}, done=done)
    log.close()
    data = path.read_bytes() if path.exists() else b""
    if data and cut:
        path.write_bytes(data[: max(0, len(data) - cut)])  # a crash mid-write
    again = ResultLog(path, key_of)
    again.load(ok)
    for key in "abcdef":
        if not again.is_done(key):
            again.append({"k": key, "n": -1})
    again.finalize(list("abcdef"))
    rows = lines(path)
    assert [r["k"] for r in rows] == list("abcdef")
    assert all(not r.get("failed") for r in rows)
