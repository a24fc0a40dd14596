"""``hopscore export``: one row per (run, example, metric), read back by pyarrow, pandas and csv."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.analysis.builders import (
    judge_rows,
    scored_dir,
    write_hotpot_gold,
    write_jsonl,
)
from tests.conftest import run_cli


def _runs(tmp_path: Path) -> tuple[Path, Path, list[dict[str, object]]]:
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 12)
    a = scored_dir(tmp_path, "a", gold, records, wrong={1, 5})
    b = scored_dir(tmp_path, "b", gold, records, wrong={2}, skip={7})
    return a, b, records


def _scores(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (path / "scores.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
def test_every_format_holds_every_value(tmp_path: Path, suffix: str) -> None:
    a, b, _ = _runs(tmp_path)
    out = tmp_path / f"table.{suffix}"
    result = run_cli("export", a, b, "-o", out)
    assert result.returncode == 0, result.stderr
    metrics = list(_scores(a)[0]["metrics"])  # type: ignore[arg-type]
    assert f"{2 * 12 * len(metrics)} rows" in result.stderr
    if suffix == "jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    elif suffix == "csv":
        with out.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            row["value"] = float(row["value"])  # type: ignore[arg-type]
            row["missing"] = row["missing"] == "true"  # type: ignore[assignment]
            row["gold"] = json.loads(row["gold"])  # type: ignore[arg-type]
    else:
        parquet = pytest.importorskip("pyarrow.parquet")
        rows = parquet.read_table(out).to_pylist()
        pandas = pytest.importorskip("pandas")
        frame = pandas.read_parquet(out)
        assert str(frame["value"].dtype) == "float64" and str(frame["missing"].dtype) == "bool"
        assert len(frame) == len(rows) and frame["value"].sum() == pytest.approx(
            sum(r["value"] for r in rows))
    assert len(rows) == 2 * 12 * len(metrics)
    assert list(rows[0]) == ["run", "source", "benchmark", "model", "id", "metric", "value",
                             "missing", "prediction", "gold", "cluster", "prompt_tokens",
                             "completion_tokens", "reasoning_tokens", "cached_tokens",
                             "requests", "group_type", "group_level"]
    by_key = {(r["run"], r["id"], r["metric"]): r for r in rows}
    for name, directory in (("a", a), ("b", b)):
        for score in _scores(directory):
            for metric, value in score["metrics"].items():  # type: ignore[attr-defined]
                row = by_key[(name, score["id"], metric)]
                assert row["value"] == pytest.approx(value, abs=1e-15)
                assert row["missing"] == score["missing"]
                assert row["group_type"] == score["groups"]["type"]  # type: ignore[index]
                assert row["group_level"] == score["groups"]["level"]  # type: ignore[index]
                assert row["benchmark"] == "hotpotqa"
                assert list(row["gold"]) == score["gold"]  # type: ignore[call-overload]
                assert (row["prediction"] or None) == score["prediction"]
    # joinable: the same (id, metric) in both runs
    assert by_key[("b", "q007", "em")]["missing"] and not by_key[("a", "q007", "em")]["missing"]
    assert by_key[("a", "q001", "em")]["value"] == 0.0 == 1 - by_key[("b", "q001", "em")]["value"]


def test_metric_filter_judge_files_and_errors(tmp_path: Path) -> None:
    a, _, _ = _runs(tmp_path)
    out = tmp_path / "em.jsonl"
    assert run_cli("export", a, "--metric", "em", "--metric", "f1", "-o", out).returncode == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["metric"] for r in rows} == {"em", "f1"} and len(rows) == 24
    judge = write_jsonl(tmp_path / "judge.jsonl", judge_rows(["t0", "t1", "t2"],
                                                             [True, False, None]))
    verdicts = tmp_path / "judge.csv"
    result = run_cli("export", judge, "-o", verdicts)
    assert result.returncode == 0, result.stderr
    with verdicts.open(newline="") as handle:
        table = list(csv.DictReader(handle))
    # (a row the judge did not decide is left out of a judge file's scores, as in compare)
    assert [(r["id"], r["metric"], r["value"]) for r in table] == [
        ("t0", "correct", "1.0"), ("t1", "correct", "0.0")]
    assert [r["group_hybrid_type"] for r in table] == ["s2s", "parallel"]
    unknown = run_cli("export", a, "--metric", "nope", "-o", tmp_path / "x.csv")
    assert unknown.returncode == 2 and "--metric nope: no input has it" in unknown.stderr
    assert not (tmp_path / "x.csv").exists()
    bad = run_cli("export", a, "-o", tmp_path / "x.xlsx")
    assert bad.returncode == 2 and "does not name a format" in bad.stderr
    into_input = run_cli("export", a, "-o", a / "scores.jsonl")
    assert into_input.returncode == 2, into_input.stderr


def test_duckdb_reads_the_parquet_when_installed(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    a, b, _ = _runs(tmp_path)
    out = tmp_path / "t.parquet"
    assert run_cli("export", a, b, "-o", out).returncode == 0
    query = (f"SELECT x.id, x.value - y.value AS d FROM '{out}' x JOIN '{out}' y "
             "ON x.id = y.id AND x.metric = y.metric WHERE x.run = 'b' AND y.run = 'a' "
             "AND x.metric = 'em' AND x.value != y.value ORDER BY x.id")
    assert duckdb.sql(query).fetchall() == [("q001", 1.0), ("q002", -1.0), ("q005", 1.0),
                                            ("q007", -1.0)]


def test_polars_reads_every_format_when_installed(tmp_path: Path) -> None:
    polars = pytest.importorskip("polars")
    a, b, _ = _runs(tmp_path)
    frames = []
    for suffix, read in (("parquet", polars.read_parquet), ("csv", polars.read_csv),
                         ("jsonl", polars.read_ndjson)):
        out = tmp_path / f"t.{suffix}"
        assert run_cli("export", a, b, "-o", out).returncode == 0
        frames.append(read(out))
    assert len({len(f) for f in frames}) == 1
    sums = [f.filter(polars.col("metric") == "f1")["value"].sum() for f in frames]
    assert sums[0] == pytest.approx(sums[1]) == pytest.approx(sums[2])


def test_csv_cells_never_start_a_formula(tmp_path: Path) -> None:
    """OWASP CSV injection: a text cell starting with = + - @ TAB or CR gets a single quote in
    front; plain numbers stay numbers; JSON Lines keeps the text exactly."""
    from hopscore import benchmarks
    from hopscore.scores.scoring import score_files
    from tests.analysis.builders import write_hotpot_predictions

    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 10)
    hostile = ["=cmd|' /C calc'!A0", "+1+2", "-1.5", "@SUM(A1:A2)", "\tx", "\r=1+1", "-x",
               "-2e-3", "+3", "a=b"]
    predictions = tmp_path / "pred.json"
    write_hotpot_predictions(predictions, records, wrong=set())
    data = json.loads(predictions.read_text())
    for record, text in zip(records, hostile, strict=True):
        data["answer"][record["_id"]] = text
    predictions.write_text(json.dumps(data))
    score_files(benchmarks.get("hotpotqa"), gold, predictions, tmp_path / "scored", resamples=0)
    out = tmp_path / "t.csv"
    assert run_cli("export", tmp_path / "scored", "-o", out, "--metric", "em").returncode == 0
    with out.open(newline="", encoding="utf-8") as handle:
        cells = [row["prediction"] for row in csv.DictReader(handle)]
    assert cells == ["'=cmd|' /C calc'!A0", "'+1+2", "-1.5", "'@SUM(A1:A2)", "'\tx",
                     "'\r=1+1", "'-x", "-2e-3", "+3", "a=b"]
    jsonl = tmp_path / "t.jsonl"
    assert run_cli("export", tmp_path / "scored", "-o", jsonl, "--metric", "em").returncode == 0
    exact = [json.loads(line)["prediction"] for line in jsonl.read_text().splitlines()]
    assert exact == hostile
