"""Bootstrap intervals inside ``hopscore score``: metrics.json, groups, derived metrics, table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, Example, Prediction, Predictions
from hopscore.display import report_table
from hopscore.intervals import ExampleValues
from hopscore.scoring import score_examples, score_files
from hopscore.stats import mean_intervals
from tests.analysis.builders import write_hotpot_gold, write_hotpot_predictions
from tests.conftest import run_cli


@pytest.fixture
def hotpot(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 30)
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong={1, 4, 7, 9, 12, 20}, wrong_sp={2, 3, 5})
    return gold, predictions


def test_metrics_are_unchanged_and_every_metric_has_an_interval(hotpot, tmp_path):
    gold, predictions = hotpot
    bench = benchmarks.get("hotpotqa")
    plain = score_files(bench, gold, predictions, None, resamples=0)
    with_ci = score_files(bench, gold, predictions, tmp_path / "out", resamples=500, seed=3)
    assert with_ci.metrics == plain.metrics  # same floats, unrounded
    assert plain.ci is None and "ci" not in plain.to_json()
    written = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert written["metrics"] == plain.metrics
    assert set(written["ci"]) == set(written["metrics"])
    for name, interval in written["ci"].items():
        assert interval["resamples"] == 500 and interval["seed"] == 3
        assert interval["low"] <= written["metrics"][name] + 1e-12
        assert interval["high"] >= written["metrics"][name] - 1e-12
    for group in written["groups"].values():
        assert set(group["ci"]) == set(group["metrics"])


def test_interval_equals_the_bootstrap_of_the_per_example_values(hotpot, tmp_path):
    gold, predictions = hotpot
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, tmp_path, resamples=400)
    rows = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    names = list(rows[0]["metrics"])
    values = np.array([[r["metrics"][n] for n in names] for r in rows])
    expected = mean_intervals(values, names, reported=report.metrics, resamples=400, seed=0)
    assert report.ci == expected
    bridge = [r for r in rows if r["groups"]["type"] == "bridge"]
    bridge_values = np.array([[r["metrics"][n] for n in names] for r in bridge])
    group = report.groups["bridge"]
    assert group.ci == mean_intervals(bridge_values, names, reported=group.metrics,
                                      resamples=400, seed=0)


def test_a_group_holding_every_example_has_the_overall_interval(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 12)
    for record in records:
        record["level"] = "hard"
    gold.write_text(json.dumps(records))
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong={0, 5})
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None, resamples=300)
    assert report.groups["hard"].ci == report.ci


def test_terminal_table_shows_value_plus_minus_half_width(hotpot):
    gold, predictions = hotpot
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None, resamples=300)
    console = Console(width=250, record=True)
    console.print(report_table(report))
    text = console.export_text()
    em = report.metrics["em"]
    half = report.ci["em"].half_width
    assert f"{100 * em:.2f} ± {100 * half:.2f}" in text
    assert "bootstrap interval (300 resamples, seed 0)" in text.replace("\n", " ")


def test_cli_resamples_option(hotpot, tmp_path):
    gold, predictions = hotpot
    result = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, "-o", tmp_path / "a",
                     "--resamples", "0")
    assert result.returncode == 0, result.stderr
    assert "±" not in result.stdout
    assert "ci" not in json.loads((tmp_path / "a" / "metrics.json").read_text())
    result = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, "-o", tmp_path / "b",
                     "--seed", "7", "--resamples", "250")
    assert result.returncode == 0, result.stderr
    assert "±" in result.stdout
    ci = json.loads((tmp_path / "b" / "metrics.json").read_text())["ci"]["em"]
    assert (ci["seed"], ci["resamples"]) == (7, 250)


# --- a benchmark with a derived metric, like FEVEROUS' evidence F1 from macro P and R -------


class DerivedF1(Benchmark[Example, Prediction]):
    name = "derived-test"
    title = "Derived"
    metrics = ("precision", "recall", "f1")

    def __init__(self, rows: list[tuple[float, float]]) -> None:
        self.rows = rows

    def load_gold(self, path, *, aliases=None):  # pragma: no cover - not used
        raise NotImplementedError

    def load_predictions(self, path):  # pragma: no cover - not used
        raise NotImplementedError

    def score(self, example: Example, prediction: Prediction | None) -> dict[str, float]:
        p, r = self.rows[int(example.id)]
        return {"precision": p, "recall": r}

    def active_metrics(self, predictions) -> tuple[str, ...]:
        return ("precision", "recall")

    def finalize(self, means: Mapping[str, float]) -> dict[str, float]:
        p, r = means["precision"], means["recall"]
        return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r)}


def test_derived_metric_gets_an_interval_recomputed_from_bootstrap_means():
    rng = np.random.default_rng(0)
    rows = [(float(a), float(b)) for a, b in rng.random((80, 2))]
    bench = DerivedF1(rows)
    examples = [Example(id=str(i)) for i in range(80)]
    predictions = Predictions({str(i): Prediction(id=str(i)) for i in range(80)}, "x", "test")
    report = score_examples(bench, examples, predictions, resamples=500)
    f1 = report.ci["f1"]
    assert f1 is not None and f1.se_method == "bootstrap"
    assert f1.low < report.metrics["f1"] < f1.high
    assert report.ci["precision"].se_method == "analytic"


def test_derived_metric_that_cannot_be_recomputed_is_marked_and_warned():
    rows = [(1.0, 1.0)] + [(0.0, 0.0)] * 7
    bench = DerivedF1(rows)
    examples = [Example(id=str(i)) for i in range(8)]
    predictions = Predictions({str(i): Prediction(id=str(i)) for i in range(8)}, "x", "test")
    report = score_examples(bench, examples, predictions, resamples=300)
    assert report.ci["f1"] is None
    assert report.to_json()["ci"]["f1"] is None
    assert any("no confidence interval" in w and "f1" in w for w in report.warnings)


def test_example_values_store_is_compact_and_pads_late_group_keys():
    store = ExampleValues(("a", "b"))
    store.add({"a": 1.0, "b": 0.5}, {})
    store.add({"a": 0.0, "b": 0.25}, {"type": "x"})
    store.add({"a": 1.0, "b": 1.0}, {"type": "y", "level": "hard"})
    assert store.matrix().tolist() == [[1.0, 0.5], [0.0, 0.25], [1.0, 1.0]]
    assert store.rows_of("type", "x").tolist() == [1]
    assert store.rows_of("level", "hard").tolist() == [2]
    assert store.rows_of("level", "easy").tolist() == []
    labels, codes = store.group_columns()["level"]
    assert labels == ["hard"] and list(codes) == [-1, -1, 0]
    assert store.matrix().itemsize == 8
