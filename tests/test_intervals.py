"""Intervals inside ``hopscore score``: metrics.json, groups, methods, derived metrics, table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, Example, Prediction, Predictions
from hopscore.inference.ci import bca_mean, moments, wilson
from hopscore.inference.spec import IntervalSpec
from hopscore.inference.values import ExampleValues
from hopscore.scores.display import report_table
from hopscore.scores.scoring import score_examples, score_files
from tests.analysis.builders import write_hotpot_gold, write_hotpot_predictions
from tests.conftest import run_cli


def binary_and_constant(gold: Path, predictions: Path, tmp_path: Path) -> tuple[set, set]:
    score_files(benchmarks.get("hotpotqa"), gold, predictions, tmp_path / "values", resamples=0)
    rows = [json.loads(x) for x in (tmp_path / "values" / "scores.jsonl").read_text().splitlines()]
    values = {name: {r["metrics"][name] for r in rows} for name in rows[0]["metrics"]}
    binary = {name for name, seen in values.items() if seen <= {0.0, 1.0}}
    return binary, {name for name in binary if len(values[name]) == 1}


@pytest.fixture
def hotpot(tmp_path: Path) -> tuple[Path, Path]:
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 30)
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong={1, 4, 7, 9, 12, 20}, wrong_sp={2, 3, 5})
    data = json.loads(predictions.read_text())
    for i in (5, 13, 17, 21, 25):  # partly right answers: F1 strictly between 0 and 1
        data["answer"][records[i]["_id"]] = "the office of " + records[i]["answer"] + " here"
    predictions.write_text(json.dumps(data))
    return gold, predictions


def test_metrics_are_unchanged_and_every_metric_has_an_interval(hotpot, tmp_path):
    gold, predictions = hotpot
    bench = benchmarks.get("hotpotqa")
    plain = score_files(bench, gold, predictions, None, resamples=0)
    with_ci = score_files(bench, gold, predictions, tmp_path / "out")
    assert with_ci.metrics == plain.metrics  # same floats, unrounded
    assert plain.ci is None and "ci" not in plain.to_json()
    written = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert written["metrics"] == plain.metrics
    assert set(written["ci"]) == set(written["metrics"])
    assert written["ci_settings"]["method"] == "auto"
    binary, _ = binary_and_constant(gold, predictions, tmp_path)
    assert {"em", "f1", "sp_prec"} & binary == {"em", "sp_prec"}
    for name, interval in written["ci"].items():
        assert interval["level"] == 0.95
        assert interval["method"] == ("wilson" if name in binary else "bca"), name
        assert interval["low"] <= written["metrics"][name] + 1e-12
        assert interval["high"] >= written["metrics"][name] - 1e-12
    for group in written["groups"].values():
        assert set(group["ci"]) == set(group["metrics"])


def test_intervals_equal_the_methods_applied_to_the_per_example_values(hotpot, tmp_path):
    gold, predictions = hotpot
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, tmp_path)
    rows = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    for subset, ci in ((rows, report.ci), ([r for r in rows if r["groups"]["type"] == "bridge"],
                                            report.groups["bridge"].ci)):
        em = [r["metrics"]["em"] for r in subset]
        assert (ci["em"].low, ci["em"].high) == pytest.approx(
            wilson(sum(em), len(em), 0.95), abs=1e-12)
        f1 = [r["metrics"]["f1"] for r in subset]
        assert (ci["f1"].low, ci["f1"].high) == pytest.approx(bca_mean(moments(f1), 0.95),
                                                             abs=1e-12)


def test_a_group_holding_every_example_has_the_overall_interval(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 12)
    for record in records:
        record["level"] = "hard"
    gold.write_text(json.dumps(records))
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong={0, 5})
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None)
    assert report.groups["hard"].ci == report.ci


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson", "bootstrap", "bca", "t"])
def test_every_method_is_recorded_and_applies_where_it_can(hotpot, method, tmp_path):
    gold, predictions = hotpot
    binary, constant = binary_and_constant(gold, predictions, tmp_path)
    spec = IntervalSpec(method=method, level=0.9, resamples=300, seed=4)
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None, intervals=spec)
    for name, interval in report.ci.items():
        binary_only = method in ("wilson", "clopper-pearson")
        expected = method if name in binary or not binary_only else "bca"
        if name in constant and method not in ("wilson", "clopper-pearson"):
            expected = "wilson"  # never a point
        assert interval.method == expected, name
        assert interval.level == 0.9
        assert interval.low <= report.metrics[name] <= interval.high
        if interval.method == "bootstrap":
            assert (interval.resamples, interval.seed) == (300, 4)
        if expected != method:
            assert "applies to binary" in interval.note or "single point" in interval.note


def test_a_binary_interval_is_never_a_point(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 20)
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong=set())  # all right
    for method in ("auto", "bootstrap", "bca", "t", "clopper-pearson"):
        report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None,
                             intervals=IntervalSpec(method=method, resamples=200))
        em = report.ci["em"]
        assert report.metrics["em"] == 1.0
        assert em.high == 1.0 and em.low < 0.9, method
        assert em.method in ("wilson", "clopper-pearson")


def test_terminal_table_prints_symmetric_intervals_as_plus_minus_and_others_as_bounds(hotpot):
    gold, predictions = hotpot
    report = score_files(benchmarks.get("hotpotqa"), gold, predictions, None)
    console = Console(width=250, record=True)
    console.print(report_table(report))
    text = console.export_text()
    em, ci = report.metrics["em"], report.ci["em"]
    assert f"{100 * em:.2f} [{100 * ci.low:.2f}, {100 * ci.high:.2f}]" in text  # lopsided at n=30
    assert "95% intervals: Wilson (em, recall, sp_em" in text.replace("\n", " ")


def test_cli_interval_options(hotpot, tmp_path):
    gold, predictions = hotpot
    result = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, "-o", tmp_path / "a",
                     "--resamples", "0")
    assert result.returncode == 0, result.stderr
    assert "±" not in result.stdout and "intervals" not in result.stdout
    assert "ci" not in json.loads((tmp_path / "a" / "metrics.json").read_text())
    result = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, "-o", tmp_path / "b",
                     "--seed", "7", "--resamples", "250", "--ci", "bootstrap", "--ci-level", "0.8")
    assert result.returncode == 0, result.stderr
    ci = json.loads((tmp_path / "b" / "metrics.json").read_text())["ci"]["f1"]
    assert (ci["seed"], ci["resamples"], ci["method"], ci["level"]) == (7, 250, "bootstrap", 0.8)
    assert "80% intervals: percentile bootstrap" in result.stdout.replace("\n", " ")
    for bad in (["--ci", "normal"], ["--ci-level", "95"]):
        result = run_cli("score", "hotpotqa", "-g", gold, "-p", predictions, *bad)
        assert result.returncode == 2 and result.stderr.startswith("error: --ci"), result.stderr


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
    assert f1 is not None and f1.method == "bca" and f1.resamples == 500
    assert f1.details["derived"] is True
    assert f1.low < report.metrics["f1"] < f1.high
    assert report.ci["precision"].method == "bca" and report.ci["precision"].resamples is None


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
    rows = store.group_rows()
    assert list(rows[("type", "x")]) == [1] and list(rows[("level", "hard")]) == [2]
    assert rows[("type", "x")].itemsize == 4  # a row number in 4 bytes, not an int object
    assert ("level", "easy") not in rows
    assert list(store.column(1, [0, 2])) == [0.5, 1.0]
    assert store.column(1, [0, 2]).itemsize == 8  # type: ignore[attr-defined]
    labels, codes = store.group_columns()["level"]
    assert labels == ["hard"] and list(codes) == [-1, -1, 0]
    assert store.matrix().itemsize == 8
