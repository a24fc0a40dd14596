"""Numbers only the official semantics explain get a footnote, a missing part of a prediction
is warned about in every format, and counts read as English ("1 predicted id is")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hopscore
from hopscore.text.words import agree, counted
from tests.conftest import run_cli

#: the benchmarks' packages: each built-in sample in <package>/samples/
PACKAGES = Path(__file__).resolve().parents[1] / "src" / "hopscore" / "benchmarks"
HOTPOT_SAMPLE = PACKAGES / "hotpotqa" / "samples"
BAMBOOGLE_SAMPLE = PACKAGES / "bamboogle" / "samples"


def test_bamboogle_exact_answer_with_f1_below_100_is_explained(tmp_path: Path) -> None:
    gold = BAMBOOGLE_SAMPLE / "gold.csv"
    result = run_cli("score", "bamboogle", "-g", gold, "-p", BAMBOOGLE_SAMPLE /
                     "predictions.jsonl", "-o", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: F1 is below 100 on exact answers that repeat a word" in result.stdout
    assert "(1 of 5 examples; docs/scoring.md)" in " ".join(result.stdout.split())
    notes = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))["notes"]
    assert len(notes) == 1 and "Bora Bora" in notes[0]


def test_no_note_without_the_surprise() -> None:
    files = hopscore.sample_files("bamboogle")
    report = hopscore.score("bamboogle", files.gold, {"0": "Jonas Arden"}, resamples=0)
    assert report.notes == [] and "notes" not in report.to_json()


def test_twowiki_evidence_above_100_is_explained() -> None:
    files = hopscore.sample_files("2wikimultihopqa")
    report = hopscore.score("2wikimultihopqa", files.gold, files.predictions,
                            aliases=files.aliases, resamples=0)
    assert any(value > 1 for value in report.groups["compositional"].metrics.values())
    assert len(report.notes) == 1
    assert report.notes[0].startswith("evidence scores above 100")


def _hotpot_records() -> list[dict[str, object]]:
    records = json.loads((HOTPOT_SAMPLE / "gold.json").read_text(encoding="utf-8"))
    return [{"id": r["_id"], "answer": r["answer"], "sp": r["supporting_facts"]}
            for r in records]


def test_universal_hotpotqa_without_sp_warns() -> None:
    gold = hopscore.sample_files("hotpotqa").gold
    answers_only = [{"id": r["id"], "answer": r["answer"]} for r in _hotpot_records()]
    report = hopscore.score("hotpotqa", gold, answers_only, resamples=0)
    assert report.metrics["em"] == 1.0 and report.metrics["sp_em"] == 0.0
    assert any('no prediction has "sp"; supporting-fact and joint metrics score 0 for every '
               "example" in w for w in report.warnings), report.warnings


def test_some_predictions_without_sp_are_counted(tmp_path: Path) -> None:
    gold = hopscore.sample_files("hotpotqa").gold
    records = _hotpot_records()
    del records[1]["sp"]
    report = hopscore.score("hotpotqa", gold, records, resamples=0)
    assert any('1 of 5 predictions has no "sp" (first: sample-hp-2); its supporting-fact and '
               "joint metrics score 0" in w for w in report.warnings), report.warnings
    official = tmp_path / "official.json"
    official.write_text(json.dumps({
        "answer": {r["id"]: r["answer"] for r in records},
        "sp": {r["id"]: r["sp"] for r in records if "sp" in r}}), encoding="utf-8")
    report = hopscore.score("hotpotqa", gold, official, resamples=0)
    assert any('1 of 5 predictions has no "sp"' in w for w in report.warnings), report.warnings


def test_official_file_without_sp_warns_once(tmp_path: Path) -> None:
    gold = hopscore.sample_files("hotpotqa").gold
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"answer": {r["id"]: r["answer"] for r in _hotpot_records()}}),
                    encoding="utf-8")
    report = hopscore.score("hotpotqa", gold, path, resamples=0)
    assert sum('"sp"' in w for w in report.warnings) == 1, report.warnings


def test_twowiki_universal_without_evidence_warns() -> None:
    files = hopscore.sample_files("2wikimultihopqa")
    gold = json.loads(files.gold.read_text(encoding="utf-8"))
    records = [{"id": r["_id"], "answer": r["answer"], "sp": r["supporting_facts"]}
               for r in gold]
    report = hopscore.score("2wikimultihopqa", files.gold, records, aliases=files.aliases,
                            resamples=0)
    assert any('no prediction has "evidence"; evidence and joint metrics score 0' in w
               for w in report.warnings), report.warnings
    assert not any('"sp"' in w for w in report.warnings)


@pytest.mark.parametrize(("n", "text"), [(1, "1 predicted id is"), (2, "2 predicted ids are")])
def test_counts_agree(n: int, text: str) -> None:
    assert f"{counted(n, 'predicted id')} {agree(n, 'is', 'are')}" == text


def test_one_extra_id_reads_as_english() -> None:
    files = hopscore.sample_files("bamboogle")
    report = hopscore.score("bamboogle", files.gold, {"0": "x", "9": "y"}, resamples=0)
    assert any(w.startswith("1 predicted id is not in the gold and was ignored (first: 9)")
               for w in report.warnings), report.warnings
    assert any(w.startswith("4 of 5 gold examples have no prediction; they score 0")
               for w in report.warnings), report.warnings
