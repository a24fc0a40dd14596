"""FRAMES on the command line against the stand-in server: ``score frames --judge`` with the
rater preset (accuracy overall and per reasoning type, the preset and its hash pinned), another
preset and the user's override, and ``run frames`` in the oracle setting (``--documents``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from hopscore.engine.types import sha256_text
from tests.conftest import SRC, run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply

FOLDER = SRC / "hopscore" / "benchmarks" / "frames"
SAMPLES = FOLDER / "samples"
RATER = (FOLDER / "judge_rater.txt").read_text(encoding="utf-8")
#: the rater's decision by a phrase of each sample question
DECISIONS = {"maple leaf": True, "Moon landing": True, "tallest mountains": False,
             "Eiffel Tower": True, "Enigma Variations": False}


def rater(prompt: str, attempt: int) -> Reply:
    assert prompt.startswith("===Task===")
    for phrase, decision in DECISIONS.items():
        if phrase in prompt:
            return Reply(f"Explanation: scripted.\nDecision: {'TRUE' if decision else 'FALSE'}")
    raise AssertionError(prompt)


def four_fields(prompt: str, attempt: int) -> Reply:
    assert not prompt.startswith("===Task===")
    return judge_reply("maple leaf" in prompt)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1,localhost"}


def score_judge(server: FakeOpenAI, out: Path, env: dict[str, str], *extra: str | Path):
    return run_cli("score", "frames", "-g", SAMPLES / "gold.tsv", "-p",
                   SAMPLES / "predictions.jsonl", "-o", out, "--judge", "--judge-model", "j",
                   "--judge-base-url", server.base_url, *extra, env=env)


def test_score_judge_uses_the_rater_and_reports_each_reasoning_type(
        tmp_path: Path, env: dict[str, str]) -> None:
    out = tmp_path / "out"
    with FakeOpenAI(rater) as server:
        result = score_judge(server, out, env)
        assert result.returncode == 0, result.stderr
        assert len(server.log) == 5
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["metrics"]["judge_accuracy"] == pytest.approx(3 / 5)
    groups = metrics["groups"]
    # Multiple constraints: questions 0 (TRUE), 2 (FALSE), 4 (FALSE)
    assert groups["Multiple constraints"]["n"] == 3
    assert groups["Multiple constraints"]["metrics"]["judge_accuracy"] == pytest.approx(1 / 3)
    assert groups["Numerical reasoning"]["metrics"]["judge_accuracy"] == 1.0  # 1 and 3
    assert groups["Tabular reasoning"]["metrics"]["judge_accuracy"] == 0.0  # 2
    assert groups["Temporal reasoning"]["metrics"]["judge_accuracy"] == pytest.approx(1 / 2)
    assert groups["Post processing"]["metrics"]["judge_accuracy"] == 1.0
    block = metrics["judge"]
    assert block["preset"] == "frames/rater"
    assert block["prompt_sha256"] == sha256_text(RATER)
    rows = [json.loads(line) for line in
            (out / "judge.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {row["judge"]["preset"] for row in rows} == {"frames/rater"}
    assert {row["judge"]["prompt_sha256"] for row in rows} == {sha256_text(RATER)}


def test_score_judge_with_another_preset_or_the_users_prompt(
        tmp_path: Path, env: dict[str, str]) -> None:
    with FakeOpenAI(four_fields) as server:
        result = score_judge(server, tmp_path / "b", env, "--judge-preset", "builtin")
        assert result.returncode == 0, result.stderr
        builtin = json.loads((tmp_path / "b" / "metrics.json").read_text(encoding="utf-8"))
        assert builtin["judge"]["preset"] == "builtin"
        assert builtin["metrics"]["judge_accuracy"] == pytest.approx(1 / 5)
        user = tmp_path / "mine.txt"
        user.write_text("Mine. {question} / {answer} / {expected_answer}\n", encoding="utf-8")
        result = score_judge(server, tmp_path / "u", env, "--judge-prompt-file", user)
        assert result.returncode == 0, result.stderr
        assert server.prompts()[-1].startswith("Mine.")
        mine = json.loads((tmp_path / "u" / "metrics.json").read_text(encoding="utf-8"))
        assert mine["judge"]["preset"] is None
        assert mine["judge"]["prompt_sha256"] == sha256_text(user.read_text(encoding="utf-8"))
        bad = score_judge(server, tmp_path / "x", env, "--judge-preset", "nope")
    assert bad.returncode == 2
    assert "unknown judge preset 'nope'" in bad.stderr and "rater" in bad.stderr


def test_run_frames_in_the_oracle_setting(tmp_path: Path, env: dict[str, str]) -> None:
    pages = tmp_path / "pages.jsonl"
    gold_links = [link for line in (SAMPLES / "gold.tsv").read_text(encoding="utf-8")
                  .splitlines()[1:] for link in ast.literal_eval(line.split("\t")[-1])]
    pages.write_text("".join(json.dumps({"url": link, "text": f"TEXT OF {link[-12:]}"}) + "\n"
                             for link in gold_links), encoding="utf-8")
    with FakeOpenAI(lambda prompt, attempt: Reply("Answer: Ottawa")) as server:
        args = ["run", "frames", "--gold", SAMPLES / "gold.tsv", "--model", "m", "--base-url",
                server.base_url, "--no-progress", "--documents", pages]
        result = run_cli(*args, "-o", tmp_path / "run", env=env)
        assert result.returncode == 0, result.stderr
        assert len(server.log) == 5
        assert all("Wikipedia articles for this question" in p for p in server.prompts())
        assert any("TEXT OF /wiki/Ottawa" in p for p in server.prompts())
        metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
        assert metrics["metrics"]["em"] == pytest.approx(1 / 5)
        pages.write_text(json.dumps({"url": gold_links[0], "text": "only one"}) + "\n",
                         encoding="utf-8")
        missing = run_cli(*args, "-o", tmp_path / "run2", env=env)
    assert missing.returncode == 2
    assert "no page for" in missing.stderr and str(pages) in missing.stderr


def test_hopscore_judge_takes_the_benchmark_preset_by_name(
        tmp_path: Path, env: dict[str, str]) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in [
        {"question": "Which city? (maple leaf)", "response": "Ottawa", "correct_answer": "Ottawa"},
        {"question": "Which peak? (tallest mountains)", "response": "Everest",
         "correct_answer": "K2"}]), encoding="utf-8")
    base = ["judge", "-i", rows, "--model", "j", "--no-progress"]
    with FakeOpenAI(rater) as server:
        result = run_cli(*base, "-o", tmp_path / "out.jsonl", "--base-url", server.base_url,
                         "--judge-preset", "frames", env=env)
        assert result.returncode == 0, result.stderr
        assert "preset frames/rater" in result.stdout
        unknown = run_cli(*base, "-o", tmp_path / "x.jsonl", "--base-url", server.base_url,
                          "--judge-preset", "frames/nope", env=env)
    judged = [json.loads(line) for line in
              (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["correct"] for row in judged] == [True, False]
    assert {row["judge"]["preset"] for row in judged} == {"frames/rater"}
    assert judged[0]["reasoning"] == "scripted."
    assert unknown.returncode == 2
    assert "unknown judge preset 'frames/nope'" in unknown.stderr
    assert "frames/rater" in unknown.stderr and "builtin" in unknown.stderr
