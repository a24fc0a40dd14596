"""Edges of gold read from Hub exports: a converted file changed in the cache, StrategyQA
answers written as strings in a JSON list, a one-row JSON Lines export. Every export is written
by the real ``datasets`` library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.hub import official_gold
from hopscore.scores.scoring import score_files
from tests.conftest import FIXTURES, run_cli, shared_file

exports = pytest.importorskip("tests.hub.exports")


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "hopscore-cache"))


def _em(tmp_path: Path, gold: Path, predictions: Path, out: str) -> tuple[float, str]:
    result = run_cli("score", "hotpotqa", "--gold", gold, "-p", predictions, "--resamples", "0",
                     "-o", tmp_path / out,
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "hopscore-cache")})
    assert result.returncode == 0, result.stderr
    metrics = json.loads((tmp_path / out / "metrics.json").read_text())
    return metrics["metrics"]["em"], result.stderr


def test_a_converted_gold_changed_in_the_cache_is_written_again(tmp_path: Path) -> None:
    """The cached conversion was reused without a check: after it was edited the same parquet
    scored em 0.4 instead of 0.6, silently."""
    gold = exports.official_json(FIXTURES / "hotpotqa" / "dev_small.json")
    sources = exports.write_all(exports.hotpotqa(gold), tmp_path / "hub", "distractor",
                                "validation")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": r["_id"], "answer": r["answer"]}) + "\n"
                                   for r in gold))
    first, _ = _em(tmp_path, Path(sources["parquet"]), predictions, "first")
    assert first == 1.0
    cached = official_gold("hotpotqa", sources["parquet"]).path
    records = json.loads(cached.read_text())
    records[0]["answer"] = "something else entirely"
    cached.write_text(json.dumps(records))
    again, stderr = _em(tmp_path, Path(sources["parquet"]), predictions, "again")
    assert again == first
    assert "had been changed since it was written" in " ".join(stderr.split())
    assert json.loads(cached.read_text())[0]["answer"] == gold[0]["answer"]
    # an untouched cached file is reused without a word
    _, stderr = _em(tmp_path, Path(sources["parquet"]), predictions, "third")
    assert "changed since" not in stderr


def _strategyqa_gold() -> list[dict[str, Any]]:
    return json.loads(shared_file("strategyqa/eladsegal/dev.json").read_text())[:40]


def test_strategyqa_answers_as_strings_in_a_json_list(tmp_path: Path) -> None:
    """A JSON list whose answers are "True"/"False" (datasets writes a string column so) was
    refused, while the same rows as JSON Lines were read."""
    gold = _strategyqa_gold()
    dataset = exports.strategyqa(gold)
    dataset = dataset.cast_column("answer", exports.Value("string"))
    dataset = dataset.map(lambda row: {"answer": row["answer"].capitalize()})
    assert set(dataset["answer"]) == {"True", "False"}
    as_list = tmp_path / "train.json"
    dataset.to_json(str(as_list), lines=False)
    as_lines = tmp_path / "train.jsonl"
    dataset.to_json(str(as_lines))
    assert json.loads(as_list.read_text())[0]["answer"] in ("True", "False")
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(
        json.dumps({"id": r["qid"], "answer": r["answer"] if i % 3 else not r["answer"]}) + "\n"
        for i, r in enumerate(gold)))
    bench = benchmarks.get("strategyqa")
    official = tmp_path / "official.json"
    official.write_text(json.dumps(gold))
    want = score_files(bench, official, predictions, tmp_path / "o", resamples=0).to_json()
    for source in (as_list, as_lines):
        path = official_gold("strategyqa", source).path
        got = score_files(bench, path, predictions, tmp_path / source.suffix, resamples=0)
        assert got.to_json()["metrics"] == want["metrics"], source
    # and through the command
    result = run_cli("score", "strategyqa", "--gold", as_list, "-p", predictions,
                     "--resamples", "0", env={"HOPSCORE_CACHE_DIR": str(tmp_path / "c")})
    assert result.returncode == 0, result.stderr


def test_strategyqa_gold_that_is_no_boolean_is_a_clear_error(tmp_path: Path) -> None:
    gold = _strategyqa_gold()[:3]
    gold[1]["answer"] = "maybe"
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(gold))
    result = run_cli("score", "strategyqa", "--gold", path, "-p", path,
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "c")})
    assert result.returncode == 2
    assert "dev.json" in result.stderr and "'answer'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_one_row_json_lines_export_is_one_row(tmp_path: Path) -> None:
    """datasets writes a one-row split as one line, which was read as a JSON document (one
    object, not a list of rows)."""
    gold = exports.official_json(FIXTURES / "hotpotqa" / "dev_small.json")[:1]
    export = tmp_path / "validation.jsonl"
    exports.hotpotqa(gold).to_json(str(export))
    assert len(export.read_text().splitlines()) == 1
    converted = official_gold("hotpotqa", export)
    assert converted.converted and json.loads(converted.path.read_text()) == gold
    rows = exports.quartz(exports.official_jsonl(
        Path(benchmarks.__file__).parent / "quartz" / "samples" / "dev.jsonl")[:1])
    quartz = tmp_path / "quartz.jsonl"
    rows.to_json(str(quartz))
    examples = benchmarks.get("quartz").load_gold(official_gold("quartz", quartz).path)
    assert len(examples) == 1 and examples[0].choices
