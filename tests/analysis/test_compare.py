"""``hopscore compare`` on score/run directories, judge and sql-match files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from hopscore.analysis.compare import compare_pair, compare_to_baseline
from hopscore.analysis.compare_records import CompareOptions
from hopscore.analysis.scored import load_many, load_scored
from hopscore.errors import HopscoreError
from tests.analysis.builders import (
    judge_rows,
    scored_dir,
    sql_row,
    write_hotpot_gold,
    write_jsonl,
)
from tests.conftest import run_cli


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 40)
    return {
        "gold": gold,
        # base: wrong on 0..9; new: wrong on 8..11 -> 8 wrong->right, 2 right->wrong
        "base": scored_dir(tmp_path, "base", gold, records, wrong=set(range(10))),
        "new": scored_dir(tmp_path, "new", gold, records, wrong=set(range(8, 12)),
                          wrong_sp={20, 21}),
        "third": scored_dir(tmp_path, "third", gold, records, wrong=set(range(0, 40, 2)),
                            skip={39}),
    }


def test_pair_alignment_deltas_mcnemar_and_flips(runs):
    base, new = load_scored(runs["base"]), load_scored(runs["new"])
    pair = compare_pair(base, new, CompareOptions(resamples=500))
    assert pair.n == 40 and pair.flip_metric == "em"
    em = pair.row("em")
    assert em.binary and em.interval is not None and em.interval.method == "exact-conditional"
    assert em.delta == pytest.approx(6 / 40)
    assert (em.flips.right_to_wrong, em.flips.wrong_to_right) == (2, 8)
    assert em.test.name == "mcnemar-exact"
    assert em.test.p == pytest.approx(binomtest(2, 10, 0.5).pvalue)
    sp = pair.row("sp_f1")
    assert not sp.binary and sp.flips is None and sp.test.name == "permutation"
    flips = pair.flips()
    assert sorted(f.id for f in flips if f.direction == "right->wrong") == ["q010", "q011"]
    assert len([f for f in flips if f.direction == "wrong->right"]) == 8
    flip = next(f for f in flips if f.id == "q010")
    assert flip.prediction_b == "Paris" and flip.gold
    groups = {g.name: g for g in pair.groups}
    assert set(groups) >= {"bridge", "comparison", "easy", "medium", "hard"}
    assert sum(groups[name].n for name in ("bridge", "comparison")) == 40
    assert sum(groups[name].flips.right_to_wrong for name in ("bridge", "comparison")) == 2
    assert groups["bridge"].rows["em"].group == "bridge"


def test_ids_in_only_one_run_are_reported_and_left_out(runs):
    base, third = load_scored(runs["base"]), load_scored(runs["third"])
    # q039 was not predicted in `third`, but it is still a gold example there (missing, 0)
    pair = compare_pair(base, third, CompareOptions(resamples=200))
    assert pair.n == 40 and pair.missing_b == 1
    assert any("third has no prediction for 1 of the 40 paired examples" in w
               for w in pair.warnings)
    sub = load_scored(runs["base"])
    keep = [i for i, x in enumerate(sub.ids) if x not in {"q000", "q001"}]
    sub.ids = [sub.ids[i] for i in keep]
    sub.values, sub.missing = sub.values[keep], sub.missing[keep]
    sub.predictions = [sub.predictions[i] for i in keep]
    sub.gold = [sub.gold[i] for i in keep]
    sub.groups = {k: type(c)(c.labels, c.codes[keep]) for k, c in sub.groups.items()}
    sub._index = None
    pair = compare_pair(base, sub, CompareOptions(resamples=200))
    assert pair.n == 38 and pair.alignment.only_a == ["q000", "q001"]
    assert any("2 ids only in base" in w for w in pair.warnings)


def test_cli_two_runs(runs, tmp_path):
    out = tmp_path / "cmp.json"
    result = run_cli("compare", runs["base"], runs["new"], "--resamples", "300", "-o", out)
    assert result.returncode == 0, result.stderr
    assert "B = new vs A = base on 40 paired examples" in result.stdout
    assert "Flips of em by group" in result.stdout
    assert "q010" in result.stdout  # a flipped example is listed
    data = json.loads(out.read_text())
    (comparison,) = data["comparisons"]
    em = comparison["metrics"]["em"]
    assert em["flips"]["wrong_to_right"] == 8
    assert em["test"]["name"] == "mcnemar-exact" and em["test"]["p_adjusted"] >= em["test"]["p"]
    assert isinstance(em["significant"], bool) and em["mde"] > 0
    assert len(comparison["flips"]) == 10
    assert data["family"] == {"correction": "holm", "tests": 12 * 6}
    f1 = comparison["metrics"]["f1"]
    assert f1["interval"]["method"] == "exact-conditional"  # 0/1 in this data
    assert comparison["groups"][0]["metrics"]["em"]["test"]["p_adjusted"] is not None


def test_cli_matrix_against_a_chosen_baseline(runs):
    result = run_cli("compare", runs["base"], runs["new"], runs["third"], "--baseline", "new",
                     "--resamples", "200")
    assert result.returncode == 0, result.stderr
    assert "Δ against the baseline new" in result.stdout
    assert "B = base vs A = new" in result.stdout and "B = third vs A = new" in result.stdout


def test_more_than_two_runs_give_one_comparison_each(runs):
    sets = load_many([runs["base"], runs["new"], runs["third"]])
    pairs = compare_to_baseline(sets, 1, CompareOptions(resamples=100))
    assert [(p.a.label, p.b.label) for p in pairs] == [("new", "base"), ("new", "third")]


def test_same_named_directories_get_distinct_labels(tmp_path, runs):
    other = tmp_path / "elsewhere" / "base"
    other.parent.mkdir()
    other.symlink_to(runs["base"], target_is_directory=True)
    sets = load_many([runs["base"], other])
    assert len({s.label for s in sets}) == 2


def test_judge_files_compare_on_correct(tmp_path):
    ids = [f"t{i}" for i in range(30)]
    a = write_jsonl(tmp_path / "a.jsonl", judge_rows(ids, [i % 3 != 0 for i in range(30)]))
    verdicts_b: list[bool | None] = [i % 5 != 0 for i in range(30)]
    verdicts_b[7] = None  # an API error: no verdict, left out
    b = write_jsonl(tmp_path / "b.jsonl", judge_rows(ids, verdicts_b))
    sets = load_many([a, b])
    assert sets[0].kind == "judge" and sets[1].n == 29
    assert any("no correct verdict" in w for w in sets[1].warnings)
    pair = compare_pair(sets[0], sets[1], CompareOptions(resamples=200))
    assert pair.flip_metric == "correct" and pair.n == 29
    assert {g.key for g in pair.groups} == {"hybrid_type"}
    result = run_cli("compare", a, b, "--resamples", "200")
    assert result.returncode == 0, result.stderr
    assert "correct" in result.stdout and "1 id only in a is left out" in result.stderr


def test_sql_match_files_compare_on_match(tmp_path):
    mismatch = "exec_mismatch: raw_score=0.000"
    rows_a = [sql_row(f"s{i}", i < 6, "exec_match" if i < 6 else mismatch) for i in range(10)]
    rows_b = [sql_row(f"s{i}", i < 9, "exec_match" if i < 9 else mismatch) for i in range(10)]
    a = write_jsonl(tmp_path / "a.jsonl", rows_a)
    b = write_jsonl(tmp_path / "b.jsonl", rows_b)
    pair = compare_pair(load_scored(a), load_scored(b), CompareOptions(resamples=200))
    match = pair.metrics[0]
    assert match.metric == "match" and match.flips.wrong_to_right == 3
    assert pair.groups[0].key == "db"


def test_errors_are_clear(tmp_path, runs):
    judge = write_jsonl(tmp_path / "j.jsonl", judge_rows(["q000", "q001"], [True, False]))
    with pytest.raises(HopscoreError, match="no metric in common"):
        compare_pair(load_scored(runs["base"]), load_scored(judge))
    other = write_jsonl(tmp_path / "o.jsonl", judge_rows(["zzz"], [True]))
    with pytest.raises(HopscoreError, match="no example id in common"):
        compare_pair(load_scored(judge), load_scored(other))
    with pytest.raises(HopscoreError, match="not binary"):
        compare_pair(load_scored(runs["base"]), load_scored(runs["new"]),
                     CompareOptions(flip_metric="sp_f1"))
    result = run_cli("compare", runs["base"])
    assert result.returncode == 2 and "at least two" in result.stderr
    result = run_cli("compare", runs["base"], runs["new"], "--baseline", "nope")
    assert result.returncode == 2 and "--baseline 'nope'" in result.stderr


def test_bad_scores_file_names_line_and_field(tmp_path, runs):
    broken = tmp_path / "broken"
    broken.mkdir()
    lines = (runs["base"] / "scores.jsonl").read_text().splitlines()
    row = json.loads(lines[2])
    row["metrics"]["em"] = "1"
    lines[2] = json.dumps(row)
    (broken / "scores.jsonl").write_text("\n".join(lines) + "\n")
    result = run_cli("compare", runs["base"], broken)
    assert result.returncode == 2
    assert "scores.jsonl:3: field 'metrics'" in result.stderr and "'em'" in result.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_cli("compare", runs["base"], empty)
    assert result.returncode == 2 and "no scores.jsonl" in result.stderr


def test_large_paired_compare_is_vectorized(tmp_path):
    # 200,000 paired examples: the comparison itself (bootstrap + McNemar) stays cheap
    from hopscore.analysis.scored import GroupColumn, ScoredSet

    n = 200_000
    rng = np.random.default_rng(0)

    def make(label: str, p: float) -> ScoredSet:
        values = (rng.random((n, 1)) < p).astype(float)
        groups = {"g": GroupColumn(["a", "b"], (np.arange(n) % 2).astype(np.int32))}
        return ScoredSet(label, tmp_path, "scores", "x", [str(i) for i in range(n)], ("em",),
                         values, groups, np.zeros(n, bool), [None] * n, [()] * n, {})

    pair = compare_pair(make("a", 0.5), make("b", 0.51))
    row = pair.metrics[0]
    assert row.interval.low < row.delta < row.interval.high
    assert row.interval.high - row.interval.low < 0.01
