import json
from pathlib import Path

import pytest

from hopscore.benchmarks import get
from hopscore.benchmarks.feverous import FEVEROUS, parse_element, truncate
from hopscore.scores.scoring import score_examples
from tests.benchmarks._cli import cli_error
from tests.conftest import FIXTURES, run_cli

GOLD = FIXTURES / "feverous" / "gold.jsonl"


def lines(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(gold: Path, predictions: Path):
    bench = get("feverous")
    rows = []
    report = score_examples(
        bench, bench.load_gold(gold), bench.load_predictions(predictions), rows.append
    )
    return report, {row.id: row.metrics for row in rows}


def gold_row(id_: int, label: str, *sets: list[str]) -> dict[str, object]:
    return {
        "id": id_,
        "label": label,
        "claim": f"claim {id_}",
        "evidence": [{"content": s, "context": {}} for s in sets],
    }


HEADER = {"id": "", "label": "", "claim": "", "evidence": []}


def test_parse_element_follows_the_official_split():
    assert parse_element("Page_sentence_0") == ("Page", "sentence", "0")
    assert parse_element("A Page_cell_0_1_2") == ("A Page", "cell", "0_1_2")
    assert parse_element("P_header_cell_0_0_1") == ("P", "header_cell", "0_0_1")
    assert parse_element("P_table_caption_0") == ("P", "table_caption", "0")
    assert parse_element("P_item_1_3") == ("P", "item", "1_3")
    assert parse_element("P_title") == ("P", "title", "")
    assert parse_element("Pier_9 Arena_sentence_1") == ("Pier", "9 Arena", "sentence_1")
    assert parse_element("NoUnderscore") is None


def test_truncation_keeps_5_other_and_25_table_elements_in_order():
    sentences = [("P", "sentence", str(i)) for i in range(7)]
    cells = [("P", "cell", f"0_{i}_0") for i in range(27)]
    mixed = [x for pair in zip(sentences, cells[:7], strict=True) for x in pair] + cells[7:]
    kept = truncate(mixed)
    assert [e for e in kept if e[1] == "sentence"] == sentences[:5]
    assert [e for e in kept if e[1] == "cell"] == cells[:25]
    assert truncate([("P", "table_caption", "0")] * 30) == (("P", "table_caption", "0"),) * 25


def test_scores_on_hand_made_cases(tmp_path):
    gold = lines(
        tmp_path / "gold.jsonl",
        [
            HEADER,
            gold_row(1, "SUPPORTS", ["P_sentence_0", "P_cell_0_1_1"], ["Q_sentence_2"]),
            gold_row(2, "REFUTES", ["R_sentence_1"]),
            gold_row(3, "NOT ENOUGH INFO"),  # no gold evidence at all
            gold_row(4, "SUPPORTS", [], ["S_sentence_0"]),  # an empty set is always covered
        ],
    )
    preds = lines(
        tmp_path / "p.jsonl",
        [
            {
                "id": 1,
                "predicted_label": "supports",
                "predicted_evidence": ["Q_sentence_2", "X_sentence_9"],
            },
            {
                "id": 2,
                "predicted_label": "REFUTES",
                "predicted_evidence": ["R_sentence_1", "R_sentence_1"],
            },
            {"id": 3, "predicted_label": "NOT ENOUGH INFO", "predicted_evidence": []},
            {"id": 4, "predicted_label": "REFUTES", "predicted_evidence": ["Z_sentence_0"]},
        ],
    )
    report, rows = run(gold, preds)
    assert rows["1"] == {
        "label_accuracy": 1.0,
        "feverous_score": 1.0,
        "evidence_precision": 0.5,
        "evidence_recall": 1.0,
        "evidence_f1": pytest.approx(2 / 3),
    }
    assert rows["2"]["evidence_precision"] == 1.0 and rows["2"]["feverous_score"] == 1.0
    # no gold sets: recall 1 but never strictly correct; no predicted evidence: precision 1
    assert rows["3"] == {
        "label_accuracy": 1.0,
        "feverous_score": 0.0,
        "evidence_precision": 1.0,
        "evidence_recall": 1.0,
        "evidence_f1": 1.0,
    }
    assert rows["4"]["evidence_recall"] == 1.0 and rows["4"]["feverous_score"] == 0.0
    precision, recall = (0.5 + 1 + 1 + 0) / 4, 1.0
    assert report.metrics["evidence_precision"] == pytest.approx(precision)
    assert report.metrics["evidence_f1"] == pytest.approx(
        2 * precision * recall / (precision + recall)
    )
    assert set(report.groups) == {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}


def test_zero_precision_and_recall_gives_f1_zero(tmp_path):
    gold = lines(tmp_path / "gold.jsonl", [HEADER, gold_row(1, "SUPPORTS", ["P_sentence_0"])])
    preds = lines(
        tmp_path / "p.jsonl",
        [{"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": ["Q_sentence_0"]}],
    )
    report, _ = run(gold, preds)
    assert report.metrics["evidence_f1"] == 0.0  # the official raises ZeroDivisionError


def test_truncated_gold_evidence_does_not_count(tmp_path):
    gold = lines(tmp_path / "gold.jsonl", [HEADER, gold_row(1, "SUPPORTS", ["P_sentence_9"])])
    evidence = [f"P_sentence_{i}" for i in range(5)] + ["P_sentence_9"]
    preds = lines(
        tmp_path / "p.jsonl",
        [{"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": evidence}],
    )
    _, rows = run(gold, preds)
    assert rows["1"]["feverous_score"] == 0.0 and rows["1"]["evidence_precision"] == 0.0


def test_header_forms_and_files_without_header(tmp_path):
    for first in ({"header": ""}, HEADER):
        gold = lines(tmp_path / "g.jsonl", [first, gold_row(1, "SUPPORTS", ["P_sentence_0"])])
        assert [e.id for e in FEVEROUS().load_gold(gold)] == ["1"]
    no_header = lines(tmp_path / "g.jsonl", [gold_row(1, "SUPPORTS"), gold_row(2, "REFUTES")])
    assert [e.id for e in FEVEROUS().load_gold(no_header)] == ["1", "2"]


def test_submission_format_without_ids_is_matched_by_position(tmp_path):
    gold = lines(
        tmp_path / "g.jsonl",
        [
            HEADER,
            {"label": "SUPPORTS", "evidence": [{"content": ["P_cell_0_1_1"]}]},
            {"label": "REFUTES", "evidence": [{"content": ["Q_sentence_0"]}]},
        ],
    )
    preds = lines(
        tmp_path / "p.jsonl",
        [
            {"predicted_label": "SUPPORTS", "predicted_evidence": [["P", "cell", "0_1_1"]]},
            {"predicted_label": "SUPPORTS", "predicted_evidence": [["Q", "sentence", "0"]]},
        ],
    )
    report, rows = run(gold, preds)
    assert rows["0"]["feverous_score"] == 1.0 and rows["1"]["label_accuracy"] == 0.0
    assert report.missing_ids == []


def test_universal_format_and_missing_predictions(tmp_path):
    gold = lines(
        tmp_path / "g.jsonl",
        [
            HEADER,
            gold_row(1, "SUPPORTS", ["P_sentence_0"]),
            gold_row(2, "REFUTES", ["Q_sentence_0"]),
        ],
    )
    preds = lines(
        tmp_path / "p.jsonl", [{"id": 1, "label": "SUPPORTS", "evidence": ["P_sentence_0"]}]
    )
    report, rows = run(gold, preds)
    assert rows["1"]["feverous_score"] == 1.0
    assert rows["2"] == dict.fromkeys(FEVEROUS.metrics, 0.0)  # missing: 0 everywhere
    assert report.missing_ids == ["2"]
    answer_only = lines(tmp_path / "a.jsonl", [{"id": 1, "answer": "supports"}])
    report, rows = run(gold, answer_only)
    assert rows["1"]["label_accuracy"] == 1.0 and rows["1"]["evidence_precision"] == 1.0
    assert any("no evidence" in w for w in report.warnings)


def test_unknown_labels_are_warned_about(tmp_path):
    preds = lines(
        tmp_path / "p.jsonl",
        [{"id": 101, "predicted_label": "SUPPORTED", "predicted_evidence": []}],
    )
    report, _ = run(GOLD, preds)
    assert any("'SUPPORTED'" in w and "score as wrong" in w for w in report.warnings)


@pytest.mark.parametrize(
    ("gold", "predictions", "message"),
    [
        (
            [HEADER, gold_row(1, "SUPPORTS", ["NoUnderscore"])],
            [],
            "g.jsonl:2: field 'evidence.content': element id 'NoUnderscore' has no '_'",
        ),
        (
            [HEADER, {"id": 1, "label": "SUPPORTS", "evidence": ["P_sentence_0"]}],
            [],
            "field 'evidence': expected {\"content\": [element ids]} objects",
        ),
        (
            [HEADER, gold_row(1, "SUPPORTS"), gold_row(1, "REFUTES")],
            [],
            "g.jsonl:3: field 'id': duplicate id '1'",
        ),
        (
            [HEADER, gold_row(1, "SUPPORTS")],
            [
                {"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": []},
                {"id": 2, "predicted_evidence": []},
            ],
            "p.jsonl:2: field 'predicted_label': missing",
        ),
        (
            [HEADER, gold_row(1, "SUPPORTS")],
            [{"id": 1, "predicted_label": 1}],
            "field 'predicted_label': expected a string, got number",
        ),
        (
            [HEADER, gold_row(1, "SUPPORTS")],
            [{"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": "P_s_0"}],
            "field 'predicted_evidence': expected a list of element ids",
        ),
        (
            [HEADER, gold_row(1, "SUPPORTS", ["P_sentence_0"])],
            [gold_row(1, "SUPPORTS", ["P_sentence_0"])],
            "holds gold evidence objects",
        ),
    ],
)
def test_bad_input_is_a_located_error(tmp_path, capsys, gold, predictions, message):
    err = cli_error(
        capsys,
        "score",
        "feverous",
        "-g",
        lines(tmp_path / "g.jsonl", gold),
        "-p",
        lines(tmp_path / "p.jsonl", predictions or [{"id": 1, "predicted_label": "X"}]),
    )
    assert message in err


def test_invalid_json_line_through_the_cli(tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": 101, "predicted_label": "SUPPORTS"}\n{"id": 102,\n')
    result = run_cli("score", "feverous", "-g", GOLD, "-p", preds)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "p.jsonl:2: invalid JSON" in " ".join(result.stderr.split())


def test_shipped_sample_scores_every_example():
    from tests.parity.common import SAMPLES

    manifest = json.loads((SAMPLES / "feverous" / "manifest.json").read_text())
    assert (
        set(manifest) == {"benchmark", "gold", "predictions", "aliases", "note"}
        and manifest["aliases"] is None
    )
    report, _ = run(
        SAMPLES / "feverous" / manifest["gold"], SAMPLES / "feverous" / manifest["predictions"]
    )
    assert report.n_gold == 5 and not report.missing_ids and not report.extra_ids


def test_submission_is_joined_to_real_integer_ids_by_gold_order(tmp_path):
    """The case of the parity report: a header plus gold ids 1 and 2, and the two perfect lines
    prepare_submission.py writes for them (no ids) score 1.0, as the official pairing does."""
    gold = lines(tmp_path / "g.jsonl", [
        HEADER,
        gold_row(1, "SUPPORTS", ["P_cell_0_1_1", "P_sentence_0"]),
        gold_row(2, "REFUTES", ["Q_header_cell_0_0_1"]),
    ])
    preds = lines(tmp_path / "p.submission.jsonl", [
        {"predicted_label": "SUPPORTS",
         "predicted_evidence": [["P", "cell", "0_1_1"], ["P", "sentence", "0"]]},
        {"predicted_label": "REFUTES", "predicted_evidence": [["Q", "header_cell", "0_0_1"]]},
    ])
    report, rows = run(gold, preds)
    assert set(rows) == {"1", "2"}
    assert report.metrics["feverous_score"] == 1.0 and report.metrics["label_accuracy"] == 1.0
    assert report.missing_ids == [] and report.extra_ids == []


def test_submission_longer_than_the_gold_and_mixed_ids(tmp_path, capsys):
    gold = lines(tmp_path / "g.jsonl", [HEADER, gold_row(7, "SUPPORTS", ["P_sentence_0"])])
    line = {"predicted_label": "SUPPORTS", "predicted_evidence": [["P", "sentence", "0"]]}
    report, rows = run(gold, lines(tmp_path / "p.jsonl", [line, line]))
    assert rows["7"]["feverous_score"] == 1.0
    assert report.extra_ids == ["position 1"]
    assert any("by position" in w for w in report.warnings)
    mixed = lines(tmp_path / "m.jsonl", [line, {"id": 7, **line}])
    message = cli_error(capsys, "score", "feverous", "--gold", gold, "--predictions", mixed)
    assert "m.jsonl:1: field 'id': no id" in message and "m.jsonl:2" in message


def test_prepare_submission_output_scores_like_the_gold_file_through_the_cli(tmp_path):
    """hopscore score on the official gold and on its prepare_submission.py form agree."""
    rows = [json.loads(x) for x in GOLD.read_text().splitlines()]
    evaluate_input = [rows[0]] + [
        {**r, "predicted_label": r["label"],
         "predicted_evidence": r["evidence"][0]["content"] if r["evidence"] else []}
        for r in rows[1:]
    ]
    submission = [
        {"predicted_label": r["predicted_label"],
         "predicted_evidence": [list(parse_element(e)) for e in r["predicted_evidence"]]}
        for r in evaluate_input[1:]
    ]
    by_id = lines(tmp_path / "by_id.jsonl", evaluate_input)
    positional = lines(tmp_path / "input.submission.jsonl", submission)
    first = run_cli("score", "feverous", "--gold", GOLD, "--predictions", by_id, "-o",
                    tmp_path / "a", "--resamples", "0")
    second = run_cli("score", "feverous", "--gold", GOLD, "--predictions", positional, "-o",
                     tmp_path / "b", "--resamples", "0")
    assert first.returncode == second.returncode == 0, second.stderr
    metrics = [json.loads((tmp_path / d / "metrics.json").read_text())["metrics"] for d in "ab"]
    assert metrics[0] == metrics[1] and metrics[0]["label_accuracy"] == 1.0
