"""``first_record`` reads the first record from the start of a file: a small first read, more
only while the record runs past it (up to 4 MiB), whatever the record's size."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.hub.source import first_record


@pytest.mark.parametrize("size", [10, 70_000, 300_000, 2_000_000])
def test_a_first_record_of_any_size_up_to_4_mib_is_read(tmp_path: Path, size: int) -> None:
    record = {"_id": "a", "context": [["T", ["é" * (size // 2), "x" * (size // 2)]]]}
    path = tmp_path / "gold.json"
    path.write_text(json.dumps([record, {"_id": "b"}], ensure_ascii=False), encoding="utf-8")
    assert first_record(path) == record


def test_one_object_and_a_bom_and_leading_blanks(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    record = {"id": "q", "text": "y" * 200_000}
    path.write_bytes(b"\xef\xbb\xbf" + b" " * 100_000 + json.dumps(record).encode())
    assert first_record(path) == record


@pytest.mark.parametrize("text", ["[", "[1, ", '[{"a": ', "nope", '["x" 1]'])
def test_nothing_to_read_is_none(tmp_path: Path, text: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert first_record(path) == (1 if text == "[1, " else "x" if text == '["x" 1]' else None)


def test_a_first_record_past_4_mib_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    path.write_text(json.dumps([{"t": "z" * (5 << 20)}]))
    assert first_record(path) is None
