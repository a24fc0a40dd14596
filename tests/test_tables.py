"""The main result tables read whole at 80 and 120 columns: no line wider than the terminal,
no cell cut with an ellipsis, and every metric and group name shown unbroken.

(The other CLI tests run at COLUMNS=200; ``tests/conftest.py``.)
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore.benchmarks import sample_files
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI
from tests.stub_models import docs_model

WIDTHS = (80, 120)
#: the benchmarks' packages: each built-in sample in <package>/samples/
PACKAGES = Path(__file__).resolve().parents[1] / "src" / "hopscore" / "benchmarks"
HOTPOT_SAMPLE = PACKAGES / "hotpotqa" / "samples"


def check(text: str, width: int, names: list[str] = (),  # type: ignore[assignment]
          free_text_from: str | None = None) -> None:
    """``free_text_from``: the title of the last table, whose free-text cells (model answers)
    are cut to the width on purpose; its caption must then say where the whole text is."""
    lines = text.splitlines()
    cut_from = len(lines) + 1
    if free_text_from is not None and free_text_from in text:
        cut_from = next(i for i, line in enumerate(lines, 1) if free_text_from in line)
        if "…" in "\n".join(lines[cut_from:]):
            assert "hopscore analyze" in text and "--id ID" in text, text
    for number, line in enumerate(lines, 1):
        assert len(line) <= width, f"line {number} is {len(line)} columns: {line!r}"
        assert number > cut_from or "…" not in line, f"line {number} is cut: {line!r}"
    shown = set(text.replace("│", " ").replace("┃", " ").split())
    for name in names:
        for word in name.split():
            assert word in shown, f"{name!r} is not shown whole"


def cli(*args: object, width: int, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit status and stdout, where the tables are (stderr holds messages, which keep long
    paths on one line so that they can be copied)."""
    result = run_cli(*args, cwd=cwd, env={"COLUMNS": str(width), **(env or {})})
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("sample", sample_files.samples(), ids=lambda s: s.benchmark)
def test_score_tables(sample: sample_files.BundledSample, width: int, tmp_path: Path) -> None:
    with sample.paths() as (gold, predictions, aliases):
        args: list[object] = ["score", sample.benchmark, "-g", gold, "-p", predictions,
                              "-o", tmp_path]
        if aliases:
            args += ["--aliases", aliases]
        status, text = cli(*args, width=width)
    assert status == 0, text
    metrics = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))
    check(text, width, [*metrics["metrics"], *metrics["groups"]])


@pytest.mark.parametrize("width", WIDTHS)
def test_demo_scores_table(width: int) -> None:
    status, text = cli("demo", "--scores-only", width=width)
    assert status == 0, text
    check(text, width, [s.benchmark for s in sample_files.samples()])
    assert "hopscore score BENCHMARK" in text


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three score directories of the HotpotQA sample: its predictions, the gold answers, and
    nothing (every example missing)."""
    root = tmp_path_factory.mktemp("runs")
    gold = HOTPOT_SAMPLE / "gold.json"
    records = json.loads(gold.read_text(encoding="utf-8"))
    perfect = root / "perfect.jsonl"
    perfect.write_text("".join(json.dumps({"id": r["_id"], "answer": r["answer"],
                                           "sp": r["supporting_facts"]}) + "\n"
                               for r in records), encoding="utf-8")
    for name, predictions in (("sample-predictions", HOTPOT_SAMPLE / "predictions.json"),
                              ("gold-answers", perfect)):
        status, text = cli("score", "hotpotqa", "-g", gold, "-p", predictions,
                           "-o", root / name, width=200)
        assert status == 0, text
    return root


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_tables(two_runs: Path, width: int) -> None:
    status, text = cli("compare", two_runs / "sample-predictions", two_runs / "gold-answers",
                       width=width)
    assert status == 0, text
    check(text, width, ["joint_recall", "comparison", "right→wrong", "wrong→right"],
          free_text_from="Flipped examples")
    assert "A = sample-predictions" in text


@pytest.mark.parametrize("width", WIDTHS)
def test_analyze_table(two_runs: Path, width: int) -> None:
    status, text = cli("analyze", two_runs / "sample-predictions", "--gold",
                       HOTPOT_SAMPLE / "gold.json", width=width)
    assert status == 0, text
    check(text, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_suite_table_explains_every_skipped_dataset(width: int, tmp_path: Path) -> None:
    (tmp_path / "data" / "quartz").mkdir(parents=True)
    status, text = cli("suite", "mcr", "--data-dir", tmp_path / "data", "--model",
                       "openai/none", "--base-url", "http://127.0.0.1:9/v1", "--no-progress",
                       "-o", tmp_path / "out", width=width)
    assert status == 2, text
    check(text, width, ["strategyqa", "2wikimultihopqa", "feverous"])
    assert text.count("missing: looked for") == 7


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with FakeOpenAI(body_responder=docs_model(PACKAGES)) as server:
        yield server.base_url


@pytest.mark.parametrize("width", WIDTHS)
def test_run_tables(model_url: str, width: int, tmp_path: Path) -> None:
    status, text = cli("run", "hotpotqa", "--gold", HOTPOT_SAMPLE / "gold.json",
                       "--model", "openai/gpt-4o-mini", "--base-url", model_url,
                       "--no-progress", "--no-cache", "-o", tmp_path / "run", width=width)
    assert status == 0, text
    check(text, width, ["samples this run / already done", "joint_recall", "comparison"])


@pytest.mark.parametrize("width", WIDTHS)
def test_judge_table(model_url: str, width: int, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"question": "q", "response": "Paris", "correct_answer": "Paris"})
                    + "\n", encoding="utf-8")
    status, text = cli("judge", "-i", rows, "-o", tmp_path / "out.jsonl", "--model", "judge",
                       "--base-url", model_url, "--no-progress", "--no-cache", width=width)
    assert status == 0, text
    check(text, width, ["accuracy (rows with a verdict)"])


@pytest.mark.parametrize("width", WIDTHS)
def test_sql_match_table(width: int, tmp_path: Path) -> None:
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as connection:
        connection.executescript("CREATE TABLE item(name TEXT, price REAL);"
                                 "INSERT INTO item VALUES ('pen', 1.5), ('ink', 3.0);")
    connection.close()
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in [
        {"instance_id": "a", "db_path": str(db), "gold_sql": "SELECT name FROM item",
         "response": "```sql\nSELECT name FROM item\n```"},
        {"instance_id": "b", "db_path": str(db), "gold_sql": "SELECT name FROM item",
         "response": "no sql here"},
    ]), encoding="utf-8")
    status, text = cli("sql-match", "-i", records, "-o", tmp_path / "v.jsonl", "--workers", "1",
                       width=width)
    assert status == 0, text
    check(text, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_table(width: int) -> None:
    status, text = cli("plan", "--baseline-acc", "0.62", "--n", "500", "--sd", "0.3",
                       width=width)
    assert status == 0, text
    check(text, width, ["unpaired, per system"])
