"""What each benchmark declares for model runs: predictions from answers, the official
prediction files (read back to the same scores), citations, tables, Fermi facts, MCR."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.base import ModelAnswer, PromptInputs
from hopscore.benchmarks.fermi import answer_unit, context_facts
from hopscore.benchmarks.hotpotqa.reply_facts import cited_facts
from hopscore.benchmarks.hybridqa.wikitables import link_title, load_table, table_context
from hopscore.errors import HopscoreError, InputError
from hopscore.run import mcr
from hopscore.scores.scoring import score_examples
from tests.run.test_prompts import GOLDS, HYBRID_TABLES

#: answers a model might give, per benchmark (as extracted text)
ANSWERS: dict[str, list[str | None]] = {
    "hotpotqa": ["the violin", "yes", None],
    "2wikimultihopqa": ["United States", "no", None],
    "hybridqa": ["Mira Osk", "12400", ""],
    "strategyqa": ["yes", "No", "maybe"],
    "fermi": ["160 km", "3.2e+13", "not a number"],
    "quartz": ["A", "B. fall", "neither"],
    "feverous": ["SUPPORTS", "no", "unclear"],
    "bamboogle": ["Anna Vela", "Oslo", ""],
}
OUTPUT = "Reasoning [Paragraph 1, 0] and [Edward Marlow, 1].\nSupporting facts: [Quiet Harbor, 0]"


@pytest.mark.parametrize("name", list(GOLDS))
def test_predictions_round_trip_through_the_official_file(name: str, tmp_path: Path) -> None:
    bench = benchmarks.get(name)
    gold, _ = GOLDS[name]
    examples = bench.load_gold(gold)[:3]
    made = [
        bench.make_prediction(example, ModelAnswer(text, OUTPUT, ("Lighthouse-1",)))
        for example, text in zip(examples, ANSWERS[name], strict=False)
    ]
    path = tmp_path / bench.predictions_file
    bench.write_predictions(made, path)
    loaded = bench.load_predictions(path)
    assert set(loaded.by_id) == {e.id for e in examples}
    for example, prediction in zip(examples, made, strict=True):
        assert bench.score(example, loaded.by_id[example.id]) == bench.score(example, prediction)
    report = score_examples(bench, examples, loaded, resamples=0)
    assert report.missing_ids == [] or name in ("hotpotqa", "2wikimultihopqa")


def test_answers_become_the_benchmarks_prediction_types() -> None:
    sqa = benchmarks.get("strategyqa")
    example = sqa.load_gold(GOLDS["strategyqa"][0])[0]
    assert sqa.make_prediction(example, ModelAnswer("Yes")).value is True
    assert sqa.make_prediction(example, ModelAnswer("no")).value is False
    assert not sqa.make_prediction(example, ModelAnswer("perhaps")).has_answer
    assert sqa.make_prediction(example, ModelAnswer("yes", retrieved=("a", "b"))).paragraphs == (
        "a", "b")
    quartz = benchmarks.get("quartz")
    question = quartz.load_gold(GOLDS["quartz"][0])[0]
    assert quartz.make_prediction(question, ModelAnswer("B) fall")).label == "B"
    feverous = benchmarks.get("feverous")
    claim = feverous.load_gold(GOLDS["feverous"][0])[0]
    assert feverous.make_prediction(claim, ModelAnswer("Yes")).answer == "SUPPORTS"
    assert feverous.make_prediction(claim, ModelAnswer("REFUTES")).answer == "REFUTES"


def test_cited_facts() -> None:
    titles = ["Ed Wood", "Scott Derrickson", "Sacramento, California"]
    output = (
        "<think>[Ed Wood, 9]</think>Ed Wood [Ed Wood, 0] and [scott derrickson, 1], "
        "[Paragraph 3, 2], [2, 0], [Sacramento, California, 4], [Nowhere, 1], [Ed Wood, 0]"
    )
    assert cited_facts(output, titles) == (
        ("Ed Wood", 0), ("Scott Derrickson", 1), ("Sacramento, California", 2),
        ("Scott Derrickson", 0), ("Sacramento, California", 4), ("Nowhere", 1),
    )
    labelled = "I used [Ed Wood, 3] while thinking.\nSupporting facts: [Ed Wood, 1]\nAnswer: x"
    assert cited_facts(labelled, titles) == (("Ed Wood", 1),)


def test_table_context_fits_the_budget_and_ranks_passages() -> None:
    table = load_table(HYBRID_TABLES, "Varland_stations_0")
    full = table_context(table, "Who designed the station that opened in 1869 ?", 3000)
    assert full.omitted_rows == 0 and full.omitted_passages == 0
    assert full.markdown.splitlines()[0] == "| Name | Town | Opened |"
    assert full.passages[0][0] == "Lendal Central"  # overlaps the question most ("station")
    small = table_context(table, "mayor Jon Halvar", 100)
    assert small.omitted_rows + small.omitted_passages > 0
    assert len(small.markdown) + sum(len(t) + len(x) for t, x in small.passages) <= 100 * 4 + 40
    assert link_title("/wiki/Sund_(town)") == "Sund (town)"


def test_hybridqa_needs_tables_and_questions(tmp_path: Path) -> None:
    bench = benchmarks.get("hybridqa")
    example = bench.load_gold(GOLDS["hybridqa"][0])[0]
    with pytest.raises(HopscoreError, match="--tables-dir"):
        bench.prompt_variables(example, PromptInputs())
    with pytest.raises(InputError, match="no such file"):
        bench.prompt_variables(example, PromptInputs(tables_dir=tmp_path))
    reference = bench.load_gold(Path(__file__).parents[1] / "fixtures" / "hybridqa"
                                / "dev_reference_small.json")[0]
    with pytest.raises(HopscoreError, match=r"dev_reference\.json holds only answers"):
        bench.prompt_variables(reference, PromptInputs(tables_dir=HYBRID_TABLES))


def test_fermi_facts_and_unit() -> None:
    assert context_facts("CONTEXT:=F1: a = b=F2: c") == ["a = b", "c"]
    assert context_facts("plain text") == ["plain text"]
    assert answer_unit("22.3 km") == "km"
    assert answer_unit("$7224") == "$"
    assert answer_unit("3.20E+13") is None
    fermi = benchmarks.get("fermi")
    example = fermi.load_gold(GOLDS["fermi"][0])[0]
    variables = fermi.prompt_variables(example, PromptInputs())
    assert variables["unit"] == "km" and variables["mcr_question"].endswith(" Unit: km.")


@pytest.mark.parametrize(
    ("evaluator", "prediction", "gold", "expected"),
    [
        ("wikihop", "the Eiffel Tower", "Eiffel Tower", 1.0),
        ("wikihop", "yes", "no", 0.0),
        ("bamboogle", "Bora Bora", "Bora Bora", 0.5),  # MCR's set F1 over list lengths
        ("em", "yes", "Yes", 1.0),
        ("em", "Yes, it can", "Yes", 0.0),
        ("hover", "Yes, it is true", "Yes", 1.0),
        ("hover", "Maybe", "No", 0.0),
        ("quartz", "B. fall", "B", 1.0),
        ("quartz", "Because ...", "B", 1.0),  # MCR's first-character rule
        ("quartz", "", "A", None),  # an empty answer is an abstention
        ("fermi", "5 trillion", "5e12", 0.0),  # MCR's trillion = 1e9 bug, kept
        ("fermi", "22.3", "22.3 km", 1.0),  # the gold unit is appended to a bare number
    ],
)
def test_mcr_evaluators(evaluator: str, prediction: str, gold: str, expected: Any) -> None:
    # the shared evaluators live in hopscore.run.mcr, a benchmark's own on the benchmark
    bench = next(b for b in map(benchmarks.get, benchmarks.names()) if b.mcr_evaluator == evaluator)
    assert mcr.evaluator_of(bench)(prediction, gold) == expected


def test_mcr_scoring_reports_answered_and_all() -> None:
    from hopscore.benchmarks.base import Prediction, Predictions

    bench = benchmarks.get("bamboogle")
    examples = bench.load_gold(GOLDS["bamboogle"][0])[:16]
    scoring = mcr.McrScoring(bench)
    by_id = {}
    for index, example in enumerate(examples[:12]):
        if index < 4:  # right
            inner = Prediction(id=example.id, answer=example.gold_answers()[0])
            by_id[example.id] = mcr.McrPrediction(id=example.id, inner=inner, mcr=1.0)
        elif index < 8:  # wrong
            inner = Prediction(id=example.id, answer="wrong")
            by_id[example.id] = mcr.McrPrediction(id=example.id, inner=inner, mcr=0.0)
        else:  # abstained
            by_id[example.id] = mcr.McrPrediction(id=example.id, inner=None, mcr=None)
    # examples[12:]: the request failed (no prediction at all)
    report = score_examples(scoring, examples, Predictions(by_id, "run", "run"), resamples=200)
    assert list(report.metrics)[:3] == ["mcr_answered", "mcr_all", "answered"]
    assert report.metrics["mcr_answered"] == pytest.approx(0.5)
    assert report.metrics["mcr_all"] == pytest.approx(0.25)
    assert report.metrics["answered"] == pytest.approx(0.5)
    assert report.metrics["em"] == pytest.approx(0.25)
    assert set(report.missing_ids) == {e.id for e in examples[8:]}
    assert report.ci is not None and report.ci["mcr_answered"] is not None
    none = score_examples(scoring, examples[8:], Predictions({}, "run", "run"), resamples=0)
    assert "mcr_answered" not in none.metrics and none.metrics["answered"] == 0.0
