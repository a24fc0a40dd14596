"""Tables of many model answers cut each to the terminal's width (a looping answer once filled
~190 lines of ``compare``); the whole text is one command away: ``analyze --id``."""

from __future__ import annotations

import json
from pathlib import Path

from rich.cells import cell_len

from hopscore.benchmarks import sample_files
from tests.conftest import run_cli

LOOP = "the island of the band that wrote Salt Hours is " * 60


def _two_runs(tmp_path: Path) -> tuple[Path, Path]:
    found = {s.benchmark: s for s in sample_files.samples()}
    with found["bamboogle"].paths() as (gold, predictions, _aliases):
        rows = [json.loads(line) for line in predictions.read_text().splitlines()]
        looping = tmp_path / "looping.jsonl"
        looping.write_text("".join(json.dumps({**row, "answer": LOOP if row["id"] in ("0", "2")
                                               else row["answer"]}) + "\n" for row in rows))
        for name, file in (("a", predictions), ("b", looping)):
            result = run_cli("score", "bamboogle", "-g", gold, "-p", file, "-o", tmp_path / name)
            assert result.returncode == 0, result.stderr
    return tmp_path / "a", tmp_path / "b"


def test_compare_cuts_flipped_answers_and_analyze_id_shows_them_whole(tmp_path: Path) -> None:
    a, b = _two_runs(tmp_path)
    for columns in (80, 120):
        result = run_cli("compare", a, b, env={"COLUMNS": str(columns)})
        assert result.returncode == 0, result.stderr
        flipped = result.stdout[result.stdout.index("Flipped examples"):].splitlines()
        assert len(flipped) <= 12, result.stdout  # title, header, 2 rows, caption: not pages
        assert all(cell_len(line) <= columns for line in flipped), flipped
        rows = [line for line in flipped if line.startswith("│ 0 ")]
        assert len(rows) == 1 and "the island of" in rows[0] and "…" in rows[0]
        assert f"hopscore analyze {b} --id ID" in " ".join(" ".join(flipped).split())
    whole = run_cli("analyze", b, "--id", "0", "-o", tmp_path / "example.json",
                    env={"COLUMNS": "80"})
    assert whole.returncode == 0, whole.stderr
    example = json.loads((tmp_path / "example.json").read_text())["examples"][0]
    assert example["prediction"] == LOOP and example["gold"] == ["Jonas Arden"]
    assert example["categories"]["outcome"] == "wrong"
    shown = " ".join(part.strip(" │") for line in whole.stdout.splitlines()
                     for part in line.split("│")[2:3])
    assert " ".join(shown.split()).count("Salt Hours") == 60
    unknown = run_cli("analyze", b, "--id", "nope")
    assert unknown.returncode == 2 and "no example with id 'nope'" in unknown.stderr
