"""openqa: EM, sub-EM, F1, cover-EM and Search-R1's qa_em, each equal to its reference.

The expected numbers below were computed by the reference scorers themselves, run outside the
repository (FlashRAG 1ee5249 ``flashrag/evaluator/metrics.py``, R1-Searcher 631167c
``evaluation/metric_calc_rule.py``, Search-R1 a14dc3a ``verl/utils/reward_score/qa_em.py``;
bench/results/2026-12-06-openqa-parity.md): each row is (reply, golds, expected metrics,
Search-R1's score of the reply *alone*, without its prompt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import hopscore
from hopscore.benchmarks.error_categories import Sample
from hopscore.benchmarks.openqa import OpenQA
from hopscore.benchmarks.openqa.categories import em_miss
from hopscore.benchmarks.openqa.per_example import openqa_answer
from hopscore.benchmarks.openqa.records import dataset_from_path
from hopscore.benchmarks.openqa.rules import search_r1_answer
from hopscore.errors import HopscoreError, InputError
from tests.benchmarks._cli import cli_error
from tests.benchmarks.helpers import write_jsonl
from tests.conftest import shared_file

BENCH = OpenQA()

#: the metrics of each row, in this order (None: not reported, the reply has no tags)
ORDER = ("em", "sub_em", "f1", "cover_em", "r1_em", "r1_f1", "qa_em")

REFERENCE: list[tuple[str, list[str], tuple[float | None, ...], float]] = [
    ('Mars', ['Mars'],
     (1, 1, 1, 1, 1, 1, None), 0),
    ('The ceiling was painted by Michelangelo.', ['Michelangelo'],
     (0, 1, 0.333333, 1, 0, 0.333333, None), 0),
    ('Paris, France', ['Paris'],
     (0, 1, 0.666667, 1, 0, 0.666667, None), 0),
    ('France Paris', ['Paris France'],
     (0, 0, 1, 1, 0, 1, None), 0),
    ('1990s', ['1990'],
     (0, 1, 0, 0, 0, 0, None), 0),
    ('1990', ['1'],
     (0, 1, 0, 0, 0, 0, None), 0),
    ('U.S.-born', ['US born'],
     (0, 0, 0, 0, 0, 0.4, None), 0),
    ('U.S.-born', ['U S born'],
     (0, 0, 0, 1, 1, 1, None), 0),
    ('Bora Bora', ['Bora Bora'],
     (1, 1, 1, 1, 1, 1, None), 0),
    ('bora', ['Bora Bora'],
     (0, 0, 0.666667, 1, 0, 0.666667, None), 0),
    ('', ['Mars'],
     (0, 0, 0, 0, 0, 0, None), 0),
    ('the', [''],
     (1, 1, 0, 1, 1, 0, None), 0),
    ('anything', [''],
     (0, 1, 0, 0, 0, 0, None), 0),
    ('True', ['yes'],
     (0, 0, 0, 1, 1, 1, None), 0),
    ('yes', ['True'],
     (0, 0, 0, 1, 1, 1, None), 0),
    ('no', ['yes'],
     (0, 0, 0, 0, 0, 0, None), 0),
    ('no answer', ['noanswer'],
     (0, 0, 0, 0, 0, 0, None), 0),
    ('Yes.', ['yes'],
     (1, 1, 1, 1, 1, 1, None), 0),
    ('Jim O’Neil', ["Jim O'Neil"],
     (0, 0, 0.5, 1, 1, 1, None), 0),
    ("Jim O'Neil", ['Jim ONeil'],
     (1, 1, 1, 0, 0, 0.4, None), 0),
    ('Röntgen', ['Wilhelm Conrad Röntgen'],
     (0, 0, 0.5, 0, 0, 0.5, None), 0),
    ('Wilhelm Röntgen', ['Wilhelm Conrad Röntgen', 'Röntgen'],
     (0, 1, 0.8, 1, 0, 0.8, None), 0),
    ('new_york', ['New York'],
     (0, 0, 0, 1, 1, 1, None), 0),
    ('New York City', ['New York', 'NYC'],
     (0, 1, 0.8, 1, 0, 0.8, None), 0),
    ('May 18, 2018', ['May 18, 2018'],
     (1, 1, 1, 1, 1, 1, None), 0),
    ('18 May 2018', ['May 18, 2018'],
     (0, 0, 1, 1, 0, 1, None), 0),
    ('Olivia MFSK', ['Olivia', 'MFSK'],
     (0, 1, 0.666667, 1, 0, 0.666667, None), 0),
    ('`Mars`', ['Mars'],
     (1, 1, 1, 1, 1, 1, None), 0),
    ('Mars´', ['Mars'],
     (0, 1, 0, 1, 1, 1, None), 0),
    ('<answer> Beijing </answer>', ['Beijing'],
     (1, 1, 1, 1, 1, 1, 1), 0),
    ('<answer>Paris</answer>', ['Paris'],
     (1, 1, 1, 1, 1, 1, 1), 0),
    ('think <answer>Rome</answer> no <answer>Paris</answer>', ['Paris'],
     (1, 1, 1, 1, 1, 1, 1), 1),
    ('<answer>Paris</answer> <answer>Rome</answer>', ['Paris'],
     (0, 0, 0, 0, 0, 0, 0), 0),
    ('<answer>Paris', ['Paris'],
     (1, 1, 1, 1, 1, 1, 0), 0),
    ('<answer></answer>', ['Paris'],
     (0, 0, 0, 0, 0, 0, 0), 0),
    ('<answer>\nParis\n</answer>', ['Paris'],
     (1, 1, 1, 1, 1, 1, 1), 0),
    ('<answer><answer>Paris</answer></answer>', ['Paris'],
     (1, 1, 1, 1, 1, 1, 0), 0),
    ('<answer>The answer is Paris.</answer>', ['Paris'],
     (0, 1, 0.5, 1, 0, 0.5, 0), 0),
]


@pytest.mark.parametrize(("reply", "golds", "values", "alone"), REFERENCE)
def test_each_rule_equals_its_reference(reply: str, golds: list[str],
                                        values: tuple[float | None, ...], alone: float) -> None:
    expected = {name: v for name, v in zip(ORDER, values, strict=True) if v is not None}
    got = openqa_answer(reply, golds)
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-6), name


def test_the_one_answer_trap() -> None:
    """Search-R1 scores prompt + response and asks for two <answer> spans (its prompt holds
    one); given the reply alone, one span is the answer, where Search-R1 would score 0."""
    trapped = [reply for reply, _, values, alone in REFERENCE if values[-1] == 1 and alone == 0]
    assert trapped, "the table must hold a one-span reply"
    assert search_r1_answer("<answer> Beijing </answer>") == "Beijing"
    assert search_r1_answer("<answer>Paris") is None  # no complete span: qa_em 0
    assert openqa_answer("<answer>Paris", ["Paris"])["qa_em"] == 0.0
    assert openqa_answer("<answer>Paris", ["Paris"])["em"] == 1.0  # R1-Searcher's extraction


def test_r1_searcher_real_run() -> None:
    """R1-Searcher's metric_calc_rule.py prints EM 45.6, Cover-EM 52.8, F1 57.7 on its
    Qwen-2.5-7B Bamboogle run; FlashRAG's metrics give em 0.456, acc 0.488, f1 0.5731333;
    ACC_L (gpt4o_output == "True") is 68/125."""
    path = shared_file("r1-searcher/eval_results/bamboogle_qwen.jsonl")
    report = hopscore.score("openqa", path, path)
    shown = {name: round(value * 100, 1) for name, value in report.metrics.items()}
    assert (shown["r1_em"], shown["cover_em"], shown["r1_f1"]) == (45.6, 52.8, 57.7)
    assert report.metrics["em"] == pytest.approx(0.456)
    assert report.metrics["sub_em"] == pytest.approx(0.488)
    assert report.metrics["f1"] == pytest.approx(0.5731333333333333)
    assert report.metrics["acc_l"] == pytest.approx(68 / 125)
    assert "qa_em" not in report.metrics  # pred_ans is already extracted: no tags
    assert any("cover-EM" in note for note in report.notes)
    assert any("judge and EM" in note for note in report.notes)
    assert list(report.groups) == ["bamboogle"]


def test_results_file_against_eval_set_is_refused() -> None:
    """R1-Searcher's results are not in eval_set order and have no ids: matched by position
    they would score the wrong questions, so a question that differs is an error."""
    gold = shared_file("r1-searcher/eval_set/bamboogle.jsonl")
    run = shared_file("r1-searcher/eval_results/bamboogle_qwen.jsonl")
    with pytest.raises(HopscoreError, match=r"asks .* but gold 1 asks"):
        hopscore.score("openqa", gold, run)


@pytest.mark.parametrize(("relative", "dataset", "count", "first_id"), [
    ("r1-searcher/eval_set/bamboogle.jsonl", "bamboogle", 125, "1"),
    ("r1-searcher/eval_set/hotpotqa_500.first200.jsonl", "hotpotqa", 200, "1"),
    ("r1-searcher/eval_set/2wiki_500.first200.jsonl", "2wikimultihopqa", 200, "1"),
    ("r1-searcher/eval_set/musique_500.first200.jsonl", "musique", 200, "1"),
    ("flashrag/quick_start/nq/test.jsonl", "nq", 17, "test_0"),
])
def test_real_gold_layouts(relative: str, dataset: str, count: int, first_id: str) -> None:
    examples = BENCH.load_gold(shared_file(relative))
    assert len(examples) == count and examples[0].id == first_id
    assert {e.dataset for e in examples} == {dataset}
    assert all(e.answers and e.question for e in examples)


def test_dataset_from_path_and_rows(tmp_path: Path) -> None:
    assert dataset_from_path("data/nq/test.jsonl") == "nq"
    assert dataset_from_path("2wiki_500.jsonl") == "2wikimultihopqa"
    assert dataset_from_path("x/TriviaQA/dev.jsonl") == "triviaqa"
    assert dataset_from_path("hf:RUC-NLPIR/FlashRAG_datasets:popqa@test") == "popqa"
    assert dataset_from_path("mine/gold.jsonl") is None
    gold = write_jsonl(tmp_path / "mixed.jsonl", [
        {"id": "a", "question": "q1", "golden_answers": ["x"], "data_source": "nq"},
        {"id": "b", "question": "q2", "reward_model": {"ground_truth": {"target": ["y"]}},
         "data_source": "hotpotqa"},
        {"id": "c", "question": "q3", "golden_answers": ["z"]},
    ])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "answer": "x"},
                                               {"id": "b", "answer": "<answer>y</answer>"}])
    report = hopscore.score("openqa", gold, preds)
    assert set(report.groups) == {"nq", "hotpotqa"}  # row c names none, nor does the path
    assert report.metrics["qa_em"] == pytest.approx(1 / 3)
    assert report.metrics["em"] == pytest.approx(2 / 3)
    assert report.missing_ids == ["c"]


def test_flashrag_intermediate_data(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "nq.jsonl", [
        {"id": "test_0", "question": "q", "golden_answers": ["Olivia", "MFSK"]}])
    inter = tmp_path / "intermediate_data.json"
    inter.write_text(json.dumps([{"id": "test_0", "question": "q",
                                  "output": {"pred": "MFSK mode"}}]), encoding="utf-8")
    report = hopscore.score("openqa", gold, inter)
    assert report.metrics["em"] == 0.0 and report.metrics["sub_em"] == 1.0


@pytest.mark.parametrize(("rows", "where"), [
    ([{"id": "a", "question": "q"}], ":1: field 'golden_answers'"),
    ([{"id": "a", "question": "q", "golden_answers": [1]}], ":1: field 'golden_answers'"),
    ([{"id": "a", "question": "q", "golden_answers": []}], ":1: field 'golden_answers'"),
    ([{"id": "a", "golden_answers": ["x"]}], ":1: field 'question'"),
    ([{"id": "a", "question": "q", "answer": "x"}, {"id": "a", "question": "q", "answer": "y"}],
     "duplicate gold id 'a'"),
])
def test_bad_gold_names_file_line_and_field(tmp_path: Path, rows: list[dict[str, Any]],
                                            where: str) -> None:
    path = write_jsonl(tmp_path / "gold.jsonl", rows)
    with pytest.raises(InputError) as caught:
        BENCH.load_gold(path)
    assert where in str(caught.value) and str(path) in str(caught.value)


def test_bad_predictions_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl",
                       [{"id": "a", "question": "q", "golden_answers": ["x"]}])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "answer": 3}])
    err = cli_error(capsys, "score", "openqa", "-g", gold, "-p", preds)
    assert "p.jsonl:1" in err and "answer" in err
    results = write_jsonl(tmp_path / "r.jsonl", [{"question": "q", "answer": "x",
                                                  "pred_ans": "x", "gpt4o_output": True}])
    err = cli_error(capsys, "score", "openqa", "-g", gold, "-p", results)
    assert "r.jsonl:1" in err and "gpt4o_output" in err


def test_sample_and_round_trip(tmp_path: Path) -> None:
    files = hopscore.sample_files("openqa")
    report = hopscore.score("openqa", files.gold, files.predictions)
    assert report.metrics["em"] == pytest.approx(2 / 6)
    assert report.metrics["cover_em"] == pytest.approx(5 / 6)
    assert "qa_em" in report.metrics and report.missing_ids == []
    predictions = BENCH.load_predictions(files.predictions)
    out = tmp_path / "predictions.jsonl"
    BENCH.write_predictions(list(predictions.by_id.values()), out)
    again = hopscore.score("openqa", files.gold, out)
    assert again.metrics == report.metrics


def test_no_note_when_rules_agree(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", [{"id": "a", "question": "q",
                                               "golden_answers": ["x"]}])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "answer": "x"}])
    assert hopscore.score("openqa", gold, preds).notes == []
    assert BENCH.summary_notes({"em": 0.40, "cover_em": 0.44, "judge_accuracy": 0.43}) == ()
    assert BENCH.summary_notes({"em": 0.40, "cover_em": 0.40, "judge_accuracy": 0.52}) == (
        "judge_gap",)


@pytest.mark.parametrize(("prediction", "gold", "category"), [
    ("Paris, France", "Paris", "verbose: holds every gold word"),
    ("1990", "1", "gold inside a word or number"),
    ("U.S.-born", "U S born", "punctuation read apart"),
    ("Wilhelm Röntgen", "Wilhelm Conrad Röntgen", "shares words (alias or partial)"),
    ("1991", "1989", "another number"),
    ("no", "yes", "yes/no swapped"),
    ("", "Mars", "empty answer"),
    ("Venus", "Mars", "unrelated"),
    ("Mars", "Mars", "exact match"),
])
def test_why_em_missed(prediction: str, gold: str, category: str) -> None:
    metrics = openqa_answer(prediction, [gold])
    sample = Sample(id="a", groups={}, metrics=metrics, missing=False, prediction=prediction,
                    gold=(gold,))
    assert em_miss(sample) == category


@pytest.mark.parametrize(("reply", "correct", "parsed"), [
    ("True", True, True), ("False", False, True), (" **True.** ", True, True),
    ("false", False, True), ("True or False", False, False), ("", False, False),
    ("It is True", False, False),
])
def test_acc_l_reader(reply: str, correct: bool, parsed: bool) -> None:
    from hopscore.benchmarks.openqa.judge_verdict import read_verdict

    verdict = read_verdict(reply)
    assert (verdict.correct, verdict.parse_ok) == (correct, parsed)


def test_score_judge_uses_the_acc_l_preset(tmp_path: Path) -> None:
    """score --judge on openqa asks the acc_l preset's True/False question by default, records
    the preset, and footnotes a judge far from EM."""
    from tests.conftest import run_cli
    from tests.openai_server import FakeOpenAI, Reply

    files = hopscore.sample_files("openqa")
    golds = {e.question: e.answers for e in BENCH.load_gold(files.gold)}

    def grade(prompt: str, _: Any) -> Reply:
        assert prompt.rstrip().endswith("False if it is not.")
        question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
        graded = prompt.split("Answer to grade: ", 1)[1].split("\n", 1)[0].lower()
        return Reply("True" if any(g.lower() in graded for g in golds[question]) else "False")

    with FakeOpenAI(grade) as server:
        result = run_cli("score", "openqa", "-g", files.gold, "-p", files.predictions,
                         "--judge", "--judge-model", "judge", "--judge-base-url",
                         server.base_url, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["metrics"]["judge_accuracy"] == pytest.approx(5 / 6)
    assert metrics["judge"]["preset"] == "openqa/acc_l"
    assert any("judge and EM" in note for note in metrics["notes"])


def test_hub_rows_take_the_dataset_of_their_config() -> None:
    from hopscore.benchmarks.openqa import hub

    row = {"id": "test_0", "question": "q", "golden_answers": ["a"], "metadata": {}}
    where = "hf:RUC-NLPIR/FlashRAG_datasets:popqa@test"
    assert hub.LAYOUT.to_official(row, where, 0)["dataset"] == "popqa"
    assert hub.LAYOUT.to_official({**row, "data_source": "nq"}, where, 0) == {
        **row, "data_source": "nq"}
    assert not hub.LAYOUT.is_hub_row(row)  # a local JSON Lines file is read as it is


def test_report_shows_the_footnotes(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    files = hopscore.sample_files("openqa")
    hopscore.score("openqa", files.gold, files.predictions, output_dir=tmp_path / "scored")
    result = run_cli("report", tmp_path / "scored", "--gold", files.gold, "--output",
                     tmp_path / "report.html")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert '<p class="note">scored: note: cover-EM' in page
