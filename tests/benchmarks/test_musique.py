"""MuSiQue: the gold and prediction readers, located errors, support read from replies, the
Hub layouts, and the sample through ``hopscore score`` and ``hopscore run``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.musique import MuSiQue
from hopscore.benchmarks.musique.example import Paragraph
from hopscore.benchmarks.musique.reply import cited_support
from hopscore.errors import InputError
from tests.benchmarks._cli import cli_error
from tests.benchmarks.helpers import score, write_jsonl
from tests.conftest import run_cli, shared_file
from tests.parity import adversarial_musique as adversarial

BENCH = MuSiQue()
SAMPLE = Path(__file__).resolve().parents[2] / "src/hopscore/benchmarks/musique/samples"
GOLD = SAMPLE / "gold.jsonl"
RECORDS = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]


def test_registered_with_its_sample() -> None:
    assert benchmarks.get("MuSiQue").name == "musique"
    import hopscore

    files = hopscore.sample_files("musique")
    assert files.gold == GOLD


def test_examples_expose_paragraphs_as_hotpotqa_does() -> None:
    first, _, third, _ = BENCH.load_gold(GOLD)
    assert first.groups() == {"hops": "2 hops", "type": "2hop"}
    assert third.groups() == {"hops": "3 hops", "type": "3hop1"}
    assert first.gold_answers() == ("Dunmere", "Dunmere City")
    assert first.support == (1, 2)
    # titles repeat ("Mira Castell" twice): context keeps every paragraph, in idx order
    assert [title for title, _ in first.context] == [
        "Lake Orvane", "The Glass Heron", "Mira Castell", "Dunmere", "Mira Castell"]
    assert first.context[1][1][0].startswith("The Glass Heron is a 1987 novel")
    assert first.supporting_facts == (("The Glass Heron", 0), ("Mira Castell", 0))
    assert third.supporting_titles() == ("Saint Oda's Church", "Kell", "Marrow Vale")


def test_full_pairs_keep_their_order(tmp_path: Path) -> None:
    full = adversarial.full_gold(RECORDS, 0)
    examples = BENCH.load_gold(write_jsonl(tmp_path / "full.jsonl", full))
    assert [e.id for e in examples] == [r["id"] for r in RECORDS]
    orders = [tuple(r["answerable"] for r in full if r["id"] == e.id) for e in examples]
    assert [e.answerable_order for e in examples] == orders
    assert {e.answerable_order for e in examples} == {(True, False), (False, True)}
    assert all(e.is_full and len(e.twin_paragraphs) == len(e.paragraphs) - 1 for e in examples)


def test_json_list_gold_reads_like_jsonl(tmp_path: Path) -> None:
    listed = tmp_path / "musique.json"
    listed.write_text(json.dumps(RECORDS), encoding="utf-8")
    assert BENCH.load_gold(listed) == BENCH.load_gold(GOLD)


def test_full_scores_group_metrics_by_line_order(tmp_path: Path) -> None:
    full = adversarial.full_gold(RECORDS, 0)
    gold = write_jsonl(tmp_path / "full.jsonl", full)
    lines = adversarial.perfect(full)
    report = score("musique", gold, write_jsonl(tmp_path / "p.jsonl", lines))
    assert report.metrics["sufficiency"] == 1.0
    assert report.metrics["group_answer_sufficiency_f1"] == 1.0
    # swapping the two lines of one id: the answerable line now holds the twin's prediction
    first = [i for i, r in enumerate(lines) if r["id"] == RECORDS[0]["id"]]
    lines[first[0]], lines[first[1]] = lines[first[1]], lines[first[0]]
    swapped = score("musique", gold, write_jsonl(tmp_path / "s.jsonl", lines))
    assert swapped.metrics["sufficiency"] == 0.75
    assert swapped.metrics["group_support_sufficiency_f1"] == 0.75
    # one line per id against Full gold: answer and support only (as the Ans metrics)
    # (the one line aligns with the first gold line: right where that is the answerable one)
    once = [r for r in adversarial.perfect(full) if r["predicted_answerable"]]
    single = score("musique", gold, write_jsonl(tmp_path / "o.jsonl", once))
    assert "sufficiency" not in single.metrics
    first = [e.answerable_order[0] for e in BENCH.load_gold(gold)]
    assert single.metrics["answer_em"] == sum(first) / len(RECORDS) < 1


def test_universal_and_official_predictions_agree(tmp_path: Path) -> None:
    official = adversarial.predictions(RECORDS, 3)
    universal = [{"id": r["id"], "answer": r["predicted_answer"],
                  "support": r["predicted_support_idxs"],
                  "answerable": r["predicted_answerable"]} for r in official]
    a = score("musique", GOLD, write_jsonl(tmp_path / "o.jsonl", official))
    b = score("musique", GOLD, write_jsonl(tmp_path / "u.jsonl", universal))
    assert a.metrics == b.metrics


def test_answers_without_support_warn(tmp_path: Path) -> None:
    lines = [{"id": r["id"], "answer": r["answer"]} for r in RECORDS]
    report = score("musique", GOLD, write_jsonl(tmp_path / "u.jsonl", lines))
    assert report.metrics["answer_em"] == 1.0 and report.metrics["support_f1"] == 0.0
    assert any('no prediction has "support"' in w for w in report.warnings)


def _line(**change: Any) -> dict[str, Any]:
    return {"id": RECORDS[0]["id"], "predicted_answer": "x", "predicted_support_idxs": [1],
            "predicted_answerable": True, **change}


@pytest.mark.parametrize(("lines", "message"), [
    ([_line(predicted_answer=None)], "p.jsonl:1: field 'predicted_answer': expected a string"),
    ([_line(predicted_support_idxs=["two"])],
     "p.jsonl:1: field 'predicted_support_idxs': a paragraph index must be an integer, got "
     "string 'two'"),
    ([_line(predicted_support_idxs=[1.5])], "a paragraph index must be an integer, got number"),
    ([_line(predicted_support_idxs=3)], "expected a list of paragraph indices"),
    ([_line(predicted_answerable="yes")], "field 'predicted_answerable': expected true or false"),
    ([_line(), _line(), _line()], "p.jsonl:3: field 'id': a third line for id"),
    ([{"predicted_answer": "x"}], "p.jsonl:1: field 'id': missing"),
    ([{"id": "x"}], "p.jsonl:1: field 'predicted_answer': missing"),
    ([{"id": "x", "predicted_answerable": True}], "p.jsonl:1: field 'predicted_answer': missing"),
])
def test_bad_predictions(tmp_path: Path, lines: list[Any], message: str) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", lines)
    with pytest.raises(InputError) as info:
        BENCH.load_predictions(path)
    assert message in str(info.value)


def _gold(**change: Any) -> dict[str, Any]:
    record = json.loads(json.dumps(RECORDS[1]))
    for key, value in change.items():
        if value is None:
            record.pop(key, None)
        else:
            record[key] = value
    return record


@pytest.mark.parametrize(("records", "message"), [
    ([_gold(answer=None, answerable=None)], "g.jsonl:1: field 'answer': missing: this looks "
     "like a MuSiQue test file"),
    ([_gold(paragraphs=[{"idx": "0", "title": "t", "paragraph_text": "x"}])],
     "g.jsonl:1: field 'paragraphs': a paragraph's idx must be an integer, got string"),
    ([_gold(paragraphs=[{"idx": 0, "title": "t", "paragraph_text": "x", "is_supporting": 1}])],
     "paragraph 0: is_supporting must be true or false"),
    ([_gold(answerable="yes")], "g.jsonl:1: field 'answerable': expected a boolean"),
    ([_gold(answer_aliases=[1])], "field 'answer_aliases': expected a list of strings"),
    ([_gold(), _gold()], "g.jsonl:2: field 'id': id '2hop__900003_900004' repeats line 1"),
    ([_gold(), _gold(id="other", answerable=False)],
     "g.jsonl:1: field 'answerable': id '2hop__900003_900004' has 1 line(s)"),
    ([_gold(), _gold(answerable=False), _gold(answerable=False)],
     "g.jsonl:3: field 'answerable': id '2hop__900003_900004' has 3 line(s)"),
    ([{"idx": 1, "question": "q", "answer": "a"}],
     "g.jsonl:1: field 'id': missing: this is R1-Searcher's"),
    ([RECORDS[0], "text"], "g.jsonl:2: expected a JSON object, got string"),
])
def test_bad_gold(tmp_path: Path, records: list[Any], message: str) -> None:
    path = write_jsonl(tmp_path / "g.jsonl", records)
    with pytest.raises(InputError) as info:
        BENCH.load_gold(path)
    assert message in str(info.value)


def test_r1_searcher_subset_is_refused_with_a_reason() -> None:
    path = shared_file("r1-searcher/eval_set/musique_500.first200.jsonl")
    with pytest.raises(InputError, match="R1-Searcher's"):
        BENCH.load_gold(path)


def test_real_records_load(capsys: pytest.CaptureFixture[str]) -> None:
    examples = BENCH.load_gold(shared_file("musique/migres/musique.json"))
    assert len(examples) == 128 and all(len(e.paragraphs) == 20 for e in examples)
    assert {e.groups()["type"] for e in examples} == {
        "2hop", "3hop1", "3hop2", "4hop1", "4hop2", "4hop3"}


def test_cli_errors_name_file_line_and_field(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_jsonl(tmp_path / "p.jsonl", [_line(predicted_answer=None)])
    err = cli_error(capsys, "score", "musique", "-g", GOLD, "-p", bad)
    assert "p.jsonl:1: field 'predicted_answer'" in err


def test_a_repeated_id_on_musique_ans_is_an_error(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Two lines for one MuSiQue-Ans id (which the official scorer refuses: its line counts
    differ) exit 2 naming the second line, not a silent first-line score with group metrics."""
    lines = [{"id": r["id"], "predicted_answer": r["answer"], "predicted_support_idxs": [],
              "predicted_answerable": True} for r in RECORDS]
    bad = write_jsonl(tmp_path / "p.jsonl", [*lines[:2], lines[1], *lines[2:]])
    err = cli_error(capsys, "score", "musique", "-g", GOLD, "-p", bad)
    assert f"p.jsonl:3 (first at line 2): field 'id': duplicate id {RECORDS[1]['id']!r}" in err


# --- support read from a reply ----------------------------------------------------------------

PARAGRAPHS = [Paragraph(0, "Kell", "a"), Paragraph(1, "Marrow Vale", "b"),
              Paragraph(2, "Kell", "c"), Paragraph(3, "Ashby Cross", "d")]


@pytest.mark.parametrize(("reply", "support"), [
    ("Step [Paragraph 1].\nSupporting paragraphs: 3, 1, 3\nAnswer: x", (3, 1)),
    ("Supporting paragraphs: Paragraph 2 and #0\nAnswer: x", (2, 0)),
    ("Kell is in Marrow Vale [1], whose seat is Ashby Cross [Paragraph 3].\nAnswer: x", (1, 3)),
    ("See [Kell] and [marrow vale].\nAnswer: x", (0, 2, 1)),
    ("Supporting paragraphs: [Ashby Cross]\nAnswer: x", (3,)),
    ("<think>[Paragraph 0]</think>It is in paragraph 17.\nAnswer: x", (17,)),
    ("No citation at all.\nAnswer: 1999", ()),
])
def test_cited_support(reply: str, support: tuple[int, ...]) -> None:
    assert cited_support(reply, PARAGRAPHS) == support


# --- Hub layouts ------------------------------------------------------------------------------


def test_hub_rows_become_official_records(tmp_path: Path) -> None:
    from hopscore.benchmarks.musique.hub import LAYOUT

    record = RECORDS[0]
    struct = {**record, "paragraphs": {key: [p[key] for p in record["paragraphs"]]
                                       for key in record["paragraphs"][0]}}
    assert LAYOUT.is_hub_row(struct)
    assert LAYOUT.to_official(struct, "x", 0) == record
    assert not LAYOUT.is_hub_row(record)
    flashrag = {"id": "dev_0", "question": record["question"],
                "golden_answers": ["Dunmere", "Dunmere City"],
                "metadata": {"answerable": True, "question_decomposition": [
                    {**hop, "support_paragraph": record["paragraphs"][hop["paragraph_support_idx"]]}
                    for hop in record["question_decomposition"]]}}
    assert LAYOUT.is_hub_row(flashrag)
    official = LAYOUT.to_official(flashrag, "x", 0)
    assert official["answer"] == "Dunmere" and official["answer_aliases"] == ["Dunmere City"]
    assert [p["idx"] for p in official["paragraphs"]] == [1, 2]
    gold = write_jsonl(tmp_path / "dev.jsonl", [flashrag])
    done = run_cli("score", "musique", "-g", gold, "-p",
                   write_jsonl(tmp_path / "p.jsonl", [
                       {"id": "dev_0", "predicted_answer": "dunmere",
                        "predicted_support_idxs": [2], "predicted_answerable": True}]),
                   "--json", "--resamples", "0")
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["answer_em"] == 1.0 and abs(metrics["support_f1"] - 2 / 3) < 1e-12


def test_parquet_copy_scores_as_the_official_file(tmp_path: Path) -> None:
    pytest.importorskip("datasets")  # hopscore reads a parquet gold with it (the hf extra)
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    gold = shared_file("musique/migres/musique.json")
    records = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    pq.write_table(pa.Table.from_pylist(records), tmp_path / "validation.parquet")
    predictions = write_jsonl(tmp_path / "p.jsonl", adversarial.predictions(records, 5))
    outs = []
    for name, source in (("official", gold), ("parquet", tmp_path / "validation.parquet")):
        done = run_cli("score", "musique", "-g", source, "-p", predictions, "-o",
                       tmp_path / name, "--resamples", "0",
                       env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
        assert done.returncode == 0, done.stderr
        outs.append((tmp_path / name / "scores.jsonl").read_text(encoding="utf-8"))
    assert outs[0] == outs[1]


def test_a_json_list_of_predictions_reads_like_jsonl(tmp_path: Path) -> None:
    lines = adversarial.predictions(RECORDS, 4)
    listed = tmp_path / "p.json"
    listed.write_text(json.dumps(lines), encoding="utf-8")
    a = score("musique", GOLD, listed)
    b = score("musique", GOLD, write_jsonl(tmp_path / "p.jsonl", lines))
    assert a.metrics == b.metrics
    listed.write_text(json.dumps([*lines[:1], *lines[:1], *lines[:1]]), encoding="utf-8")
    with pytest.raises(InputError, match=r"record \[2\]: field 'id': a third line .*first at "
                       r"record \[0\]"):
        BENCH.load_predictions(listed)
