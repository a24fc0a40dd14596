"""Error-analysis categories per benchmark, and the generic ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.analysis.categories import (
    Inputs,
    Sample,
    analyze,
    dimensions_for,
    samples_of,
)
from hopscore.analysis.categories import extraction as extraction_module
from hopscore.analysis.categories.judge import agreement
from hopscore.analysis.categories.sql import failure_reason
from hopscore.analysis.samples import read_records
from hopscore.analysis.scored import load_scored
from hopscore.benchmarks.fermi.categories import band
from hopscore.benchmarks.twowiki.categories import parts, type_and_outcome
from tests.analysis.builders import (
    add_run_files,
    judge_rows,
    scored_dir,
    sql_row,
    write_hotpot_gold,
    write_jsonl,
)
from tests.conftest import run_cli


def sample(metrics: dict[str, float], *, prediction: str | None = "x", missing: bool = False,
           groups: dict[str, str] | None = None, record: dict[str, Any] | None = None,
           judge: dict[str, Any] | None = None, id: str = "s1") -> Sample:
    return Sample(id=id, groups=groups or {}, metrics=metrics, missing=missing,
                  prediction=prediction, gold=("g",), record=record or {}, judge=judge)


def by_name(results):
    return {r.name: {c.name: c.count for c in r.categories} for r in results}


def test_hotpotqa_two_by_two_and_answer_location(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 12)
    # q001 gold "Chief of Protocol": answered "Poughkeepsie" (in the context, other paragraph)
    # q004: "Los Angeles" for gold "yes"... wrong answers chosen per example below
    directory = scored_dir(tmp_path, "run", gold, records, wrong={1, 2, 5}, wrong_sp={0, 1},
                           skip={11}, wrong_answer="Louvre")
    scored = load_scored(directory)
    results = analyze(samples_of(scored), dimensions_for(Inputs("hotpotqa", gold=gold)))
    counts = by_name(results)
    assert counts["answer x supporting facts"] == {
        "right answer, right facts": 7, "right answer, wrong facts": 1,
        "wrong answer, right facts": 2, "wrong answer, wrong facts": 1, "no prediction": 1,
    }
    where = counts["where the predicted answer occurs"]
    assert where["correct"] == 8 and where["no prediction"] == 1
    # "Louvre" occurs only in the Paris paragraph: a distractor for q001/q002, gold for q005
    record_titles = {i: [c[0] for c in records[i]["context"]] for i in (1, 2, 5)}
    assert sum(where.values()) == 12
    expected: dict[str, int] = {}
    for i in (1, 2, 5):
        gold_titles = {t for t, _ in records[i]["supporting_facts"]}
        if "Paris" not in record_titles[i]:
            key = "not in the context"
        elif "Paris" in gold_titles:
            key = ("in a supporting sentence" if ["Paris", 1] in records[i]["supporting_facts"]
                   else "elsewhere in a gold paragraph")
        else:
            key = "only in a distractor paragraph"
        expected[key] = expected.get(key, 0) + 1
    for key, count in expected.items():
        assert where[key] == count


def test_hotpotqa_location_categories_directly(tmp_path):
    from hopscore.benchmarks.hotpotqa.categories import answer_location
    from hopscore.benchmarks.hotpotqa.example import HotpotExample

    example = HotpotExample(
        id="e", answer="Chief of Protocol", supporting_facts=(("A", 1),),
        context=(("A", ("Alpha sentence.", "She was Chief of Protocol.")),
                 ("B", ("Beta is in Paris.",)), ("C", ("Gamma lives in Rome.",))),
    )
    examples = {"e": example}
    # B is not a supporting title here, so it is a distractor
    cases = {
        "Chief of Protocol": "correct", "Alpha": "elsewhere in a gold paragraph",
        "protocol": "in a supporting sentence", "Paris": "only in a distractor paragraph",
        "London": "not in the context", "yes": "wrong yes/no", "The": "empty after normalization",
    }
    for prediction, expected in cases.items():
        em = 1.0 if prediction == "Chief of Protocol" else 0.0
        got = answer_location(examples, sample({"em": em}, prediction=prediction, id="e"))
        assert got == expected, prediction
    assert answer_location(examples, sample({"em": 0.0}, prediction="x", id="other")) is None


def write_table(folder: Path) -> None:
    (folder / "tables_tok").mkdir(parents=True)
    (folder / "request_tok").mkdir()
    table = {"uid": "T1", "title": "Winners", "header": [["Year", []], ["Winner", []]],
             "data": [[["1990", []], ["Abel Kiviat ( USA )", ["/wiki/Abel_Kiviat"]]],
                      [["1991", []], ["Bob Ray", ["/wiki/Bob_Ray"]]]]}
    (folder / "tables_tok" / "T1.json").write_text(json.dumps(table))
    (folder / "request_tok" / "T1.json").write_text(json.dumps({
        "/wiki/Abel_Kiviat": "Abel Kiviat was born in New York City in 1892 .",
        "/wiki/Bob_Ray": "Bob Ray was a runner from Ohio ."}))


def hybrid_run(tmp_path: Path) -> Path:
    rows = [  # id, location group, prediction, em, f1
        ("h1", "table", "Bob Ray", 1.0, 1.0),
        ("h2", "table", "1990", 0.0, 0.0),        # a wrong cell of the right table
        ("h3", "passage", "Ohio", 0.0, 0.0),      # a wrong passage
        ("h4", "passage", "Mars", 0.0, 0.0),      # nowhere
        ("h5", None, "12", 0.0, 0.0),             # computed answer
        ("h6", "table", None, 0.0, 0.0),          # no prediction
    ]
    directory = tmp_path / "hyb"
    directory.mkdir()
    with (directory / "scores.jsonl").open("w") as handle:
        for qid, location, prediction, em, f1 in rows:
            handle.write(json.dumps({
                "id": qid, "groups": {"location": location} if location else {},
                "metrics": {"em": em, "f1": f1}, "missing": prediction is None,
                "prediction": prediction, "gold": ["x"]}) + "\n")
    (directory / "metrics.json").write_text(json.dumps({"benchmark": "hybridqa", "metrics": {
        "em": 1 / 6, "f1": 1 / 6}, "groups": {}}))
    traced = [
        {"question_id": qid, "question": "?", "table_id": "T1", "answer-text": "x",
         "answer-node": nodes}
        for qid, nodes in [("h1", [["Bob Ray", [1, 1], "/wiki/Bob_Ray", "table"]]),
                           ("h2", [["Bob Ray", [1, 1], None, "table"]]),
                           ("h3", [["x", [0, 1], "/wiki/Abel_Kiviat", "passage"]]),
                           ("h4", [["x", [0, 1], "/wiki/Abel_Kiviat", "passage"]]),
                           ("h5", []), ("h6", [["1991", [1, 0], None, "table"]])]
    ]
    (tmp_path / "dev.traced.json").write_text(json.dumps(traced))
    write_table(tmp_path / "WikiTables")
    return directory


def test_hybridqa_answer_location_against_prediction_location(tmp_path):
    scored = load_scored(hybrid_run(tmp_path))
    inputs = Inputs("hybridqa", gold=tmp_path / "dev.traced.json", tables=tmp_path / "WikiTables")
    counts = by_name(analyze(samples_of(scored), dimensions_for(inputs)))
    assert counts["answer location x outcome"] == {
        "table answer: right": 1, "table answer: wrong": 1, "passage answer: wrong": 2,
        "computed answer: wrong": 1, "table answer: no prediction": 1}
    assert counts["where the wrong prediction occurs"] == {
        "correct": 1, "table answer, wrong prediction in a table cell": 1,
        "passage answer, wrong prediction in a linked passage": 1,
        "passage answer, wrong prediction nowhere in table or passages": 1,
        "computed answer, wrong prediction nowhere in table or passages": 1,
        "no prediction": 1}


def test_hybridqa_without_gold_uses_location_groups_and_reference_file(tmp_path):
    scored = load_scored(hybrid_run(tmp_path))
    counts = by_name(analyze(samples_of(scored), dimensions_for(Inputs("hybridqa"))))
    assert counts["answer location x outcome"]["unlocated answer: wrong"] == 1
    reference = tmp_path / "ref.json"
    reference.write_text(json.dumps({"reference": {q: "x" for q in ["h1", "h2", "h5"]},
                                     "table": ["h1", "h2"], "passage": []}))
    dimensions = dimensions_for(Inputs("hybridqa", gold=reference))
    counts = by_name(analyze(samples_of(scored), dimensions))
    assert counts["answer location x outcome"] == {
        "table answer: right": 1, "table answer: wrong": 1, "computed answer: wrong": 1}
    assert "where the wrong prediction occurs" not in counts  # no table ids in the reference


def test_two_wiki_type_and_parts():
    s = sample({"em": 0.0, "f1": 0.5, "sp_em": 1.0, "evi_em": 0.0},
               groups={"type": "compositional"})
    assert type_and_outcome(s) == "compositional: partial"
    assert parts(s) == "wrong answer, right facts, wrong evidence"
    assert type_and_outcome(sample({"em": 1.0}, missing=True, groups={"type": "inference"})) == (
        "inference: no prediction")
    assert benchmarks.get("2wikimultihopqa").error_categories


@pytest.mark.parametrize("score,expected", [
    (1.0, "exact (same value)"), (0.9, "within half an order (< 10^0.5 = 3.2x)"),
    (0.8, "0.5-1 order off (3.2x-10x)"), (2 / 3, "1-2 orders off (10x-100x)"),
    (0.5, "1-2 orders off (10x-100x)"), (1 / 3, "2-3 orders off (100x-1000x)"),
    (0.0, "scored 0 (3+ orders off, negative or no number)"),
])
def test_fermi_bands_from_the_score_alone(score, expected):
    # without gold text, the band is read back from fp_score = 1 - |log10 ratio| / 3
    s = Sample(id="f", groups={}, metrics={"fp_score": score}, missing=False, prediction=None,
               gold=())
    assert band(s) == expected


@pytest.mark.parametrize("prediction,gold,expected", [
    ("22.3 km", "22300 m", "exact (same value)"),
    ("50 km", "22.3 km", "within half an order (< 10^0.5 = 3.2x)"),
    ("2 km", "10 km", "0.5-1 order off (3.2x-10x)"),
    ("1 km", "10 km", "1-2 orders off (10x-100x)"),
    ("100", "1", "2-3 orders off (100x-1000x)"),
    ("1e9", "1", "3+ orders off"),
    ("-5", "3", "negative value"),
    ("0", "3", "zero estimate or zero gold"),
    ("many many", "3", "answer did not evaluate to a number"),
])
def test_fermi_bands_from_the_answers(prediction, gold, expected):
    s = Sample(id="f", groups={}, metrics={"fp_score": 0.5}, missing=False,
               prediction=prediction, gold=(gold,))
    assert band(s) == expected


def test_fermi_band_boundaries_follow_the_official_formula():
    from hopscore.benchmarks.fermi.quantities import fp_score

    for ratio, expected in [(2.0, "within"), (5.0, "0.5-1"), (10.0, "1-2"), (50.0, "1-2"),
                            (100.0, "2-3"), (500.0, "2-3")]:
        s = Sample(id="f", groups={}, metrics={"fp_score": fp_score(1.0, ratio)}, missing=False,
                   prediction=None, gold=())
        assert band(s).startswith(expected)
        with_text = Sample(id="f", groups={}, metrics={"fp_score": 0.0}, missing=False,
                           prediction=str(ratio), gold=("1",))
        assert band(with_text).startswith(expected)


def test_fermi_through_the_real_scorer(tmp_path):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([
        {"question": "How far?", "program": "", "answer": "22.3 km", "context": ""},
        {"question": "How many?", "program": "", "answer": "3.20E+13", "context": ""},
        {"question": "How much?", "program": "", "answer": "$7224", "context": ""},
    ]))
    predictions = tmp_path / "pred.jsonl"
    write_jsonl(predictions, [{"id": "0", "answer": "22 km"}, {"id": "1", "answer": "3e10"},
                              {"id": "2", "answer": "lots"}])
    result = run_cli("score", "fermi", "-g", gold, "-p", predictions, "-o", tmp_path / "out",
                     "--resamples", "100")
    assert result.returncode == 0, result.stderr
    scored = load_scored(tmp_path / "out")
    counts = by_name(analyze(samples_of(scored), dimensions_for(Inputs("fermi"))))
    assert counts["order-of-magnitude error"] == {
        "within half an order (< 10^0.5 = 3.2x)": 1, "3+ orders off": 1,
        "answer did not evaluate to a number": 1}


def test_sql_failure_reasons():
    table = {"columns": ["a"], "rows": [[1], [2]]}
    cases = [
        (sql_row("a", True, "exec_match"), "match"),
        (sql_row("b", False, "agent_sql_extraction_failed", agent_sql_source="none"),
         "SQL extraction failed"),
        (sql_row("c", False, "agent_sql_exec_error: Query timed out after 5.0s",
                 agent_exec_error="Query timed out after 5.0s"), "execution error: timeout"),
        (sql_row("d", False, "agent_sql_exec_error: Rejected: not a read-only query",
                 agent_exec_error="Rejected: not a read-only query"),
         "execution error: rejected (not a read-only query)"),
        (sql_row("e", False, "agent_sql_exec_error: no such column: x",
                 agent_exec_error="no such column: x"), "execution error: other"),
        (sql_row("f", False, "exec_mismatch: raw_score=0.000 col_precision=0.500 col_recall=1.000",
                 column_precision=0.5), "column mismatch"),
        (sql_row("g", False, "exec_mismatch", order_sensitive=True, gold_table=table,
                 agent_table={"columns": ["a"], "rows": [[2], [1]]}), "order mismatch"),
        (sql_row("h", False, "exec_mismatch", gold_table=table,
                 agent_table={"columns": ["a"], "rows": [[3]]}), "row mismatch"),
        (sql_row("i", False, "gold_sql_exec_error: boom", gold_exec_error="boom"),
         "gold SQL failed"),
        (sql_row("j", False, "missing_gold_sql"), "missing gold SQL"),
        (sql_row("k", False, "sqlite_db_not_found: /x.sqlite"), "database not found"),
        (sql_row("l", False, "compare_timeout: executing and comparing took longer than "
                 "--timeout 5s"), "grading limit (time or memory)"),
        (sql_row("m", False, "result_too_large: the gold result does not fit",
                 gold_exec_error="Query ran out of memory"), "grading limit (time or memory)"),
    ]
    for row, expected in cases:
        assert failure_reason(sample({"match": 0.0}, record=row)) == expected, row["instance_id"]
    assert failure_reason(sample({"em": 1.0}, record={"id": "x"})) is None


def test_sql_categories_through_the_loader(tmp_path):
    path = write_jsonl(tmp_path / "sql.jsonl", [
        sql_row("a", True, "exec_match"), sql_row("b", False, "agent_sql_extraction_failed",
                                                  agent_sql_source="none")])
    scored = load_scored(path)
    counts = by_name(analyze(samples_of(scored), dimensions_for(Inputs())))
    assert counts["S2SQL failure reason"] == {"match": 1, "SQL extraction failed": 1}


def test_judge_against_exact_match():
    em_wrong = {"em": 0.0, "f1": 0.4}
    assert agreement(sample(em_wrong, judge={"correct": True, "parse_ok": True})) == (
        "judge right, EM wrong (F1 > 0)")
    assert agreement(sample({"em": 0.0, "f1": 0.0}, judge={"correct": True})) == (
        "judge right, EM wrong (F1 = 0)")
    assert agreement(sample({"em": 1.0}, judge={"correct": False, "parse_ok": True})) == (
        "judge wrong, EM right")
    assert agreement(sample({"em": 1.0}, judge={"correct": False, "parse_ok": False})) == (
        "judge reply not parsed")
    assert agreement(sample({"em": 1.0}, judge={"correct": None, "error": "HTTP 500"})) == (
        "judge error")
    assert agreement(sample({"em": 1.0, "judge_accuracy": 1.0})) == "both right"
    assert agreement(sample({"em": 1.0})) is None


def test_extraction_outcomes_from_run_samples(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 8)
    directory = scored_dir(tmp_path, "run", gold, records, wrong={1})
    add_run_files(directory, records, **{
        "q001": {"extracted": {"strict": None, "flexible": "Paris"}},
        "q002": {"extracted": {"strict": None, "flexible": None}},
        "q003": {"extracted": {"strict": "Unknown", "flexible": "Unknown"}},
        "q004": {"raw_output": None, "error": "HTTP 503 after 6 attempts",
                 "extracted": {"strict": None, "flexible": None}},
    })
    scored = load_scored(directory)
    assert scored.samples_path is not None and scored.config == {"model": "test/model"}
    records_by_id = read_records(scored.samples_path)
    counts = by_name(analyze(samples_of(scored, records_by_id), dimensions_for(Inputs())))
    assert counts["answer extraction"] == {
        "strict extraction ok": 4, "strict failed, flexible recovered": 1,
        "no answer extracted": 1, "abstained (unknown)": 1, "request failed": 1}
    assert extraction_module.extraction_outcome(sample({}, record={})) is None


def test_analyze_cli_with_judge_rows_and_json_output(tmp_path):
    gold = tmp_path / "gold.json"
    records = write_hotpot_gold(gold, 10)
    directory = scored_dir(tmp_path, "run", gold, records, wrong={0, 1})
    verdicts = [True, False] + [True] * 7 + [None]
    rows = judge_rows([f"q{i:03d}" for i in range(10)], verdicts)
    predictions = {r["id"]: r["prediction"] for r in map(
        json.loads, (directory / "scores.jsonl").read_text().splitlines())}
    for row in rows:  # the judge judged this run's answers
        row["response"] = predictions[row["instance_id"]]
    judge = write_jsonl(tmp_path / "judge.jsonl", rows)
    out = tmp_path / "errors.json"
    result = run_cli("analyze", directory, "--gold", gold, "--judge", judge, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "answer x supporting facts" in result.stdout and "judge vs exact match" in result.stdout
    data = json.loads(out.read_text())
    judge_dim = next(d for d in data["dimensions"] if d["name"] == "judge vs exact match")
    counts = {c["name"]: c["count"] for c in judge_dim["categories"]}
    assert counts == {"both right": 7, "judge right, EM wrong (F1 = 0)": 1, "both wrong": 1,
                      "judge error": 1}
    agreement = data["judge_agreement"]
    assert agreement["compared_with"] == "em" and agreement["undecided"] == 1
    assert agreement["overall"]["n"] == 9 and agreement["overall"]["agreement"] == 8 / 9


def test_every_declared_module_loads():
    for name in benchmarks.names():
        if benchmarks.get(name).error_categories:
            assert dimensions_for(Inputs(name))


def test_names_a_benchmark_declares_it_is_recorded_as():
    for recorded, name in (("2wiki", "2wikimultihopqa"), ("TwoWiki", "2wikimultihopqa"),
                           ("realfp", "fermi")):
        own = [d.name for d in dimensions_for(Inputs(name))]
        assert [d.name for d in dimensions_for(Inputs(recorded))] == own
    generic = [d.name for d in dimensions_for(Inputs())]
    assert [d.name for d in dimensions_for(Inputs("no-such-benchmark"))] == generic


def test_hybridqa_real_sample_with_real_tables(tmp_path):
    from tests.conftest import shared_file

    traced = shared_file("hybridqa/dev.traced.json")
    sample_questions = json.loads(shared_file("hybridqa/dev.sample.json").read_text())
    tables = shared_file("hybridqa/WikiTables-WithLinks")
    wanted = {q["question_id"] for q in sample_questions}
    gold = [r for r in json.loads(traced.read_text()) if r["question_id"] in wanted]
    gold_path = tmp_path / "traced.json"
    gold_path.write_text(json.dumps(gold))
    predictions = []
    for record in gold:  # the last data cell of the question's own table: never the answer here
        table = json.loads((tables / "tables_tok" / f"{record['table_id']}.json").read_text())
        cell = table["data"][-1][-1][0]
        predictions.append({"question_id": record["question_id"], "pred": cell})
    pred_path = tmp_path / "pred.json"
    pred_path.write_text(json.dumps(predictions))
    result = run_cli("score", "hybridqa", "-g", gold_path, "-p", pred_path, "-o", tmp_path / "o",
                     "--resamples", "50")
    assert result.returncode == 0, result.stderr
    scored = load_scored(tmp_path / "o")
    inputs = Inputs("hybridqa", gold=gold_path, tables=tables)
    counts = by_name(analyze(samples_of(scored), dimensions_for(inputs)))
    where = counts["where the wrong prediction occurs"]
    assert sum(where.values()) == len(gold) == 118
    right = int(scored.values[:, scored.names.index("em")].sum())
    assert where.get("correct", 0) == right
    in_cells = sum(v for k, v in where.items() if k.endswith("in a table cell"))
    empty = sum(v for k, v in where.items() if k.endswith("empty after normalization"))
    assert empty == 3  # three tables end in a "-" cell
    assert in_cells + empty == len(gold) - right


def _score_sample(tmp_path: Path, benchmark: str) -> tuple[Path, Path]:
    from hopscore.benchmarks import sample_files

    found = {s.benchmark: s for s in sample_files.samples()}
    with found[benchmark].paths() as (gold, predictions, aliases):
        out = tmp_path / benchmark
        args = ["score", benchmark, "--gold", gold, "--predictions", predictions, "-o", out]
        result = run_cli(*args, *(["--aliases", aliases] if aliases else []))
        assert result.returncode == 0, result.stderr
        kept = tmp_path / f"{benchmark}-gold{gold.suffix}"
        kept.write_bytes(gold.read_bytes())
    return out, kept


def test_every_benchmark_has_error_categories() -> None:
    for name in benchmarks.names():
        if name == "hybrid-deep-research":  # an agent's tasks: judge and SQL dimensions apply
            continue
        assert benchmarks.get(name).error_categories, name
        assert dimensions_for(Inputs(name))[0].name, name


@pytest.mark.parametrize(("sample", "expected"), [
    ("bamboogle", {"outcome": {"right": 3, "partial": 1, "wrong": 1},
                   "wrong answer x gold answer": {"part of the gold answer": 1,
                                                  "no word in common": 1}}),
    ("strategyqa", {"gold answer x predicted answer": {
        "gold yes, said yes": 2, "gold no, said no": 2, "gold no, said yes": 1}}),
    ("quartz", {"chosen option": {"right": 4, "the other option": 1}}),
    ("feverous", {"gold label x predicted label": {
        "SUPPORTS -> SUPPORTS": 2, "REFUTES -> REFUTES": 1, "REFUTES -> NOT ENOUGH INFO": 1,
        "NOT ENOUGH INFO -> SUPPORTS": 1},
        "label x evidence": {"right label, complete evidence": 2,
                             "right label, evidence incomplete": 1,
                             "wrong label, complete evidence": 1,
                             "wrong label, evidence incomplete": 1}}),
])
def test_bundled_samples_get_their_benchmark_categories(
        tmp_path: Path, sample: str, expected: dict[str, dict[str, int]]) -> None:
    out, gold = _score_sample(tmp_path, sample)
    result = run_cli("analyze", out, "--gold", gold, "-o", tmp_path / "categories.json")
    assert result.returncode == 0, result.stderr
    assert "no error category applies" not in result.stderr
    written = json.loads((tmp_path / "categories.json").read_text())
    counts = {d["name"]: {c["name"]: c["count"] for c in d["categories"]}
              for d in written["dimensions"]}
    for name, categories in expected.items():
        assert counts[name] == categories, (name, counts)
