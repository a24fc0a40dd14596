"""FRAMES: every gold layout, bad input located, the rule metrics, accuracy per reasoning type
(a question counts in each type it carries), the rater's verdict reader, and the oracle
setting's pages."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path

import pytest

from hopscore.benchmarks.base import PromptInputs
from hopscore.benchmarks.frames import Frames
from hopscore.benchmarks.frames.documents import link_key, read_pages, title_key
from hopscore.benchmarks.frames.per_example import frames_answer
from hopscore.benchmarks.frames.rater import read_verdict
from hopscore.errors import HopscoreError, InputError
from tests.benchmarks.helpers import score, write_json, write_jsonl
from tests.conftest import SRC, shared_file

BENCH = Frames()
SAMPLES = SRC / "hopscore" / "benchmarks" / "frames" / "samples"
LINKS = [f"wikipedia_link_{i}" for i in range(1, 11)] + ["wikipedia_link_11+"]

QUESTIONS = [  # (question, answer, reasoning types, links)
    ("Q zero? ", "Alpha", "Multiple constraints | Numerical reasoning",
     ["https://en.wikipedia.org/wiki/A", "https://en.wikipedia.org/wiki/B"]),
    ("Q one?", "Beta", "Numerical reasoning",
     ["https://en.wikipedia.org/wiki/C", "https://en.wikipedia.org/wiki/D",
      "https://en.wikipedia.org/wiki/E"]),
    ("Q two?", "Gamma", "Temporal reasoning | Multiple constraints | Post processing",
     ["https://en.wikipedia.org/wiki/F", "https://en.wikipedia.org/wiki/G"]),
]


def delimited(path: Path, delimiter: str, index: bool) -> Path:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(([""] if index else []) + ["Prompt", "Answer", *LINKS, "reasoning_types",
                                               "wiki_links"])
    for i, (q, a, t, links) in enumerate(QUESTIONS):
        cells = links + [""] * (11 - len(links))
        writer.writerow(([str(i + 10)] if index else []) + [q, a, *cells, t, repr(links)])
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def simpledeepsearcher(path: Path) -> Path:
    return write_json(path, [
        {"id": str(i), "Question": q, "Answer": a, "answer": [a], "reasoning_types": t,
         "wiki_links": repr(links), **{c: "" for c in LINKS}}
        for i, (q, a, t, links) in enumerate(QUESTIONS)])


def modelscope(path: Path) -> Path:
    return write_jsonl(path, [
        {"id": i, "Prompt": q, "Answer": a, "reasoning_types": t, "wiki_links": links,
         "wiki_items": [{"title": link.rsplit("/", 1)[1], "text": f"text of {link}"}
                        for link in links]}
        for i, (q, a, t, links) in enumerate(QUESTIONS)])


def test_every_layout_reads_the_same_questions(tmp_path: Path) -> None:
    old_tsv = BENCH.load_gold(delimited(tmp_path / "test_old.tsv", "\t", index=True))
    clean_tsv = BENCH.load_gold(delimited(tmp_path / "test.tsv", "\t", index=False))
    as_csv = BENCH.load_gold(delimited(tmp_path / "test.csv", ",", index=True))
    as_json = BENCH.load_gold(simpledeepsearcher(tmp_path / "frames.json"))
    as_jsonl = BENCH.load_gold(modelscope(tmp_path / "test.jsonl"))
    # the index column is the id; without it (test_clean / today's test.tsv) the position is
    assert [e.id for e in old_tsv] == ["10", "11", "12"] == [e.id for e in as_csv]
    assert [e.id for e in clean_tsv] == ["0", "1", "2"] == [e.id for e in as_json]
    assert [e.id for e in as_jsonl] == ["0", "1", "2"]
    for examples in (old_tsv, clean_tsv, as_csv, as_json, as_jsonl):
        assert [e.question for e in examples] == ["Q zero?", "Q one?", "Q two?"]
        assert [e.answers for e in examples] == [("Alpha",), ("Beta",), ("Gamma",)]
        assert examples[2].reasoning_types == ("Temporal reasoning", "Multiple constraints",
                                               "Post processing")
        assert list(examples[1].wiki_links) == QUESTIONS[1][3]
    assert as_jsonl[0].articles[0] == ("A", "text of https://en.wikipedia.org/wiki/A")


def test_links_from_the_link_cells_when_wiki_links_is_absent(tmp_path: Path) -> None:
    path = write_json(tmp_path / "g.json", [{"Prompt": "Q?", "Answer": "A",
                                             "wikipedia_link_1": "https://x/wiki/One",
                                             "wikipedia_link_2": "", "wikipedia_link_11+":
                                             "https://x/wiki/Two https://x/wiki/Three"}])
    assert BENCH.load_gold(path)[0].wiki_links == ("https://x/wiki/One", "https://x/wiki/Two",
                                                   "https://x/wiki/Three")


def test_the_bundled_sample_and_its_groups() -> None:
    examples = BENCH.load_gold(SAMPLES / "gold.tsv")
    assert len(examples) == 5
    assert examples[1].groups() == {"numerical_reasoning": "Numerical reasoning",
                                    "temporal_reasoning": "Temporal reasoning",
                                    "articles": "2 articles"}


def test_the_real_simpledeepsearcher_copy() -> None:
    path = shared_file("frames/simpledeepsearcher/frames.first200.json")
    examples = BENCH.load_gold(path)
    assert len(examples) == 200 and examples[0].id == "0" and examples[-1].id == "199"
    labels = Counter(label for e in examples for label in e.reasoning_types)
    assert labels == {"Multiple constraints": 142, "Numerical reasoning": 77,
                      "Tabular reasoning": 66, "Temporal reasoning": 58, "Post processing": 28}
    assert all(2 <= len(e.wiki_links) <= 15 for e in examples)
    assert examples[0].answers == ("Jane Ballou",)


@pytest.mark.parametrize(("text", "where"), [
    ('[{"Prompt": "Q?", "Answer": "A", "wiki_links": "[\'https://x\'"}]', "[0]"),
    ('[{"Prompt": "Q?", "Answer": "A", "wiki_links": "[1, 2]"}]', "[0]"),
    ('[{"Prompt": "Q?"}]', "[0]"),
    ('[{"Prompt": "Q?", "Answer": ""}]', "[0]"),
    ('[{"Answer": "A"}]', "[0]"),
    ('[{"Prompt": "Q?", "Answer": "A", "reasoning_types": 3}]', "[0]"),
    ('{"Prompt": "Q?", "Answer": "A"}\n{"Prompt": "Q2?", "Answer": [1]}\n', "json:2"),
])
def test_bad_records_name_file_record_and_field(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "gold.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        BENCH.load_gold(path)
    message = str(raised.value)
    assert str(path) in message and where in message
    assert raised.value.field in ("wiki_links", "Answer", "Prompt", "reasoning_types")


@pytest.mark.parametrize("name", ["gold.tsv", "gold.jsonl", "gold.csv"])
def test_an_empty_gold_file_says_so(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("\n \n", encoding="utf-8")
    with pytest.raises(InputError, match="file is empty"):
        BENCH.load_gold(tmp_path / name)


def test_bad_delimited_files_name_the_line(tmp_path: Path) -> None:
    gold = delimited(tmp_path / "test.tsv", "\t", index=True)
    lines = gold.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("['https://en.wikipedia.org/wiki/C'", "[https://en.wiki", 1)
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        BENCH.load_gold(gold)
    assert f"{gold}:3" in str(raised.value) and raised.value.field == "wiki_links"
    headless = tmp_path / "nohead.tsv"
    headless.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="Prompt column"):
        BENCH.load_gold(headless)
    dup = tmp_path / "dup.json"
    write_json(dup, [{"id": "1", "Prompt": "Q", "Answer": "A"},
                     {"id": "1", "Prompt": "Q", "Answer": "B"}])
    with pytest.raises(InputError, match="duplicate gold id '1'"):
        BENCH.load_gold(dup)


def test_predictions_in_each_layout(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "p.jsonl", [
        {"index": 0, "Prompt": "Q zero?", "response": "It is Alpha."},
        {"index": 1, "Prompt": "Q one?", "response": None}])
    loaded = BENCH.load_predictions(rows)
    assert loaded.by_id["0"].answer == "It is Alpha." and loaded.by_id["1"].answer is None
    mapping = BENCH.load_predictions(write_json(tmp_path / "p.json", {"0": "Alpha"}))
    assert mapping.by_id["0"].answer == "Alpha"
    dup = write_jsonl(tmp_path / "d.jsonl", [{"id": "0", "answer": "a"},
                                             {"id": "0", "answer": "b"}])
    with pytest.raises(InputError, match="duplicate id '0'") as raised:
        BENCH.load_predictions(dup)
    assert f"{dup}:2" in str(raised.value)
    bad = write_jsonl(tmp_path / "b.jsonl", [{"id": "0", "answer": 3}])
    with pytest.raises(InputError) as raised:
        BENCH.load_predictions(bad)
    assert raised.value.field == "answer" and f"{bad}:1" in str(raised.value)


def test_rule_metrics() -> None:
    assert frames_answer("Jane Ballou", "jane ballou") == {"em": 1.0, "f1": 1.0,
                                                           "contains": 1.0}
    assert frames_answer("Her name is Jane Ballou.", ["X", "Jane Ballou"])["contains"] == 1.0
    assert frames_answer("Ballou", "Jane Ballou") == {"em": 0.0, "f1": pytest.approx(2 / 3),
                                                      "contains": 0.0}
    assert frames_answer("21st", "21")["contains"] == 0.0  # whole words only


def test_accuracy_per_reasoning_type_counts_a_question_in_each_of_its_types(
        tmp_path: Path) -> None:
    gold = delimited(tmp_path / "test.tsv", "\t", index=False)
    predictions = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "0", "answer": "Alpha"}, {"id": "1", "answer": "wrong"},
        {"id": "2", "answer": "Gamma"}])
    report = score("frames", gold, predictions)
    assert report.metrics["em"] == pytest.approx(2 / 3)
    groups = {name: (g.n, g.metrics["em"]) for name, g in report.groups.items()}
    assert groups["Multiple constraints"] == (2, 1.0)  # questions 0 and 2
    assert groups["Numerical reasoning"] == (2, 0.5)  # questions 0 and 1
    assert groups["Temporal reasoning"] == (1, 1.0)
    assert groups["Post processing"] == (1, 1.0)
    assert "Tabular reasoning" not in groups
    assert groups["2 articles"] == (2, 1.0) and groups["3 articles"] == (1, 0.0)
    types = [g.n for n, g in report.groups.items() if not n.endswith("articles")]
    assert sum(types) == 6 > report.n_gold  # multi-label: the type counts add up to more


@pytest.mark.parametrize(("reply", "correct", "parse_ok"), [
    ("Explanation: both name Ottawa.\nDecision: TRUE", True, True),
    ("Explanation: no.\n**Decision:** false.", False, True),
    ("Decision: `True`", True, True),
    ("- **Decision**: TRUE", True, True),
    ("Decision: TRUE\n\nOn reflection:\nDecision: FALSE", False, True),
    ("Decision: TRUE or FALSE", False, False),
    ("The answer is TRUE.", False, False),
    ("Final decision: TRUE", False, False),
    ("Decision: Truely", False, False),
    ("", False, False),
])
def test_the_rater_reader(reply: str, correct: bool, parse_ok: bool) -> None:
    verdict = read_verdict(reply)
    assert (verdict.correct, verdict.parse_ok) == (correct, parse_ok)


def test_the_rater_reader_keeps_the_explanation_and_flags_conflicts() -> None:
    verdict = read_verdict("Explanation: first\nDecision: TRUE\nExplanation: second\n"
                           "Decision: FALSE")
    assert verdict.reasoning == "second" and verdict.conflicting_verdicts
    assert verdict.verdict_lines == 2


def test_links_and_titles_match_pages_written_either_way() -> None:
    same = {link_key("https://en.wikipedia.org/wiki/Bill_Gates"),
            link_key("en.m.wikipedia.org/wiki/Bill%20Gates/"),
            link_key("http://www.en.wikipedia.org/wiki/Bill_Gates#Early_life")}
    assert same == {"en.wikipedia.org/wiki/bill gates"}
    assert link_key("https://en.wikipedia.org/wiki/Bill") != link_key(
        "https://en.wikipedia.org/wiki/Bill_Gates")
    assert title_key("https://en.wikipedia.org/wiki/James_A._Garfield") == "james a. garfield"


def test_oracle_pages_from_a_documents_file(tmp_path: Path) -> None:
    example = BENCH.load_gold(delimited(tmp_path / "test.tsv", "\t", index=False))[0]
    docs = write_jsonl(tmp_path / "pages.jsonl", [
        {"url": "https://en.m.wikipedia.org/wiki/A", "title": "Page A", "text": "about A"},
        {"title": "B", "text": "about B"}])
    variables = BENCH.prompt_variables(example, PromptInputs(documents=docs))
    assert variables["oracle"] == [{"title": "Page A", "text": "about A"},
                                   {"title": "B", "text": "about B"}]
    assert BENCH.prompt_variables(example, PromptInputs())["oracle"] == []
    keyed = write_json(tmp_path / "pages.json", {"https://en.wikipedia.org/wiki/A": "a"})
    with pytest.raises(HopscoreError) as raised:
        BENCH.prompt_variables(example, PromptInputs(documents=keyed))
    message = str(raised.value)
    assert "https://en.wikipedia.org/wiki/B" in message and "question '0'" in message
    assert str(keyed) in message
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"text": "no key"}])
    with pytest.raises(InputError) as located:
        read_pages(bad)
    assert f"{bad}:1" in str(located.value) and located.value.field == "url"


def test_the_gold_own_articles_are_the_oracle_without_a_documents_file(tmp_path: Path) -> None:
    example = BENCH.load_gold(modelscope(tmp_path / "test.jsonl"))[1]
    oracle = BENCH.prompt_variables(example, PromptInputs())["oracle"]
    assert [page["title"] for page in oracle] == ["C", "D", "E"]
    assert json.dumps(oracle)
