"""Judge rows are bound to the run they judged; agreement and kappa against statsmodels."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

from hopscore.analysis.judging import agreement_table, bind_judge_files
from hopscore.analysis.scored import load_scored
from hopscore.errors import HopscoreError
from hopscore.inference.agreement import Agreement, agreement_of
from tests.analysis.builders import judge_rows, scored_dir, write_hotpot_gold, write_jsonl
from tests.conftest import run_cli


@pytest.fixture
def two_runs(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 20)
    a = scored_dir(tmp_path, "a", gold, records, wrong={0, 1, 2})
    b = scored_dir(tmp_path, "b", gold, records, wrong=set(range(8)), wrong_answer="Michigan")
    return gold, a, b


def judge_file_of(tmp_path, run, verdicts, name="judge.jsonl"):
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    out = judge_rows([r["id"] for r in rows], verdicts)
    for row, score in zip(out, rows, strict=True):
        row["response"] = score["prediction"]
    return write_jsonl(tmp_path / name, out)


def test_a_judge_file_goes_only_to_the_run_it_judged(tmp_path, two_runs):
    _, a, b = two_runs
    judge = judge_file_of(tmp_path, a, [True] * 20)
    sets = [load_scored(a), load_scored(b)]
    bound = bind_judge_files(sets, [judge])
    assert bound[0] is not None and bound[1] is None
    table = agreement_table(sets[0], bound[0])
    assert table.overall.n == 20 and table.overall.judge_only == 3
    assert agreement_table(sets[1], bound[1]) is None
    out = tmp_path / "report.html"
    result = run_cli("report", a, b, "--judge", judge, "-o", out)
    assert result.returncode == 0, result.stderr
    html = out.read_text()
    assert 'class="agreement" data-run="a"' in html and 'data-run="b"' not in html.split(
        'class="agreement"', 1)[1].split("</div>", 1)[0]


def test_a_judge_file_of_another_run_is_refused_with_counts(tmp_path, two_runs):
    _, a, b = two_runs
    judge = judge_file_of(tmp_path, a, [True] * 20)
    result = run_cli("analyze", b, "--judge", judge)
    assert result.returncode == 2
    assert "did not judge the predictions of this run" in result.stderr
    assert "8 of 20 rows judged another response" in result.stderr  # q000..q007: Michigan
    assert "'q000': judged 'Paris', b predicted 'Michigan'" in result.stderr
    other = write_jsonl(tmp_path / "x.jsonl", judge_rows([f"q{i:03d}" for i in range(20)],
                                                          [True] * 20))
    result = run_cli("report", a, b, "--judge", other, "-o", tmp_path / "r.html")
    assert result.returncode == 2 and "any of the runs" in result.stderr
    assert "a: 20 of 20 rows" in result.stderr and "b: 20 of 20 rows" in result.stderr


def test_two_files_for_two_runs(tmp_path, two_runs):
    _, a, b = two_runs
    ja = judge_file_of(tmp_path, a, [True] * 20, "ja.jsonl")
    jb = judge_file_of(tmp_path, b, [i % 2 == 0 for i in range(20)], "jb.jsonl")
    bound = bind_judge_files([load_scored(a), load_scored(b)], [jb, ja])
    assert bound[0]["q000"]["correct"] is True and bound[1]["q001"]["correct"] is False


def test_a_row_without_a_response_cannot_be_checked(tmp_path, two_runs):
    _, a, _ = two_runs
    rows = judge_rows([f"q{i:03d}" for i in range(20)], [True] * 20)
    for row in rows:
        del row["response"]
    path = write_jsonl(tmp_path / "j.jsonl", rows)
    with pytest.raises(HopscoreError, match="no 'response'"):
        bind_judge_files([load_scored(a)], [path])


def test_kappa_by_hand_and_against_statsmodels():
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    hand = Agreement(20, 5, 10, 15)  # po 0.7, pe 0.5*0.6 + 0.5*0.4 = 0.5
    assert hand.observed == pytest.approx(0.7) and hand.kappa == pytest.approx(0.4)
    for table in ([[20, 5], [10, 15]], [[40, 9], [3, 48]], [[1, 0], [7, 2]], [[90, 2], [5, 3]]):
        ours = Agreement(table[0][0], table[0][1], table[1][0], table[1][1])
        theirs = inter_rater.cohens_kappa(table)
        assert ours.kappa == pytest.approx(theirs.kappa, rel=1e-12)
        assert ours.kappa_se() == pytest.approx(theirs.std_kappa, rel=1e-9)
        assert ours.kappa_interval() == pytest.approx(
            (max(-1, theirs.kappa_low), min(1, theirs.kappa_upp)), rel=1e-9)
    assert Agreement(5, 0, 0, 0).kappa is None  # both raters always "right": undefined
    assert agreement_of([(True, True), (False, True)]).match_only == 1


@pytest.mark.parametrize("table,rater", [
    ([[5, 3], [0, 0]], "the judge said right to all 8"),
    ([[5, 0], [3, 0]], "exact match said right to all 8"),
    ([[0, 0], [3, 5]], "the judge said wrong to all 8"),
    ([[5, 0], [0, 0]], "the judge said right to all 5 and exact match said right to all 5")])
def test_kappa_is_undefined_when_a_rater_says_one_thing(table, rater):
    """statsmodels gives kappa 0 with a standard error of 0 (a point interval) and a NaN test
    statistic, or NaN outright when both raters are constant: no kappa to report."""
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = inter_rater.cohens_kappa(table)
    assert (math.isnan(theirs.z_value) and theirs.std_kappa0 in (0, 0.0)) or math.isnan(
        theirs.kappa)
    ours = Agreement(table[0][0], table[0][1], table[1][0], table[1][1])
    assert ours.kappa is None and ours.kappa_se() is None and ours.kappa_interval() is None
    assert ours.kappa_text() == f"undefined: {rater} (kappa needs both raters to vary)"
    assert ours.to_json()["kappa_undefined"].startswith(rater)


def test_analyze_and_report_say_why_kappa_is_undefined(tmp_path, two_runs):
    _, a, b = two_runs
    judge = judge_file_of(tmp_path, a, [True] * 20)
    result = run_cli("analyze", a, "--judge", judge, "-o", tmp_path / "analysis.json",
                     env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "undefined: the judge said right to all 20" in result.stdout
    html = tmp_path / "r.html"
    assert run_cli("report", a, b, "--judge", judge, "-o", html).returncode == 0
    assert "undefined: the judge said right to all 20" in html.read_text()
