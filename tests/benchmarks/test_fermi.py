import json
from pathlib import Path

import pytest

from hopscore.benchmarks import get
from hopscore.scores.scoring import score_examples
from tests.benchmarks._cli import cli_error
from tests.conftest import FIXTURES, run_cli

GOLD = FIXTURES / "fermi" / "gold.json"  # 0: "160 km", 1: "4e+4", 2: "$60000", 11: "0", ...


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value))
    return path


def run(predictions: Path, gold: Path = GOLD):
    bench = get("fermi")
    rows = []
    report = score_examples(
        bench, bench.load_gold(gold), bench.load_predictions(predictions), rows.append
    )
    return report, {row.id: row.metrics["fp_score"] for row in rows}


def test_ids_are_positions_and_units_convert(tmp_path):
    preds = {"0": "160000 m", "1": 40000, "2": "$6000", "4": "12 m**3", "5": "2.6 hour"}
    report, scores = run(write(tmp_path / "p.json", preds))
    assert scores["0"] == 1.0 and scores["1"] == 1.0 and scores["4"] == pytest.approx(1.0)
    assert scores["2"] == pytest.approx(2 / 3)
    assert 0 < scores["5"] < 1
    assert report.n_gold == 14 and len(report.missing_ids) == 9
    assert report.metrics["fp_score"] == pytest.approx(sum(scores.values()) / 14)


def test_universal_jsonl(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"id": "0", "answer": "160 km"}\n{"id": "11", "answer": 0}\n{"id": "99", "answer": "1"}\n'
    )
    report, scores = run(path)
    assert scores["0"] == 1.0 and scores["11"] == 1.0
    assert report.extra_ids == ["99"]


def test_unparseable_empty_and_negative_predictions_score_zero(tmp_path):
    preds = {"0": "about 160 km", "1": "", "2": "-60000", "3": "   "}
    report, scores = run(write(tmp_path / "p.json", preds))
    assert [scores[k] for k in "0123"] == [0.0, 0.0, 0.0, 0.0]
    assert any("3 predicted answers could not be evaluated" in w for w in report.warnings)


def test_gold_zero_uses_the_one_zero_branch(tmp_path):
    _, scores = run(write(tmp_path / "p.json", {"11": "0.5"}))
    assert scores["11"] == pytest.approx(0.69897000433)


def test_groups_by_gold_unit(tmp_path):
    report, _ = run(write(tmp_path / "p.json", {}))
    # "62.5 %" and "10000 sheets" name units; "$60000" and "1.05E+7" do not
    assert report.groups["with_unit"].n == 10 and report.groups["no_unit"].n == 4


def test_people_per_area_gold_is_compared_unconverted(tmp_path):
    _, scores = run(write(tmp_path / "p.json", {"6": "300 people * km ** -2", "10": "10000"}))
    assert scores["6"] == 1.0 and scores["10"] == 1.0


@pytest.mark.parametrize(
    ("gold", "predictions", "message"),
    [
        (None, {"0": None}, "record '0': field 'answer': expected a string"),
        (None, {"0": True}, "got boolean"),
        (None, {"0": ["5 km"]}, "got list"),
        (None, ["5 km"], 'expected a JSON object {"0": "22.3 km", ...}'),
        (
            [{"question": "q", "answer": 5}],
            {"0": "5"},
            "record [0]: field 'answer': expected a string",
        ),
        (
            [{"question": "q", "answer": "5 blargs"}],
            {"0": "5"},
            "cannot evaluate gold answer '5 blargs'",
        ),
        ({"0": "5"}, {"0": "5"}, "expected a JSON list of Fermi problems"),
    ],
)
def test_bad_input_is_a_located_error(tmp_path, capsys, gold, predictions, message):
    gold_path = GOLD if gold is None else write(tmp_path / "g.json", gold)
    assert message in cli_error(
        capsys, "score", "fermi", "-g", gold_path, "-p", write(tmp_path / "p.json", predictions)
    )


def test_cli_subprocess_reports_the_record_and_exits_2(tmp_path):
    result = run_cli("score", "fermi", "-g", GOLD, "-p", write(tmp_path / "p.json", {"3": None}))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "p.json: record '3': field 'answer'" in " ".join(result.stderr.split())


def test_shipped_sample_scores_every_example():
    from tests.parity.common import SAMPLES

    manifest = json.loads((SAMPLES / "fermi" / "manifest.json").read_text())
    assert (
        set(manifest) == {"benchmark", "gold", "predictions", "aliases", "note"}
        and manifest["aliases"] is None
    )
    report, _ = run(
        SAMPLES / "fermi" / manifest["predictions"], SAMPLES / "fermi" / manifest["gold"]
    )
    assert report.n_gold == 5 and not report.missing_ids and not report.extra_ids
