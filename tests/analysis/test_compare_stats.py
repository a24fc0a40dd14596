"""compare's statistics: one test per row, stars from adjusted p, power, clusters, scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hopscore.analysis.compare import compare_pair, compare_to_baseline
from hopscore.analysis.compare_records import CompareOptions
from hopscore.analysis.scored import GroupColumn, ScoredSet, load_scored
from hopscore.inference.clusters import ClusterSpec
from hopscore.inference.multiplicity import adjust
from tests.analysis.builders import judge_rows, write_jsonl
from tests.conftest import run_cli


def judged(tmp_path, name, verdicts):
    ids = [f"t{i:02d}" for i in range(len(verdicts))]
    return write_jsonl(tmp_path / f"{name}.jsonl", judge_rows(ids, list(verdicts)))


def test_no_star_where_the_exact_test_does_not_reject(tmp_path):
    """The issue's case: 20 questions, 0 vs 5 flips. McNemar p = 0.0625: no star, and the
    interval (exact conditional) includes 0 beside it."""
    base = [True] * 5 + [False] * 15
    new = [True] * 10 + [False] * 10
    pair = compare_to_baseline([load_scored(judged(tmp_path, "a", base)),
                                load_scored(judged(tmp_path, "b", new))])[0]
    row = pair.row("correct")
    assert row.test.p == pytest.approx(0.0625)
    assert not row.significant and row.interval.low <= 0 <= row.interval.high
    out = tmp_path / "c.json"
    result = run_cli("compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "+25.00*" not in result.stdout and "+25.00" in result.stdout
    data = json.loads(out.read_text())["comparisons"][0]["metrics"]["correct"]
    assert data["test"]["name"] == "mcnemar-exact" and data["significant"] is False


def test_the_star_follows_the_adjusted_p_value(tmp_path):
    rng = np.random.default_rng(3)
    base = rng.random(300) < 0.5
    sets = [load_scored(judged(tmp_path, "base", base.tolist()))]
    for k, lift in enumerate((0.0, 0.0, 0.0, 0.06)):
        flips = rng.random(300) < lift
        sets.append(load_scored(judged(tmp_path, f"c{k}", (base | flips).tolist())))
    holm = compare_to_baseline(sets)
    raw = compare_to_baseline(sets, options=CompareOptions(correction="none"))
    rows = [row for pair in holm for row in pair.rows()]
    p = [row.test.p for row in rows]
    assert [row.test.p_adjusted for row in rows] == pytest.approx(adjust(p, "holm"))
    for row in rows:
        assert row.significant == (row.test.p_adjusted < 0.05)
    # some row is significant unadjusted but not after Holm, or every p is far from 0.05
    raw_rows = [row for pair in raw for row in pair.rows()]
    assert all(r.test.p_adjusted == r.test.p for r in raw_rows)
    assert sum(r.significant for r in raw_rows) >= sum(r.significant for r in rows)


def test_mid_p_and_bh_are_recorded(tmp_path):
    a = judged(tmp_path, "a", [True] * 8 + [False] * 12)
    b = judged(tmp_path, "b", [True] * 14 + [False] * 6)
    out = tmp_path / "c.json"
    result = run_cli("compare", a, b, "--mid-p", "--correction", "bh", "-o", out)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["options"]["mid_p"] is True and data["family"]["correction"] == "bh"
    assert data["comparisons"][0]["metrics"]["correct"]["test"]["name"] == "mcnemar-mid-p"


def test_underpowered_rows_are_marked(tmp_path):
    base = [i % 2 == 0 for i in range(60)]
    new = list(base)
    new[1] = True  # one flip: far below what 60 questions can detect
    pair = compare_to_baseline([load_scored(judged(tmp_path, "a", base)),
                                load_scored(judged(tmp_path, "b", new))])[0]
    row = pair.row("correct")
    assert not row.significant and row.underpowered and row.mde > abs(row.delta)
    result = run_cli("compare", tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    assert "+1.67†" in result.stdout


def scored(label, values, groups=None, clusters=None):
    n = values.shape[0]
    names = ("em", "f1")[: values.shape[1]]
    return ScoredSet(label, __import__("pathlib").Path(label), "scores", None,
                     [str(i) for i in range(n)], names, values,
                     groups or {}, np.zeros(n, bool), [None] * n, [()] * n, {},
                     clusters=clusters)


def test_continuous_metrics_get_a_permutation_test_and_bca_interval():
    rng = np.random.default_rng(0)
    f1_a = rng.random(400)
    f1_b = np.clip(f1_a + rng.normal(0.04, 0.2, 400), 0, 1)
    em = (rng.random(400) < 0.5).astype(float)
    a = scored("a", np.column_stack([em, f1_a]))
    b = scored("b", np.column_stack([em, f1_b]))
    row = compare_pair(a, b).row("f1")
    assert row.test.name == "permutation" and row.test.permutations == 10_000
    assert row.interval.method == "bca" and row.interval.low < row.delta < row.interval.high
    assert row.test.p < 0.01 and row.mde == pytest.approx(
        2.8016 * np.std(f1_b - f1_a, ddof=1) / 20, rel=1e-3)


def test_clustered_comparison_flips_whole_clusters():
    rng = np.random.default_rng(1)
    clusters = np.repeat(np.arange(30), 10)
    base = (rng.random(30) < 0.5).repeat(10).astype(float)
    new = base.copy()
    new[clusters < 4] = 1.0  # four whole clusters improve
    labels = [f"c{c}" for c in clusters]
    a = scored("a", base[:, None], clusters=labels)
    b = scored("b", new[:, None])
    row = compare_pair(a, b).row("em")
    assert row.test.name == "cluster-permutation"
    assert row.interval.details["clusters"] == 30 and row.interval.method == "bca"
    plain = compare_pair(scored("a", base[:, None]), b).row("em")
    assert plain.test.name == "mcnemar-exact" and plain.test.p < row.test.p
    explicit = compare_pair(scored("a", base[:, None], groups={
        "table": GroupColumn([f"c{i}" for i in range(30)], clusters.astype(np.int32))}), b,
        CompareOptions(clusters=ClusterSpec(field="table")))
    assert explicit.row("em").test.p == pytest.approx(row.test.p)
    assert explicit.cluster == "table" and explicit.clusters == 30


def test_a_derived_metric_is_bootstrapped_not_averaged(tmp_path):
    from hopscore import benchmarks
    from hopscore.scores.scoring import score_files
    from tests.parity.common import SAMPLES

    folder = SAMPLES / "feverous"
    changed = tmp_path / "p2.jsonl"
    changed.write_text((folder / "predictions.jsonl").read_text().replace('"SUPPORTS"',
                                                                          '"REFUTES"'))
    bench = benchmarks.get("feverous")
    a = score_files(bench, folder / "gold.jsonl", folder / "predictions.jsonl", tmp_path / "a")
    score_files(bench, folder / "gold.jsonl", changed, tmp_path / "b")
    pair = compare_pair(load_scored(tmp_path / "a"), load_scored(tmp_path / "b"))
    row = pair.row("evidence_f1")
    assert row.derived and row.test.name == "paired-bootstrap"
    assert row.a == pytest.approx(a.metrics["evidence_f1"])  # the reported value, not a mean
    assert pair.row("label_accuracy").delta == pytest.approx(-0.2)
    assert pair.row("label_accuracy").mde_unreachable  # 5 examples: nothing can be significant
