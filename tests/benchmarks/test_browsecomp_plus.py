"""BrowseComp-Plus: the run directory, the gold layouts, the measures and their errors."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.browsecomp_plus import JUDGE_TEMPLATE, BrowseCompPlus
from hopscore.benchmarks.browsecomp_plus.measures import (
    calibration,
    ndcg_at,
    recall_at,
    set_recall,
    trec_ranking,
)
from hopscore.benchmarks.browsecomp_plus.rundir import BrowseCompPlusPrediction, Verdict
from hopscore.benchmarks.browsecomp_plus.summary import summarize
from hopscore.benchmarks.error_categories import Sample
from hopscore.errors import InputError
from hopscore.judge.parse import parse_judge_output
from hopscore.judge.prompt import JudgePrompt
from tests.benchmarks._cli import cli_error
from tests.benchmarks.helpers import score, write_jsonl
from tests.conftest import run_cli, shared_file

BENCH = BrowseCompPlus()
SAMPLE = Path(__file__).resolve().parents[2] / "src/hopscore/benchmarks/browsecomp_plus/samples"


def run_file(folder: Path, name: str, **fields: Any) -> Path:
    record: dict[str, Any] = {"query_id": name, "status": "completed",
                              "tool_call_counts": {"search": 2},
                              "retrieved_docids": ["101"],
                              "result": [{"type": "output_text", "output": "Exact Answer: x"}]}
    record.update(fields)
    record = {k: v for k, v in record.items() if v is not ...}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


# --- the measures, by hand -------------------------------------------------------------------

def test_set_recall_and_trec_order() -> None:
    assert set_recall(["1", "2", "9"], ["1", "2", "3", "4"]) == 0.5
    assert set_recall([], ["1"]) == 0.0
    # trec_eval: score descending, ties by docid descending (as strings), rank column ignored
    assert trec_ranking([("a", 1.0), ("c", 2.0), ("b", 2.0), ("a", 9.0)]) == ("c", "b", "a")


def test_recall_and_ndcg_by_hand() -> None:
    qrels = {"1": 1, "2": 1, "3": 1}
    ranking = ["9", "1", "8", "2"]
    assert recall_at(ranking, qrels, 2) == pytest.approx(1 / 3)
    assert recall_at(ranking, qrels, 5) == pytest.approx(2 / 3)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(ranking, qrels, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at(["1", "2", "3"], qrels, 10) == pytest.approx(1.0)
    assert ndcg_at(ranking, {}, 10) == 0.0


def test_calibration_keeps_every_bin() -> None:
    # 350 verdicts: bins of 100, 100 and 150 (the remainder joins the last full bin)
    pairs = [(float(i % 100), i < 175) for i in range(350)]
    result = calibration(pairs)
    assert [b.n for b in result.bins] == [100, 100, 150]
    ordered = sorted(pairs, key=lambda p: p[0])  # stable: ties keep the order given
    parts = [ordered[:100], ordered[100:200], ordered[200:]]
    terms = [len(b) / 350 * (sum(c for c, _ in b) / len(b) / 100
                             - sum(ok for _, ok in b) / len(b)) ** 2 for b in parts]
    assert result.error == pytest.approx(100 * math.sqrt(sum(terms)))
    assert result.official == pytest.approx(100 * math.sqrt(sum(terms[:2])))
    assert result.error != pytest.approx(result.official)
    # below one full bin: one bin here; the official script reports 0.0
    few = calibration([(90.0, False)] * 10)
    assert few.error == pytest.approx(90.0) and few.official == 0.0
    assert calibration([]).error == 0.0
    # a confidence above 100 is capped, as the official parser caps it
    assert calibration([(250.0, True)]).error == 0.0


# --- the sample and the CLI ----------------------------------------------------------------

def without_query_5(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(SAMPLE / "run", run)
    (run / "5.json").unlink()
    return run


def test_sample_scores_over_every_gold_query(tmp_path: Path) -> None:
    report = score("browsecomp-plus", SAMPLE / "gold", SAMPLE / "run")
    assert report.n_gold == 5 and report.missing_ids == []
    m = report.metrics
    # queries 1 and 4 judged right; 3 did not complete (a verdict would not count)
    assert m["accuracy"] == pytest.approx(2 / 5)
    assert m["evidence_recall"] == pytest.approx((2 / 3 + 1 + 1 / 4 + 1 + 1 / 3) / 5)
    assert m["gold_recall"] == pytest.approx((1 + 1 + 0 + 1 + 0) / 5)
    assert m["search_calls"] == pytest.approx((6 + 3 + 12 + 2 + 4) / 5)
    assert m["completed"] == pytest.approx(4 / 5)
    # a query without a run file scores 0 and stays in the denominator
    gappy = score("browsecomp-plus", SAMPLE / "gold", without_query_5(tmp_path))
    assert gappy.missing_ids == ["5"] and gappy.n_gold == 5
    assert gappy.metrics["evidence_recall"] == pytest.approx((2 / 3 + 1 + 1 / 4 + 1) / 5)
    assert any("verdicts are for queries with no run file" in w for w in gappy.warnings)


def test_sample_summary_and_official_denominator(tmp_path: Path) -> None:
    gold = BENCH.load_gold(SAMPLE / "gold")
    run = BENCH.load_predictions(without_query_5(tmp_path))
    summary = summarize(gold, run.by_id)
    assert summary.n_queries == 5 and summary.n_run_files == 4
    assert summary.accuracy == pytest.approx(2 / 5)
    assert summary.official_accuracy == pytest.approx(2 / 4)
    assert summary.official_tool_calls == pytest.approx({"get_document": 0.25, "search": 5.75})
    assert summary.calibration.n == 3  # 1, 2, 4: judged, completed, with a confidence
    assert summary.calibration.official == 0.0
    assert summary.to_json()["missing_ids"] == ["5"]


def test_sample_trec_run() -> None:
    report = score("browsecomp-plus", SAMPLE / "gold", SAMPLE / "bm25.trec")
    assert set(report.metrics) == {f"{w}_{m}" for w in ("evidence", "gold")
                                   for m in ("ndcg@10", "recall@5", "recall@100",
                                             "recall@1000")}
    # query 1 ranks 150, 101, 170, 103 against evidence {101, 102, 103}
    assert report.metrics["evidence_recall@5"] == pytest.approx(
        (2 / 3 + 1 + 2 / 4 + 0 + 0) / 5)


def test_without_verdicts_there_is_no_accuracy(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(SAMPLE / "run", run)
    (run / "verdicts.jsonl").unlink()
    report = score("browsecomp-plus", SAMPLE / "gold", run)
    assert "accuracy" not in report.metrics and "evidence_recall" in report.metrics


# --- reading and writing the run directory ----------------------------------------------------

def test_write_then_read_round_trip(tmp_path: Path) -> None:
    predictions = [
        BrowseCompPlusPrediction(id="7", answer="Exact Answer: a", status="completed",
                                 retrieved=("1", "2"), tool_calls=(("search", 3),),
                                 verdict=Verdict(True, 80.0)),
        BrowseCompPlusPrediction(id="8", answer="", status="incomplete"),
    ]
    BENCH.write_predictions(predictions, tmp_path / "run")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["7.json", "8.json"]
    record = json.loads((tmp_path / "run" / "7.json").read_text(encoding="utf-8"))
    assert record["result"][-1] == {"type": "output_text", "output": "Exact Answer: a"}
    back = BENCH.load_predictions(tmp_path / "run").by_id
    assert back["7"] == predictions[0]
    assert back["8"].answer_text() is None and not back["8"].correct
    # a second write of other queries leaves no stale query behind, and keeps a verdict file
    (tmp_path / "run" / "verdicts.jsonl").write_text("", encoding="utf-8")
    BENCH.write_predictions([predictions[1], replace(predictions[1], id="a/b"),
                             replace(predictions[1], id="a_b")], tmp_path / "run")
    assert sorted(BENCH.load_predictions(tmp_path / "run").by_id) == ["8", "a/b", "a_b"]
    assert (tmp_path / "run" / "verdicts.jsonl").is_file()


def test_response_is_the_last_output_text(tmp_path: Path) -> None:
    run_file(tmp_path, "1", result=[{"type": "output_text", "output": "early"},
                                    {"type": "tool_call", "output": "[]"}])
    run_file(tmp_path, "2", result=[])
    by_id = BENCH.load_predictions(tmp_path).by_id
    assert by_id["1"].answer == "" and by_id["2"].answer == ""


def test_judge_object_and_judge_jsonl_rows(tmp_path: Path) -> None:
    run_file(tmp_path, "1", judge={"correct": True, "confidence": 60})
    run_file(tmp_path, "2")
    run_file(tmp_path, "3")
    # hopscore's own judge.jsonl rows: id, correct, confidence, parse_ok
    write_jsonl(tmp_path / "judge.jsonl", [
        {"id": "2", "correct": True, "confidence": 70, "parse_ok": True},
        {"id": "3", "correct": False, "confidence": None, "parse_ok": False},
        {"id": "9", "correct": True, "confidence": 1},
    ])
    loaded = BENCH.load_predictions(tmp_path)
    assert loaded.by_id["1"].verdict == Verdict(True, 60.0)
    assert loaded.by_id["2"].verdict == Verdict(True, 70.0)
    assert loaded.by_id["3"].verdict == Verdict(None, None)
    assert any("no run file" in w for w in loaded.warnings)


def test_jsonl_of_run_records(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "runs.jsonl", [
        {"query_id": 1, "status": "completed", "result": [
            {"type": "output_text", "output": "a"}], "retrieved_docids": [101, "102"]},
        {"id": "2", "answer": "b"},
    ])
    by_id = BENCH.load_predictions(path).by_id
    assert by_id["1"].retrieved == ("101", "102") and by_id["2"].answer_text() == "b"


@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"query_id": ...}, "query_id", "missing"),
    ({"status": ...}, "status", "missing"),
    ({"status": 1}, "status", "expected a string"),
    ({"result": ...}, "result", "missing"),
    ({"result": "text"}, "result", "expected a list"),
    ({"result": ["x"]}, "result", "expected an object"),
    ({"result": [{"type": "output_text", "output": 3}]}, "result", "'output' expected a string"),
    ({"tool_call_counts": {"search": "3"}}, "tool_call_counts", "expected a count"),
    ({"tool_call_counts": [1]}, "tool_call_counts", "expected an object"),
    ({"retrieved_docids": [None]}, "retrieved_docids", "expected a docid"),
    ({"judge": {"correct": "yes"}}, "judge.correct", "expected true, false or null"),
])
def test_bad_run_file_names_file_and_field(tmp_path: Path, fields: dict[str, Any], field: str,
                                           words: str) -> None:
    path = run_file(tmp_path, "5", **fields)
    with pytest.raises(InputError) as error:
        BENCH.load_predictions(tmp_path)
    assert error.value.field == field and words in error.value.message
    assert str(path) in str(error.value)


def test_repeated_query_and_empty_folder(tmp_path: Path) -> None:
    run_file(tmp_path / "a", "1")
    (tmp_path / "a" / "copy.json").write_text(
        (tmp_path / "a" / "1.json").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InputError, match=r"query '1' again \(first in 1.json\)"):
        BENCH.load_predictions(tmp_path / "a")
    (tmp_path / "b").mkdir()
    with pytest.raises(InputError, match=r"no \*\.json run files"):
        BENCH.load_predictions(tmp_path / "b")


def test_bad_trec_and_verdict_lines(tmp_path: Path) -> None:
    trec = tmp_path / "r.trec"
    trec.write_text("1 Q0 5 1 2.0 x\n1 Q0 6 2 high x\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r.trec:2: field 'score'"):
        BENCH.load_predictions(trec)
    trec.write_text("1 Q0 5 1 2.0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r.trec:1: expected a TREC run line"):
        BENCH.load_predictions(trec)
    run_file(tmp_path / "run", "1")
    (tmp_path / "run" / "verdicts.jsonl").write_text('{"query_id": "1", "confidence": "x"}\n',
                                                     encoding="utf-8")
    with pytest.raises(InputError) as error:
        BENCH.load_predictions(tmp_path / "run")
    assert error.value.field == "confidence" and "verdicts.jsonl:1" in str(error.value)


def test_repeated_trec_line_keeps_the_first(tmp_path: Path) -> None:
    trec = tmp_path / "r.trec"
    trec.write_text("1 Q0 5 1 1.0 x\n1 Q0 6 2 2.0 x\n1 Q0 5 3 9.0 x\n", encoding="utf-8")
    loaded = BENCH.load_predictions(trec)
    assert loaded.by_id["1"].ranking == ("6", "5") and "repeat" in loaded.warnings[0]


# --- the gold layouts ----------------------------------------------------------------------

def test_gold_layouts_agree(tmp_path: Path) -> None:
    folder = BENCH.load_gold(SAMPLE / "gold")
    data_file = BENCH.load_gold(SAMPLE / "gold" / "browsecomp_plus_decrypted.jsonl")
    qrels_only = BENCH.load_gold(SAMPLE / "gold" / "topics-qrels")
    qrel_file = BENCH.load_gold(SAMPLE / "gold" / "topics-qrels" / "qrel_evidence.txt")
    assert folder == data_file
    assert [(e.id, e.evidence, e.golds) for e in qrels_only] == \
        [(e.id, e.evidence, e.golds) for e in folder] == \
        [(e.id, e.evidence, e.golds) for e in qrel_file]
    assert qrels_only[0].question == "" and folder[0].answer == "1911"
    # the rows' own document lists, as the decrypted dataset holds them
    rows = [{"query_id": e.id, "query": e.question, "answer": e.answer,
             "evidence_docs": [{"docid": d, "text": "..."} for d, _ in e.evidence],
             "gold_docs": [d for d, _ in e.golds]} for e in folder]
    assert BENCH.load_gold(write_jsonl(tmp_path / "decrypted.jsonl", rows)) == folder


def test_parquet_gold(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = [{"query_id": "1", "query": "q", "answer": "a",
             "evidence_docs": [{"docid": "5", "text": "t"}], "gold_docs": [{"docid": "5",
                                                                            "text": "t"}]}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "test.parquet")
    (gold,) = BENCH.load_gold(tmp_path / "test.parquet")
    assert gold.evidence == (("5", 1),) and gold.answer == "a"


def test_parquet_gold_through_the_cli(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``score -g x.parquet`` reads the decrypted parquet with the benchmark's own loader (it
    has no Hub layout to convert), scoring as the sample's JSON Lines and qrels; a file that is
    not parquet exits 2 naming it."""
    datasets = pytest.importorskip("datasets")
    folder = BENCH.load_gold(SAMPLE / "gold")
    rows = [{"query_id": e.id, "query": e.question, "answer": e.answer,
             "evidence_docs": [{"docid": d, "text": "t", "url": "u"} for d, _ in e.evidence],
             "gold_docs": [{"docid": d, "text": "t", "url": "u"} for d, _ in e.golds]}
            for e in folder]
    datasets.disable_progress_bars()
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "test-00000-of-00001.parquet"))
    want = run_cli("score", "browsecomp-plus", "-g", SAMPLE / "gold", "-p", SAMPLE / "run",
                   "--json", "--resamples", "0")
    got = run_cli("score", "browsecomp-plus", "-g", tmp_path / "test-00000-of-00001.parquet",
                  "-p", SAMPLE / "run", "--json", "--resamples", "0")
    assert want.returncode == got.returncode == 0, got.stderr
    metrics = [json.loads(r.stdout)["metrics"] for r in (want, got)]
    assert metrics[0] == metrics[1] and metrics[0]["accuracy"] == 0.4
    (tmp_path / "bad.parquet").write_bytes(b"not parquet")
    err = cli_error(capsys, "score", "browsecomp-plus", "-g", tmp_path / "bad.parquet",
                    "-p", SAMPLE / "run")
    assert "bad.parquet: not a readable parquet file" in err


@pytest.mark.parametrize(("text", "words"), [
    ("1 Q0 5\n", "expected 4 fields"),
    ("1 Q0 5 high\n", "relevance 'high' is not an integer"),
])
def test_bad_qrels(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "qrel_evidence.txt").write_text(text, encoding="utf-8")
    (tmp_path / "qrel_golds.txt").write_text("1 Q0 5 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=words) as error:
        BENCH.load_gold(tmp_path)
    assert "qrel_evidence.txt:1" in str(error.value)


def test_gold_errors(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "g.jsonl", [{"query_id": "1", "query": "q", "answer": "a"}])
    with pytest.raises(InputError, match="query '1' has no evidence documents"):
        BENCH.load_gold(path)
    path = write_jsonl(tmp_path / "g.jsonl", [{"query": "q", "evidence_docs": ["1"]}])
    with pytest.raises(InputError) as error:
        BENCH.load_gold(path)
    assert error.value.field == "query_id" and "g.jsonl:1" in str(error.value)
    path = write_jsonl(tmp_path / "g.jsonl", [{"query_id": "1", "evidence_docs": [None],
                                               "gold_docs": ["1"]}])
    with pytest.raises(InputError) as error:
        BENCH.load_gold(path)
    assert error.value.field == "evidence_docs"
    path = write_jsonl(tmp_path / "g.jsonl", [{"query_id": "1", "query": "aGVsbG8gd29ybGQhIQ==",
                                               "answer": "x", "evidence_docs": ["1"],
                                               "gold_docs": ["1"]}])
    with pytest.raises(InputError, match="looks encrypted"):
        BENCH.load_gold(path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no decrypted queries"):
        BENCH.load_gold(tmp_path / "empty")


def test_real_qrels_load() -> None:
    folder = shared_file("browsecomp-plus/topics-qrels")
    gold = BENCH.load_gold(folder)
    assert len(gold) == 830
    assert sum(len(e.evidence) for e in gold) == 5064
    assert sum(len(e.golds) for e in gold) == 2407


# --- registry, judge preset, categories ------------------------------------------------------

def test_registered_with_its_sample() -> None:
    from hopscore.benchmarks.sample_files import require

    assert isinstance(benchmarks.get("browsecomp-plus"), BrowseCompPlus)
    sample = require("browsecomp-plus")
    with sample.paths() as (gold, predictions, _):
        assert (gold.parent / "topics-qrels" / "qrel_golds.txt").is_file()
        report = score("browsecomp-plus", gold, predictions)
    # run.jsonl is the run directory's records with their verdicts: the same scores
    assert report.metrics == score("browsecomp-plus", SAMPLE / "gold", SAMPLE / "run").metrics


def test_judge_preset_reads_with_the_shared_parser() -> None:
    prompt = JudgePrompt.from_text(JUDGE_TEMPLATE, "browsecomp-plus preset")
    assert len(prompt.sha256) == 64
    for field in ("extracted_final_answer:", "reasoning:", "correct:", "confidence:"):
        assert field in JUDGE_TEMPLATE
    verdict = parse_judge_output("extracted_final_answer: 1911\nreasoning: same year\n"
                                 "correct: yes\nconfidence: 90")
    assert verdict.correct and verdict.confidence == 90.0


def test_error_categories() -> None:
    from hopscore.benchmarks.browsecomp_plus.categories import dimensions
    from hopscore.benchmarks.error_categories import Inputs

    def sample(metrics: dict[str, float], missing: bool = False) -> Sample:
        return Sample(id="1", groups={}, metrics=metrics, missing=missing, prediction="x",
                      gold=("a",))

    outcome, evidence = dimensions(Inputs.__new__(Inputs))
    base = {"completed": 1.0, "accuracy": 0.0}
    assert outcome.categorize(sample({**base, "evidence_recall": 1.0})) == \
        "wrong, all evidence retrieved"
    assert outcome.categorize(sample({**base, "evidence_recall": 0.5})) == \
        "wrong, some evidence missed"
    assert outcome.categorize(sample({**base, "completed": 0.0})) == "run not completed"
    assert outcome.categorize(sample({"evidence_recall": 0.5})) is None
    assert evidence.categorize(sample({"evidence_recall": 0.0})) == "no evidence"
    assert outcome.categorize(sample({}, missing=True)) == "no prediction"
