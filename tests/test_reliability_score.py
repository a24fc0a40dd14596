"""``hopscore score`` as a hostile environment meets it: a second writer, missing, wrong-kind,
read-only and full output locations, an output that is an input, and predictions that match
no gold id. Each fault is one line and exit 2 (exit 1 for the zero overlap), never exit 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli
from tests.fsfaults import holding, run_in_mount

GOLD = FIXTURES / "hotpotqa/dev_small.json"


def _predictions(path: Path, ids: list[str] | None = None) -> Path:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    chosen = ids if ids is not None else [g["_id"] for g in gold]
    path.write_text(json.dumps({"answer": {i: "yes" for i in chosen}, "sp": {}}),
                    encoding="utf-8")
    return path


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    return lines[0]


def test_a_second_writer_is_refused_and_the_output_is_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    pred = _predictions(tmp_path / "p.json")
    assert run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", out).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with holding(out) as pid:
        result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", out)
    assert result.returncode == 2
    line = _one_error_line(result.stderr)
    assert str(out) in line and f"pid {pid}" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_bad_output_locations_exit_2_naming_the_path(tmp_path: Path) -> None:
    pred = _predictions(tmp_path / "p.json")
    (tmp_path / "a_file").write_text("x")
    cases = {
        tmp_path / "a_file": "is a file, expected a directory",
        tmp_path / "a_file" / "out": "is a file, not a folder",
    }
    for out, message in cases.items():
        result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", out)
        assert result.returncode == 2, result
        line = _one_error_line(result.stderr)
        assert str(out) in line and message in line
    assert (tmp_path / "a_file").read_text() == "x"


def test_an_output_directory_that_holds_the_input_is_refused(tmp_path: Path) -> None:
    same = tmp_path / "same"
    same.mkdir()
    # a scores.jsonl of another score run, used as universal predictions
    pred = _predictions(same / "scores.jsonl")
    original = pred.read_bytes()
    result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", same)
    assert result.returncode == 2
    line = _one_error_line(result.stderr)
    assert "is the input --predictions" in line or "which is the input" in line, line
    assert pred.read_bytes() == original
    assert sorted(p.name for p in same.iterdir()) == ["scores.jsonl"]


def test_predictions_that_match_no_gold_id_exit_1(tmp_path: Path) -> None:
    pred = _predictions(tmp_path / "p.json", ["other-1", "other-2"])
    result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", tmp_path / "out")
    assert result.returncode == 1, result
    assert "none of the 2 predicted ids" in result.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert any("none of the 2 predicted ids" in w for w in metrics["warnings"])
    empty = tmp_path / "empty.json"
    empty.write_text('{"answer": {}, "sp": {}}')
    result = run_cli("score", "hotpotqa", "-g", GOLD, "-p", empty)
    assert result.returncode == 1 and "holds no predictions" in result.stderr
    # one matching id is enough
    pred = _predictions(tmp_path / "p1.json", ["hp-01", "other"])
    assert run_cli("score", "hotpotqa", "-g", GOLD, "-p", pred).returncode == 0


def test_read_only_and_full_file_systems(tmp_path: Path) -> None:
    pred = _predictions(tmp_path / "p.json")
    disk = tmp_path / "disk"
    args = ["score", "hotpotqa", "-g", GOLD, "-p", pred, "-o", disk / "out"]
    read_only = run_in_mount(disk, args, read_only=True)
    assert read_only.returncode == 2, read_only
    assert "read-only file system" in _one_error_line(read_only.stderr)
    full = run_in_mount(disk, args, size_kb=1024, fill_kb=1000)
    assert full.returncode == 2, full
    assert "no space left" in _one_error_line(full.stderr)
    assert str(disk / "out") in full.stderr


@pytest.mark.slow
def test_a_disk_that_fills_while_writing(tmp_path: Path) -> None:
    """The location check passes (enough space at the start), then scores.jsonl fills the
    disk: exit 2 naming the output, and no half-written file is left."""
    rows = ["Question,Answer,Answer_corrected"]
    predictions = []
    for i in range(12000):
        rows.append(f"Which city is number {i} in the long made-up list of cities?,City {i},")
        predictions.append(json.dumps({"id": str(i), "answer": f"City {i}"}))
    gold = tmp_path / "gold.csv"
    gold.write_text("\n".join(rows) + "\n")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("\n".join(predictions) + "\n")
    disk = tmp_path / "disk"
    result = run_in_mount(disk, ["score", "bamboogle", "-g", gold, "-p", pred, "-o", disk / "out",
                                 "--resamples", "0"], size_kb=2048, fill_kb=900,
                          after=f"ls -A {disk}/out > {tmp_path}/left.txt")
    assert result.returncode == 2, result
    line = _one_error_line(result.stderr)
    assert "no space left on device" in line and str(disk / "out") in line
    assert (tmp_path / "left.txt").read_text().split() == []
