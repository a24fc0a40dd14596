"""Juries: the aggregation rules, and three judges against the stand-in server (resumable,
every raw reply kept, agreement reported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore.errors import HopscoreError
from hopscore.inference.raters import fleiss_kappa, krippendorff_alpha
from hopscore.judge.jury import aggregate, check_rule
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply

ONE = [1.0, 1.0, 1.0]


@pytest.mark.parametrize("votes,rule,on_tie,expected,note", [
    ([True, True, False], "majority", "wrong", True, None),
    ([True, False, False], "majority", "wrong", False, None),
    ([True, False, None], "majority", "wrong", False, "tie: wrong"),
    ([True, False, None], "majority", "correct", True, "tie: correct"),
    ([True, False, None], "majority", "undecided", None, "tie: undecided"),
    ([True, None, None], "majority", "wrong", True, None),
    ([None, None, None], "majority", "wrong", None, "0 of 3 judges decided (--min-votes 1)"),
    ([True, True, True], "unanimous", "wrong", True, None),
    ([True, True, False], "unanimous", "wrong", False, None),
    ([True, None, False], "unanimous", "wrong", False, None),
    ([True, True, None], "unanimous", "wrong", None, "unanimity unknown: a judge abstained"),
])
def test_rules(votes: list[bool | None], rule: str, on_tie: str, expected: bool | None,
               note: str | None) -> None:
    verdict = aggregate(votes, rule, ONE, on_tie)
    assert verdict.correct is expected and verdict.note == note
    assert verdict.abstained == votes.count(None)


def test_weighted_vote_and_quorum() -> None:
    weights = [3.0, 1.0, 1.0]
    assert aggregate([True, False, False], "weighted", weights).correct is True
    assert aggregate([False, True, True], "weighted", weights).correct is False
    tie = aggregate([True, False, False], "weighted", [2.0, 1.0, 1.0])
    assert tie.correct is False and tie.note == "tie: wrong" and tie.split == 0.5
    # majority ignores weights; min_votes asks for a quorum
    assert aggregate([True, False, False], "majority", ONE).correct is False
    short = aggregate([True, None, None], "majority", ONE, min_votes=2)
    assert short.correct is None and "1 of 3 judges decided" in (short.note or "")


def test_rule_options_are_checked() -> None:
    with pytest.raises(HopscoreError, match="--rule must be one of"):
        check_rule("plurality", "wrong", ONE, 3, 1)
    with pytest.raises(HopscoreError, match="--on-tie"):
        check_rule("majority", "coin", ONE, 3, 1)
    with pytest.raises(HopscoreError, match="2 weights for 3 judges"):
        check_rule("weighted", "wrong", [1.0, 2.0], 3, 1)
    with pytest.raises(HopscoreError, match="for --rule weighted"):
        check_rule("majority", "wrong", [1.0, 2.0, 1.0], 3, 1)
    with pytest.raises(HopscoreError, match="--min-votes"):
        check_rule("majority", "wrong", ONE, 3, 4)


# verdicts of judges a, b, c on questions q1..q5 (None: a reply without a verdict)
VERDICTS: dict[str, list[bool | None]] = {
    "a": [True, True, False, False, True],
    "b": [True, False, False, True, True],
    "c": [True, True, True, False, None],
}


def make_responder(fail: set[tuple[str, int]]) -> Any:
    def respond(body: dict[str, Any], attempt: int) -> Reply:
        prompt = json.dumps(body["messages"])
        index = next(i for i in range(5) if f"question q{i + 1}?" in prompt)
        model = body["model"]
        if (model, index) in fail:
            return Reply(status=500, content=None, json_body={"error": {"message": "down"}})
        said = VERDICTS[model][index]
        return Reply("I cannot tell.") if said is None else judge_reply(said)

    return respond


def jury_files(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """Five answer rows (q1..q5), the jury's output folder, and the commands' environment."""
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({
        "id": f"q{i}", "question": f"question q{i}?", "response": f"answer {i}",
        "correct_answer": "gold"}) + "\n" for i in range(1, 6)), encoding="utf-8")
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost"}
    return answers, tmp_path / "jury", env


def test_a_jury_of_three_against_the_stand_in_server(tmp_path: Path) -> None:
    answers, out, env = jury_files(tmp_path)
    args: list[Any] = ["jury", "-i", answers, "-o", out, "--judge", "a", "--judge", "b",
                       "--judge", "c", "--max-retries", "0"]
    fail = {("b", 2)}
    with FakeOpenAI(body_responder=make_responder(fail)) as server:
        first = run_cli(*args, "--base-url", server.base_url, env=env)
        assert first.returncode == 1, first.stderr
        assert "incomplete: 1 judge rows failed" in first.stderr
        rows = [json.loads(line) for line in (out / "jury.jsonl").read_text().splitlines()]
        assert [r["correct"] for r in rows] == [True, True, False, False, True]
        q3 = rows[2]["jury"]
        assert q3["note"] == "tie: wrong" and q3["abstained"] == 1
        assert q3["votes"][1]["correct"] is None and q3["votes"][1]["error"]
        fail.clear()  # the endpoint recovers; the same command resumes
        before = len(server.log)
        second = run_cli(*args, "--base-url", server.base_url, env=env)
        asked = [entry.body["model"] for entry in server.log[before:]
                 if entry.body.get("messages")]
    assert second.returncode == 0, second.stderr
    assert asked == ["b"]  # resumed: only the failed row was asked again
    rows = [json.loads(line) for line in (out / "jury.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["q1", "q2", "q3", "q4", "q5"]
    # q1 3-0, q2 2-1, q3 1-2, q4 1-2, q5 2-0 with c abstaining (its reply had no verdict)
    assert [r["correct"] for r in rows] == [True, True, False, False, True]
    assert [(r["jury"]["yes"], r["jury"]["no"]) for r in rows] == [
        (3, 0), (2, 1), (1, 2), (1, 2), (2, 0)]
    for row in rows:  # every judge's raw reply is kept
        assert [v["judge"] for v in row["jury"]["votes"]] == ["judge-1", "judge-2", "judge-3"]
        assert all(v["raw_judge_output"] for v in row["jury"]["votes"])
    assert rows[4]["jury"]["votes"][2]["raw_judge_output"] == "I cannot tell."
    for name in ("judge-1.jsonl", "judge-2.jsonl", "judge-3.jsonl"):
        assert len((out / name).read_text().splitlines()) >= 5
    split = [json.loads(line) for line in
             (out / "jury_disagreements.jsonl").read_text().splitlines()]
    assert [r["id"] for r in split] == ["q2", "q3", "q4"]
    summary = json.loads((out / "jury_summary.json").read_text())
    labels = [VERDICTS[m] for m in "abc"]
    units = [[labels[j][i] for j in range(3)] for i in range(5)]
    complete = [[sum(1 for v in u if v), sum(1 for v in u if v is False)] for u in units
                if None not in u]
    assert summary["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(complete).value)
    assert summary["krippendorff_alpha"]["value"] == pytest.approx(
        krippendorff_alpha(units).value)
    assert summary["rule"] == "majority" and summary["split_rows"] == 3
    # a jury's verdicts compare like a judge's
    compared = run_cli("compare", out / "judge-2.jsonl", out / "jury.jsonl", "--json")
    assert compared.returncode == 0, compared.stderr
    pair = json.loads(compared.stdout)["comparisons"][0]
    assert pair["n_paired"] == 5  # judge-2: T F F T T; jury: T T F F T
    assert sorted((f["id"], f["direction"]) for f in pair["flips"]) == [
        ("q2", "wrong->right"), ("q4", "right->wrong")]
    assert "Fleiss' kappa" in second.stdout and "rows where the judges disagree: 3" in \
        second.stdout


def test_a_jury_takes_reasoning_settings_and_can_be_calibrated(tmp_path: Path) -> None:
    answers, out, env = jury_files(tmp_path)
    with FakeOpenAI(body_responder=make_responder(set())) as server:
        result = run_cli("jury", "-i", answers, "-o", out, "--judge", "a", "--judge", "b",
                         "--judge", "c", "--reasoning-effort", "low", "--base-url",
                         server.base_url, env=env)
        sent = [entry.body for entry in server.log if entry.body.get("messages")]
    assert result.returncode == 0, result.stderr
    assert len(sent) == 15 and all(body.get("reasoning_effort") == "low" for body in sent)
    # the jury's verdicts (T T F F T) against human labels of every row (T F F F T)
    labels = tmp_path / "human.csv"
    labels.write_text("id,correct\nq1,true\nq2,false\nq3,false\nq4,false\nq5,true\n",
                      encoding="utf-8")
    cal = tmp_path / "cal.json"
    result = run_cli("judge-calibrate", "--judge", out / "jury.jsonl", "--labels", labels,
                     "-o", cal, env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(cal.read_text())
    assert data["judge"]["model"] == "jury(a, b, c)"
    assert data["counts"]["true_pos"] == 2 and data["counts"]["false_pos"] == 1
    assert data["counts"]["true_neg"] == 2 and data["counts"]["false_neg"] == 0
    # every row labelled: the corrected accuracy of the jury's rows is the labelled one, 2/5
    assert "corrected (two-phase)" in result.stdout and "0.400 [" in result.stdout
    # another jury (other rule) is another judge
    other = [json.loads(line) for line in (out / "jury.jsonl").read_text().splitlines()]
    other[0]["jury"]["rule"] = "unanimous"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(r) + "\n" for r in other), encoding="utf-8")
    result = run_cli("judge-calibrate", "--judge", mixed, "--labels", labels, env=env)
    assert result.returncode == 2 and "2 different judges" in result.stderr
