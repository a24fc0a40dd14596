"""``hopscore judge-calibrate`` and ``score --judge --judge-calibration``: the judge measured on
human labels, the calibration file bound to the judge, and the corrected accuracy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.errors import HopscoreError, InputError
from hopscore.judge.calibration import (
    JudgeIdentity,
    calibrate,
    check_bound_to,
    correct_rows,
    judge_identity,
    load_calibration,
    read_labels,
)
from tests.conftest import run_cli
from tests.judge.test_score_judge import SAMPLES, score_args, verdict
from tests.openai_server import FakeOpenAI

JUDGE = {"model": "m", "endpoint": "http://127.0.0.1:1/v1", "prompt_sha256": "ab" * 32,
         "status": "judged"}


def row(correct: bool | None, **extra: Any) -> dict[str, Any]:
    return {"correct": correct, "parse_ok": correct is not None, "error": None,
            "judge": {**JUDGE, **extra}}


def test_labels_from_csv_and_jsonl(tmp_path: Path) -> None:
    csv = tmp_path / "h.csv"
    csv.write_text("id,correct\na,true\nb,0\nc,Yes\nd,incorrect\n", encoding="utf-8")
    assert read_labels(csv) == {"a": True, "b": False, "c": True, "d": False}
    jsonl = tmp_path / "h.jsonl"
    jsonl.write_text('{"id": "a", "correct": true}\n{"id": 7, "correct": 0}\n', encoding="utf-8")
    assert read_labels(jsonl) == {"a": True, "7": False}


@pytest.mark.parametrize("text,where,words", [
    ("id,correct\na,maybe\n", ":2: field 'correct'", "expected true/false"),
    ("id,correct\na,true\na,false\n", ":3: field 'id'", "duplicate id 'a' (first at"),
    ("name,correct\na,true\n", ":2", "needs an id"),
    ("id,label\na,true\n", ":2: field 'correct'", "missing"),
    ("id,correct\n", "h.csv", "holds no labels"),
])
def test_bad_labels_are_located(tmp_path: Path, text: str, where: str, words: str) -> None:
    path = tmp_path / "h.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_labels(path)
    assert where in str(caught.value) and words in str(caught.value)


def test_calibrate_counts_and_lists_what_it_leaves_out() -> None:
    rows = {"a": row(True), "b": row(False), "c": row(True), "d": row(None),
            "e": row(False, status="empty_response"), "f": row(False)}
    labels = {"a": True, "b": True, "c": False, "d": True, "e": False, "f": False, "z": True}
    cal = calibrate(rows, labels, judge_identity(rows, "j"))
    c = cal.confusion
    assert (c.true_pos, c.false_neg, c.false_pos, c.true_neg) == (1, 1, 1, 1)
    assert cal.missing_ids == ["z"] and cal.undecided_ids == ["d", "e"]
    with pytest.raises(HopscoreError, match="no labelled id has a judge verdict"):
        calibrate(rows, {"z": True}, cal.judge)


def test_rows_of_two_judges_are_refused() -> None:
    rows = {"a": row(True), "b": row(True, model="other")}
    with pytest.raises(HopscoreError, match="2 different judges"):
        judge_identity(rows, "j.jsonl")
    with pytest.raises(HopscoreError, match="no 'judge' object"):
        judge_identity({"a": {"correct": True}}, "j.jsonl")


def test_binding_refuses_another_model_or_prompt(tmp_path: Path) -> None:
    rows = {"a": row(True), "b": row(False)}
    cal = calibrate(rows, {"a": True, "b": False}, judge_identity(rows, "j"))
    here = (cal, tmp_path / "cal.json")
    same = JudgeIdentity(JUDGE["model"], JUDGE["endpoint"], JUDGE["prompt_sha256"])
    assert check_bound_to(here, same, "x") == []
    moved = JudgeIdentity(JUDGE["model"], "http://elsewhere/v1", JUDGE["prompt_sha256"])
    assert "was measured at" in check_bound_to(here, moved, "x")[0]
    for other in (JudgeIdentity("m2", JUDGE["endpoint"], JUDGE["prompt_sha256"]),
                  JudgeIdentity("m", JUDGE["endpoint"], "cd" * 32)):
        with pytest.raises(HopscoreError, match="calibrates another judge"):
            check_bound_to(here, other, "x")


def test_correct_rows_counts_empty_answers_as_wrong() -> None:
    from hopscore.inference.judge_error import Confusion

    rows: list[dict[str, Any] | None] = [row(True)] * 60 + [row(False)] * 30 + [
        row(False, status="empty_response")] * 10 + [row(None), None]
    cal = calibrate({"a": row(True)}, {"a": True}, judge_identity({"a": row(True)}, "j"))
    cal.confusion = Confusion(90, 10, 5, 95)
    result = correct_rows(rows, cal, 0.95)
    assert result is not None
    assert result.corrected.n == 90 and result.empty == 10 and result.undecided == 2
    estimate, low, high = result.overall()
    assert result.corrected.estimate is not None and estimate is not None
    assert estimate == pytest.approx(result.corrected.estimate * 0.9)
    assert low is not None and high is not None and low < estimate < high


def test_two_phase_when_the_labels_are_a_slice_of_the_run() -> None:
    from hopscore.inference.judge_error import corrected_accuracy

    # 100 judged rows: the judge passed 60; 20 of them labelled (15 right), and 20 of the 40 it
    # failed (4 right)
    rows = [row(True)] * 60 + [row(False)] * 40
    ids = [f"r{i}" for i in range(100)]
    labels = {f"r{i}": i < 15 for i in range(20)} | {f"r{i}": i < 64 for i in range(60, 80)}
    cal = calibrate(dict(zip(ids, rows, strict=True)), labels, judge_identity(
        {"a": row(True)}, "j"))
    assert (cal.confusion.true_pos, cal.confusion.false_pos) == (15, 5)
    assert (cal.confusion.false_neg, cal.confusion.true_neg) == (4, 16)
    result = correct_rows(rows, cal, 0.95, ids=ids)
    assert result is not None and result.corrected.method == "two-phase"
    assert result.corrected.estimate == pytest.approx(0.6 * 15 / 20 + 0.4 * 4 / 20)
    assert not result.warnings
    # without the ids (or for another run's rows) the judge's Se/Sp carry the correction
    other = correct_rows(rows, cal, 0.95)
    assert other is not None and other.corrected.method == "rogan-gladen"
    assert other.corrected.estimate == pytest.approx(corrected_accuracy(
        60, 100, cal.confusion).estimate)
    # some labelled rows are not this run's: said, and Se/Sp used
    shifted = correct_rows(rows, cal, 0.95, ids=[f"s{i}" for i in range(10)] + ids[10:])
    assert shifted is not None and shifted.corrected.method == "rogan-gladen"
    assert any("10 of the 40 labelled rows are not rows of this run" in w
               for w in shifted.warnings)
    # a slice chosen by verdict (every labelled row one the judge passed... nearly) is named
    picked = {f"r{i}": i < 45 for i in range(58)} | {"r60": False, "r61": False}
    cal = calibrate(dict(zip(ids, rows, strict=True)), picked, cal.judge)
    skewed = correct_rows(rows, cal, 0.95, ids=ids)
    assert skewed is not None and skewed.corrected.method == "two-phase"
    assert any("not look like a random slice" in w for w in skewed.warnings)
    # no labelled row the judge passed: two-phase undefined, Se/Sp used instead, said so
    cal = calibrate(dict(zip(ids, rows, strict=True)),
                    {f"r{i}": i < 70 for i in range(60, 100)}, cal.judge)
    fallback = correct_rows(rows, cal, 0.95, ids=ids)
    assert fallback is not None and fallback.corrected.method == "rogan-gladen"
    assert fallback.corrected.note is not None and "judge passed" in fallback.corrected.note


def test_labelled_rows_round_trip_and_must_match_the_counts(tmp_path: Path) -> None:
    rows = {"a": row(True), "b": row(False), "c": row(True)}
    cal = calibrate(rows, {"a": True, "b": True, "c": False}, judge_identity(rows, "j"))
    path = tmp_path / "cal.json"
    data = cal.to_json()
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_calibration(path).labelled == {"a": (True, True), "b": (True, False),
                                               "c": (False, True)}
    data["labelled"][0]["judge"] = False
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="do not add up to the counts"):
        load_calibration(path)
    data["labelled"][0] = {"id": "a", "human": "yes", "judge": True}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="human"):
        load_calibration(path)


def test_load_calibration_errors(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="not JSON"):
        load_calibration(path)
    path.write_text('{"format": "x"}', encoding="utf-8")
    with pytest.raises(InputError, match="not a judge calibration file"):
        load_calibration(path)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost"}


def test_calibrate_then_correct_through_the_command_line(tmp_path: Path,
                                                         env: dict[str, str]) -> None:
    out = tmp_path / "out"
    labels = tmp_path / "human.csv"
    # judge verdicts (tests/judge/test_score_judge.py): hp-1 T, hp-2 F, hp-3 T, hp-4 F, hp-5 T
    labels.write_text("id,correct\nsample-hp-1,true\nsample-hp-2,true\nsample-hp-3,true\n"
                      "sample-hp-4,false\nsample-hp-5,false\nsample-hp-9,true\n",
                      encoding="utf-8")
    cal = tmp_path / "cal.json"
    with FakeOpenAI(verdict) as server:
        result = run_cli(*score_args(server, SAMPLES / "predictions.json", out), env=env)
        assert result.returncode == 0, result.stderr
        # judge vs exact match: each disagreement has a kind, the most frequent first
        kinds = json.loads((out / "metrics.json").read_text())["judge"]["disagreement_kinds"]
        assert sum(k["count"] for k in kinds) == 2
        rows = [json.loads(line) for line in
                (out / "judge_disagreements.jsonl").read_text().splitlines()]
        assert {r["id"]: r["kind"] for r in rows}["sample-hp-2"] == "matches the gold"
        result = run_cli("judge-calibrate", "--judge", out / "judge.jsonl", "--labels", labels,
                         "-o", cal, env=env)
        assert result.returncode == 0, result.stderr
        assert "sensitivity" in result.stdout and "0.667 [" in result.stdout  # 2 of 3
        assert "PABAK" in result.stdout and "prevalence index" in result.stdout
        assert "1 labelled ids not in" in result.stderr and "sample-hp-9" in result.stderr
        data = json.loads(cal.read_text())
        assert data["judge"]["model"] == "judge-m"
        assert data["judge"]["endpoint"] == server.base_url.rstrip("/")
        assert data["counts"]["true_pos"] == 2 and data["counts"]["false_pos"] == 1
        assert {r["id"]: (r["human"], r["judge"]) for r in data["labelled"]} == {
            "sample-hp-1": (True, True), "sample-hp-2": (True, False),
            "sample-hp-3": (True, True), "sample-hp-4": (False, False),
            "sample-hp-5": (False, True)}
        # the labels are a slice of this very run: the two-phase estimate; with every decided
        # row labelled it is the labelled accuracy itself (3 of 5)
        result = run_cli(*score_args(server, SAMPLES / "predictions.json", out),
                         "--judge-calibration", cal, env=env)
        assert result.returncode == 0, result.stderr
        corrected = json.loads((out / "metrics.json").read_text())["judge"]["corrected"]
        assert corrected["method"] == "two-phase"
        assert corrected["corrected"] == pytest.approx(0.6)
        assert "corrected (two-phase)" in result.stdout
        # labels of other rows (no labelled rows kept): sensitivity and specificity, and 5
        # labelled rows cannot show the judge beats chance: no correction, said so
        del data["labelled"]
        cal.write_text(json.dumps(data), encoding="utf-8")
        result = run_cli(*score_args(server, SAMPLES / "predictions.json", out),
                         "--judge-calibration", cal, env=env)
        assert result.returncode == 0, result.stderr
        assert "too weak to correct" in result.stdout
        # a bigger calibration of the same judge corrects
        data["counts"].update(true_pos=90, false_neg=10, false_pos=20, true_neg=80)
        cal.write_text(json.dumps(data), encoding="utf-8")
        result = run_cli(*score_args(server, SAMPLES / "predictions.json", out),
                         "--judge-calibration", cal, env=env)
        assert result.returncode == 0, result.stderr
        corrected = json.loads((out / "metrics.json").read_text())["judge"]["corrected"]
        assert corrected["raw"] == pytest.approx(0.6)
        assert corrected["corrected"] == pytest.approx((0.6 + 0.8 - 1) / 0.7, abs=0.01)
        assert corrected["corrected_ci"]["low"] < corrected["corrected"]
        assert "corrected (Rogan-Gladen)" in result.stdout
        # the report shows it beside the raw judge accuracy
        html = tmp_path / "report.html"
        result = run_cli("report", out, "-o", html, "--resamples", "100", env=env)
        assert result.returncode == 0, result.stderr
        page = html.read_text(encoding="utf-8")
        assert "corrected for the judge&#39;s errors" in page or \
            "corrected for the judge's errors" in page
        assert f"{corrected['corrected']:.3f} [" in page and "0.900" in page  # sensitivity
        # the calibration of another model is refused
        requests = len(server.log)
        result = run_cli("score", "hotpotqa", "-g", SAMPLES / "gold.json", "-p",
                         SAMPLES / "predictions.json", "--judge", "--judge-model", "other-judge",
                         "--judge-base-url", server.base_url, "--judge-calibration", cal,
                         env=env)
        assert result.returncode == 2
        assert "calibrates another judge" in result.stderr and "'judge-m'" in result.stderr
        assert len(server.log) == requests  # refused before any request
