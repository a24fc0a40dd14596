import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.benchmarks import get
from hopscore.benchmarks.base import Predictions
from hopscore.benchmarks.strategyqa import StrategyQA, StrategyQAPrediction, recall_at
from hopscore.errors import HopscoreError
from hopscore.scores.scoring import score_examples
from tests.benchmarks._cli import cli_error
from tests.conftest import FIXTURES, run_cli, shared_file

GOLD = FIXTURES / "strategyqa" / "gold.json"


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def write_lines(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(gold: Path, predictions: Path):
    bench = get("strategyqa")
    return score_examples(bench, bench.load_gold(gold), bench.load_predictions(predictions))


def gold_records() -> list[dict[str, object]]:
    return json.loads(GOLD.read_text())


def test_official_format_compares_with_python_equality(tmp_path):
    records = gold_records()[:4]  # answers: True, False, True, False
    gold = write(tmp_path / "gold.json", records)
    answers = ["yes", 0, 1.0, None]  # "yes" != True; 0 == False; 1.0 == True; None never equal
    preds = write(
        tmp_path / "p.json",
        {r["qid"]: {"answer": a} for r, a in zip(records, answers, strict=True)},
    )
    report = run(gold, preds)
    assert report.metrics == {"accuracy": 0.5}
    assert any("not JSON booleans" in w and "yes" in w for w in report.warnings)


def test_universal_format_maps_yes_no_strings(tmp_path):
    records = gold_records()[:4]
    gold = write(tmp_path / "gold.json", records)
    rows = [
        {"id": records[0]["qid"], "answer": " Yes "},
        {"id": records[1]["qid"], "answer": "FALSE"},
        {"id": records[2]["qid"], "answer": True},
        {"id": records[3]["qid"], "answer": "maybe"},
    ]
    report = run(gold, write_lines(tmp_path / "p.jsonl", rows))
    assert report.metrics == {"accuracy": 0.75}
    assert any("other than yes/no/true/false" in w for w in report.warnings)


def test_missing_and_extra_ids_follow_the_project_policy(tmp_path):
    records = gold_records()
    preds = {r["qid"]: {"answer": r["answer"]} for r in records[:6]}
    preds["not-in-gold"] = {"answer": True}
    report = run(GOLD, write(tmp_path / "p.json", preds))
    assert report.metrics["accuracy"] == pytest.approx(6 / 12)
    assert report.missing_ids == [r["qid"] for r in records[6:]]
    assert report.extra_ids == ["not-in-gold"]


def test_metrics_reported_only_for_predicted_parts(tmp_path):
    records = gold_records()
    answers = run(GOLD, write(tmp_path / "a.json", {r["qid"]: {"answer": True} for r in records}))
    assert list(answers.metrics) == ["accuracy"]
    decomps = {r["qid"]: {"decomposition": r["decomposition"]} for r in records}
    report = run(GOLD, write(tmp_path / "d.json", decomps))
    assert report.metrics == {"accuracy": 0.0, "sari": 1.0}


def test_partial_key_sets_score_zero_for_the_missing_part(tmp_path):
    records = gold_records()[:2]
    gold = write(tmp_path / "gold.json", records)
    preds = {
        records[0]["qid"]: {"answer": True, "decomposition": records[0]["decomposition"]},
        records[1]["qid"]: {"answer": False},
    }
    report = run(gold, write(tmp_path / "p.json", preds))
    assert report.metrics == {"accuracy": 1.0, "sari": 0.5}
    assert any("1 of 2 predictions has no 'decomposition'" in w for w in report.warnings)


def test_recall_at_10():
    evidence = (frozenset({"A-1", "B-2"}), frozenset({"C-3"}), frozenset())
    assert recall_at(evidence, ("A-1",)) == 0.5
    assert recall_at(evidence, ("C-3",)) == 1.0  # max over annotators
    assert recall_at(evidence, (*(f"X-{i}" for i in range(10)), "C-3")) == 0.0  # cut at 10
    assert recall_at(evidence, ("A-1", "A-1", "B-2")) == 1.0
    assert recall_at((frozenset(),), ("A-1",)) == 0.0  # an annotator without evidence scores 0
    assert recall_at((), ("A-1",)) == 0.0  # no annotators: 0 (the official crashes)


def test_evidence_ignores_operation_steps(tmp_path):
    records = gold_records()
    tuba = next(r for r in records if r["qid"] == "hs-sqa-11")  # every step "no_evidence"
    gold = write(tmp_path / "gold.json", [tuba])
    report = run(gold, write(tmp_path / "p.json", {"hs-sqa-11": {"paragraphs": ["Tuba-1"]}}))
    assert report.metrics["recall@10"] == 0.0


def test_eladsegal_decomposition_jsonl(tmp_path):
    records = gold_records()[:2]
    gold = write(tmp_path / "gold.json", records)
    rows = [
        {
            "loss": 0.5,
            "decomposition": r["decomposition"],
            "qid": r["qid"],
            "question": r["question"],
            "gold_decomposition": r["decomposition"],
        }
        for r in records
    ]
    report = run(gold, write_lines(tmp_path / "p.jsonl", rows))
    assert report.metrics == {"accuracy": 0.0, "sari": 1.0}


def test_real_bart_decompositions_score_the_documented_sari():
    report = run(
        shared_file("strategyqa/eladsegal/dev.json"),
        shared_file("strategyqa/eladsegal/bart_decomp_dev_predictions.jsonl"),
    )
    assert report.metrics["sari"] == pytest.approx(0.5560, abs=5e-5)


def test_gold_without_decomposition_cannot_score_sari(tmp_path):
    gold = write(tmp_path / "gold.json", [{"qid": "q", "question": "Is it?", "answer": True}])
    preds = write(tmp_path / "p.json", {"q": {"decomposition": ["Is it?"]}})
    with pytest.raises(HopscoreError, match="no 'decomposition'"):
        run(gold, preds)


def test_groups_by_gold_answer(tmp_path):
    report = run(
        GOLD, write(tmp_path / "p.json", {r["qid"]: {"answer": True} for r in gold_records()})
    )
    assert report.groups["true"].metrics["accuracy"] == 1.0
    assert report.groups["false"].metrics["accuracy"] == 0.0


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(range(12))), st.lists(st.booleans(), min_size=12, max_size=12))
def test_accuracy_does_not_depend_on_prediction_order(order, answers):
    bench = StrategyQA()
    examples = bench.load_gold(GOLD)
    preds = {
        examples[i].id: StrategyQAPrediction(id=examples[i].id, value=answers[i]) for i in order
    }
    report = score_examples(bench, examples, Predictions(preds, "mem", "official"))
    expected = sum(e.answer == a for e, a in zip(examples, answers, strict=True)) / 12
    assert report.metrics["accuracy"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("gold", "predictions", "message"),
    [
        (
            [{"qid": "a", "question": "Q?", "answer": "maybe"}],
            {"a": {"answer": True}},
            "record [0]: field 'answer': expected a boolean (or true/false, yes/no), got string",
        ),
        ([{"question": "Q?", "answer": True}], {"a": {"answer": True}}, "field 'qid': missing"),
        (
            [{"qid": "a", "question": "Q?", "answer": True}],
            {"a": {"decomposition": "one step"}},
            "record 'a': field 'decomposition': expected a list of strings",
        ),
        (
            [{"qid": "a", "question": "Q?", "answer": True}],
            {"a": {"paragraphs": ["x", 3]}},
            "field 'paragraphs'",
        ),
        ([{"qid": "a", "question": "Q?", "answer": True}], {"a": True}, "expected a JSON object"),
        ([{"qid": "a", "question": "Q?", "answer": True}], [{"a": True}], "got list"),
    ],
)
def test_bad_input_is_a_located_error(tmp_path, capsys, gold, predictions, message):
    err = cli_error(
        capsys,
        "score",
        "strategyqa",
        "--gold",
        write(tmp_path / "g.json", gold),
        "--predictions",
        write(tmp_path / "p.json", predictions),
    )
    assert message in err


def test_bad_universal_lines_are_located(tmp_path):
    gold = write(tmp_path / "g.json", [{"qid": "a", "question": "Q?", "answer": True}])
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "a", "answer": true}\n{"id": "a", "answer": false}\n')
    result = run_cli("score", "strategyqa", "-g", gold, "-p", preds)
    assert (
        result.returncode == 2 and "p.jsonl:2" in result.stderr and "duplicate id" in result.stderr
    )
    preds.write_text('{"id": "a", "answer": 1}\n{"id": "b", "answer": false}\n')
    result = run_cli("score", "strategyqa", "-g", gold, "-p", preds)
    assert result.returncode == 2 and "p.jsonl:1" in result.stderr and "'answer'" in result.stderr


def test_shipped_sample_scores_every_example():
    from tests.parity.common import SAMPLES

    manifest = json.loads((SAMPLES / "strategyqa" / "manifest.json").read_text())
    assert (
        set(manifest) == {"benchmark", "gold", "predictions", "aliases", "note"}
        and manifest["aliases"] is None
    )
    report = run(
        SAMPLES / "strategyqa" / manifest["gold"], SAMPLES / "strategyqa" / manifest["predictions"]
    )
    assert report.n_gold == 5 and not report.missing_ids and not report.extra_ids
    assert list(report.metrics) == ["accuracy", "sari", "recall@10"]
