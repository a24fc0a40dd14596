"""``hopscore score`` through the real CLI: bad input is one readable line and exit 2, never a
traceback; ``--strict`` turns missing or extra ids into exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli

TW = FIXTURES / "2wikimultihopqa"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("bench_name", "gold", "pred_name", "pred_text", "expected"),
    [
        (
            "hotpotqa",
            FIXTURES / "hotpotqa/dev_small.json",
            "p.json",
            '{"answer": {"hp-01": "yes"}, "sp": {"hp-01": [["Mara Quill", "0"]]}}',
            "record 'hp-01': field 'sp': sent_id must be an integer, got string '0'",
        ),
        (
            "hotpotqa",
            FIXTURES / "hotpotqa/dev_small.json",
            "p.json",
            '{"answer": {"hp-01": "yes"',
            "p.json:1: invalid JSON",
        ),
        (
            "hybridqa",
            FIXTURES / "hybridqa/dev_reference_small.json",
            "p.json",
            '[{"question_id": "hy01", "pred": "x"}, {"question_id": "hy01", "pred": "y"}]',
            "duplicate question id 'hy01'",
        ),
        (
            "hybridqa",
            FIXTURES / "hybridqa/dev_reference_small.json",
            "p.json",
            '[{"question_id": "hy01", "pred": null}]',
            "field 'pred': expected a string, got null",
        ),
        (
            "bamboogle",
            FIXTURES / "bamboogle/gold_small.json",
            "p.jsonl",
            '{"id": "0", "answer": ["a"]}\n',
            "p.jsonl:1: field 'answer': expected a string, got list",
        ),
        (
            "bamboogle",
            FIXTURES / "bamboogle/gold_small.json",
            "p.jsonl",
            '{"id": "0", "answer": "a"}\n{"id": "0", "answer": "b"}\n',
            "p.jsonl:2: field 'id'",
        ),
        (
            "quartz",
            FIXTURES / "quartz/dev_small.jsonl",
            "p.jsonl",
            '{"id": "qz-01", "answer": "A"}\n{"id": "qz-02", \n',
            "p.jsonl:2: invalid JSON",
        ),
        (
            "2wikimultihopqa",
            TW / "dev_small.json",
            "p.json",
            '{"answer": {}, "sp": {}, "evidence": {"tw-01": [["a", "b", 3]]}}',
            "record 'tw-01': field 'evidence'",
        ),
    ],
)
def test_bad_predictions_exit_2_without_traceback(
    tmp_path: Path, bench_name: str, gold: Path, pred_name: str, pred_text: str, expected: str
) -> None:
    pred = _write(tmp_path / pred_name, pred_text)
    result = run_cli("score", bench_name, "--gold", gold, "--predictions", pred)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert result.stderr.startswith("error: ")
    assert expected in " ".join(result.stderr.split())


def test_missing_files_and_bad_gold_exit_2(tmp_path: Path) -> None:
    result = run_cli(
        "score",
        "hybridqa",
        "--gold",
        tmp_path / "nope.json",
        "--predictions",
        tmp_path / "nope2.json",
    )
    assert result.returncode == 2 and "nope.json: file not found" in result.stderr
    bad_alias = _write(tmp_path / "aliases.json", '{"Q_id": "Q1", "aliases": "x"}\n')
    pred = _write(tmp_path / "p.json", '{"answer": {}}')
    result = run_cli(
        "score",
        "2wikimultihopqa",
        "--gold",
        TW / "dev_small.json",
        "--aliases",
        bad_alias,
        "--predictions",
        pred,
    )
    assert result.returncode == 2 and "aliases.json:1: field 'aliases'" in result.stderr
    assert "Traceback" not in result.stderr


def test_strict_fails_on_missing_and_extra_ids(tmp_path: Path) -> None:
    gold = FIXTURES / "bamboogle" / "gold_small.json"
    answers = [r["answer"] for r in json.loads(gold.read_text(encoding="utf-8"))]
    complete = _write(tmp_path / "all.json", json.dumps({str(i): a for i, a in enumerate(answers)}))
    assert run_cli("score", "bamboogle", "-g", gold, "-p", complete, "--strict").returncode == 0
    partial = _write(tmp_path / "some.json", json.dumps({"0": answers[0]}))
    result = run_cli("score", "bamboogle", "-g", gold, "-p", partial, "--strict")
    assert result.returncode == 1
    assert "15 missing and 0 extra ids" in result.stderr
    # without --strict the same file scores, warns, and succeeds
    lenient = run_cli("score", "bamboogle", "-g", gold, "-p", partial)
    assert lenient.returncode == 0 and "15 of 16 gold examples have no prediction" in lenient.stderr
    extra = _write(
        tmp_path / "extra.json",
        json.dumps({**{str(i): a for i, a in enumerate(answers)}, "77": "x"}),
    )
    assert run_cli("score", "bamboogle", "-g", gold, "-p", extra, "--strict").returncode == 1


def test_twowiki_cli_writes_unrounded_recall_above_one(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_cli(
        "score",
        "2wikimultihopqa",
        "-g",
        TW / "dev_small.json",
        "--aliases",
        TW / "id_aliases_small.json",
        "-p",
        TW / "predictions_targeted.json",
        "-o",
        out,
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text("utf-8").splitlines()]
    assert max(r["metrics"]["evi_recall"] for r in rows) == 3.0
    metrics = json.loads((out / "metrics.json").read_text("utf-8"))
    assert metrics["extra_ids"] == ["extra-id"] and metrics["missing_ids"] == ["tw-04"]
    assert set(metrics["groups"]) == {
        "comparison",
        "compositional",
        "inference",
        "bridge_comparison",
    }
