"""BrowseComp-Plus: hopscore against the official ``evaluate_run.py`` (numbers in
``expected/browsecomp_plus.json``; how they were made: ``bcplus_runs.py``).

Where the official script is wrong, the test pins both readings: its figures (over run files,
the last calibration bin left out) equal hopscore's ``official`` ones, and hopscore's own
figures (over all 830 queries, every bin) follow from the same verdicts.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.browsecomp_plus.summary import summarize
from hopscore.scores.scoring import score_files
from tests.conftest import shared_file
from tests.parity import bcplus_runs as gen

EXPECTED = json.loads((Path(__file__).parent / "expected" / "browsecomp_plus.json")
                      .read_text(encoding="utf-8"))["scenarios"]
N_QUERIES = 830


@pytest.fixture(scope="module")
def gold_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    qrels = shared_file("browsecomp-plus/topics-qrels")
    folder = tmp_path_factory.mktemp("bcplus") / "gold"
    shutil.copytree(qrels, folder / "topics-qrels")
    gen.write_gold(gen.read_qrels(qrels / "qrel_evidence.txt"),
                   folder / "browsecomp_plus_decrypted.jsonl")
    return folder


@pytest.mark.parametrize("scenario", gen.SCENARIOS, ids=lambda s: s.name)
def test_official_figures(scenario: gen.Scenario, gold_dir: Path, tmp_path: Path) -> None:
    expected = EXPECTED[scenario.name]
    qrels = gold_dir / "topics-qrels"
    run = tmp_path / scenario.name
    gen.write_run(scenario, gen.read_qrels(qrels / "qrel_evidence.txt"),
                  gen.read_qrels(qrels / "qrel_golds.txt"), run)
    bench = benchmarks.get("browsecomp-plus")
    examples = bench.load_gold(gold_dir)
    predictions = bench.load_predictions(run)
    summary = summarize(examples, predictions.by_id)

    # the official figures: over the run files, the last calibration bin left out
    assert summary.n_run_files == expected["n_results"]
    correct = sorted(q for q, p in predictions.by_id.items() if p.correct)
    assert correct == expected["correct_ids"]
    assert round(summary.official_accuracy * 100, 2) == expected["accuracy_percent"]
    assert round(summary.official_recall * 100, 2) == expected["recall_percent"]
    assert summary.official_recall * summary.n_run_files == pytest.approx(
        expected["recall_sum"], abs=1e-9)
    assert summary.official_tool_calls == pytest.approx(expected["avg_tool_stats"], abs=1e-12)
    assert summary.calibration.n == expected["n_calibration"]
    assert summary.calibration.official == pytest.approx(
        expected["calibration_error_unrounded"], abs=1e-9)
    assert round(summary.calibration.official, 2) == expected["calibration_error_percent"]

    # hopscore's figures: every gold query in the denominator, every bin counted
    report = score_files(bench, gold_dir, run, None)
    assert report.n_gold == N_QUERIES
    assert len(report.missing_ids) == N_QUERIES - expected["n_results"]
    assert report.metrics["accuracy"] == pytest.approx(
        len(expected["correct_ids"]) / N_QUERIES, abs=1e-12)
    assert report.metrics["evidence_recall"] == pytest.approx(
        expected["recall_sum"] / N_QUERIES, abs=1e-12)
    assert report.metrics["search_calls"] == pytest.approx(
        expected["avg_tool_stats"]["search"] * expected["n_results"] / N_QUERIES, abs=1e-9)
    assert summary.accuracy == pytest.approx(report.metrics["accuracy"], abs=1e-12)
    bins = summary.calibration.bins
    assert sum(b.n for b in bins) == expected["n_calibration"]
    if expected["n_calibration"] >= 200:
        # the official figure is this one without its last bin
        kept = sum(b.n / summary.calibration.n * (b.confidence - b.accuracy) ** 2
                   for b in bins[:-1])
        assert 100 * kept ** 0.5 == pytest.approx(summary.calibration.official, abs=1e-9)
    if 100 <= expected["n_calibration"] < 200:
        assert expected["calibration_error_unrounded"] == 0.0  # its only bin was dropped
        assert summary.calibration.error > 0


TREC = json.loads((Path(__file__).parent / "expected" / "browsecomp_plus.json")
                  .read_text(encoding="utf-8"))["trec"]


@pytest.mark.parametrize("spec", gen.TREC_SCENARIOS, ids=lambda s: s[0])
def test_trec_eval_figures(spec: tuple[str, int, float, int, int], gold_dir: Path,
                           tmp_path: Path) -> None:
    expected = TREC[spec[0]]
    qrels = gold_dir / "topics-qrels"
    run = tmp_path / "run.trec"
    gen.write_trec(*spec, gen.read_qrels(qrels / "qrel_evidence.txt"),
                   gen.read_qrels(qrels / "qrel_golds.txt"), run)
    scores: list = []
    bench = benchmarks.get("browsecomp-plus")
    from hopscore.scores.scoring import score_examples

    report = score_examples(bench, bench.load_gold(qrels), bench.load_predictions(run),
                            scores.append, resamples=0)
    by_id = {s.id: s.metrics for s in scores}
    for metric, value in report.metrics.items():
        assert value == pytest.approx(expected[metric], abs=1e-12), metric
        for qid, per_query in expected[f"{metric}_first20"].items():
            assert by_id[qid][metric] == pytest.approx(per_query, abs=1e-12), (metric, qid)
