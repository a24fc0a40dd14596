"""HotpotQA edge cases from official-metrics.md §1, checked one rule at a time."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.benchmarks.hotpotqa import HotpotQA, _parse_universal
from hopscore.benchmarks.hotpotqa.example import HotpotExample, HotpotPrediction
from hopscore.benchmarks.hotpotqa.official_scores import (
    answer_scores,
    joint_scores,
    supporting_fact_scores,
)
from hopscore.errors import InputError
from hopscore.files.fields import Fields
from tests.benchmarks.helpers import close, score, write_json, write_jsonl
from tests.conftest import FIXTURES
from tests.parity.adversarial import hotpot_predictions

BENCH = HotpotQA()
GOLD = FIXTURES / "hotpotqa" / "dev_small.json"


def example(answer: str, facts: tuple[tuple[str, int], ...] = (("A", 0),)) -> HotpotExample:
    return HotpotExample(id="q", answer=answer, supporting_facts=facts)


def test_empty_answers_give_em_1_and_f1_0() -> None:
    assert answer_scores("an", "The") == (1.0, 0.0, 0.0, 0.0)


def test_yes_no_rule_is_all_or_nothing() -> None:
    assert answer_scores("yes sir", "yes") == (0.0, 0.0, 0.0, 0.0)
    assert answer_scores("yes", "yes sir") == (0.0, 0.0, 0.0, 0.0)
    assert answer_scores("Yes.", "yes") == (1.0, 1.0, 1.0, 1.0)
    assert answer_scores("noanswer", "no answer")[1] == 0.0


def test_supporting_facts_are_sets_and_exact() -> None:
    gold = {("Ed Wood", 0), ("Scott Derrickson", 0)}
    assert supporting_fact_scores({("Ed Wood", 0)} | {("Ed Wood", 0)}, gold)[3] == 0.5
    # title case and sentence id must match exactly
    assert supporting_fact_scores({("ed wood", 0), ("Ed Wood", 1)}, gold) == (0.0, 0.0, 0.0, 0.0)
    # empty against empty: em 1, f1 0
    assert supporting_fact_scores(set(), set()) == (1.0, 0.0, 0.0, 0.0)


def test_duplicate_supporting_facts_collapse() -> None:
    prediction = HotpotPrediction(id="q", answer="x", sp=(("A", 0), ("A", 0), ("A", 0)))
    scores = BENCH.score(example("x"), prediction)
    assert scores["sp_em"] == 1.0 and scores["sp_prec"] == 1.0


def test_joint_f1_is_not_the_product_of_f1s() -> None:
    # answer P=1, R=.5 and sp P=.5, R=1 -> joint F1 .5 (product of F1s would be .444)
    ex = example("paris france", (("A", 0),))
    scores = BENCH.score(ex, HotpotPrediction(id="q", answer="Paris", sp=(("A", 0), ("B", 0))))
    assert close(scores["joint_f1"], 0.5)
    assert close(scores["f1"] * scores["sp_f1"], 4 / 9)
    # answer (2/3, 1) and sp (2/3, 1) -> joint F1 8/13 = .615 (product .64)
    ex = example("x y", (("A", 0), ("A", 1)))
    scores = BENCH.score(
        ex, HotpotPrediction(id="q", answer="x y z", sp=(("A", 0), ("A", 1), ("B", 0)))
    )
    assert close(scores["joint_f1"], 8 / 13)
    assert close(scores["f1"] * scores["sp_f1"], 0.64)
    assert joint_scores((1, 1, 1, 1), (0, 0, 0, 0)) == (0, 0.0, 0, 0)


def test_missing_answer_with_sp_still_scores_sp(tmp_path: Path) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    first = gold[0]
    pred = write_json(
        tmp_path / "p.json",
        {
            "answer": {},
            "sp": {first["_id"]: first["supporting_facts"]},
        },
    )
    report = score("hotpotqa", GOLD, pred)
    n = len(gold)
    assert close(report.metrics["sp_em"], 1 / n)
    assert report.metrics["em"] == 0.0 and report.metrics["joint_em"] == 0.0
    assert report.missing_ids == [r["_id"] for r in gold]


def test_extra_ids_are_listed_and_ignored(tmp_path: Path) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    answers = {r["_id"]: r["answer"] for r in gold} | {"nope": "x"}
    sps = {r["_id"]: r["supporting_facts"] for r in gold}
    report = score(
        "hotpotqa", GOLD, write_json(tmp_path / "p.json", {"answer": answers, "sp": sps})
    )
    assert report.extra_ids == ["nope"] and report.missing_ids == []
    # every metric is 1 except the answer F1 family: gold "the the" normalizes to "" (F1 0)
    for name in ("em", "sp_em", "sp_f1", "sp_prec", "sp_recall", "joint_em"):
        assert report.metrics[name] == 1.0
    assert close(report.metrics["f1"], 13 / 14) and close(report.metrics["joint_f1"], 13 / 14)
    assert set(report.groups) == {"bridge", "comparison", "easy", "medium", "hard"}


def test_answer_only_official_object_warns(tmp_path: Path) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    pred = write_json(tmp_path / "p.json", {"answer": {r["_id"]: r["answer"] for r in gold}})
    report = score("hotpotqa", GOLD, pred)
    assert report.metrics["em"] == 1.0 and report.metrics["sp_f1"] == 0.0
    assert any('no "sp" key' in w for w in report.warnings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            {"answer": {"hp-01": None}, "sp": {}},
            "record 'hp-01': field 'answer': expected a string",
        ),
        ({"answer": {"hp-01": ["yes"]}, "sp": {}}, "field 'answer': expected a string, got list"),
        ({"answer": {}, "sp": {"hp-01": [["Mara Quill", "1"]]}}, "sent_id must be an integer"),
        ({"answer": {}, "sp": {"hp-01": [["Mara Quill"]]}}, "expected [title, sent_id] pairs"),
        ({"answer": {}, "sp": {"hp-01": "Mara Quill"}}, "expected a list of [title, sent_id]"),
        ({"answer": [], "sp": {}}, "must map ids to values, got list"),
        ({"sp": {}}, 'expected the official {"answer"'),
    ],
)
def test_bad_official_predictions(tmp_path: Path, content: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        score("hotpotqa", GOLD, write_json(tmp_path / "p.json", content))
    assert message in str(info.value)
    assert "p.json" in str(info.value)


def test_universal_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    pred = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"id": "hp-01", "answer": "yes"},
            {"id": "hp-02", "answer": "no", "sp": [["A", "1"]]},
        ],
    )
    with pytest.raises(InputError, match=r"p\.jsonl:2: field 'sp': sent_id must be an integer"):
        score("hotpotqa", GOLD, pred)
    dup = write_jsonl(tmp_path / "d.jsonl", [{"id": "hp-01", "answer": "a"}] * 2)
    with pytest.raises(InputError, match=r"d\.jsonl:2: field 'id': duplicate id 'hp-01'"):
        score("hotpotqa", GOLD, dup)


def test_duplicate_gold_ids_are_an_error(tmp_path: Path) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    path = write_json(tmp_path / "g.json", [gold[0], gold[0]])
    with pytest.raises(
        InputError, match="duplicate gold id 'hp-01' in records \\[0\\] and \\[1\\]"
    ):
        BENCH.load_gold(path)


def test_scoring_reads_the_gold_like_load_gold_without_paragraphs(tmp_path: Path) -> None:
    for path in (GOLD, write_json(tmp_path / "g.json", _records_with(_id=7))):
        full = BENCH.load_gold(path)
        quick = list(BENCH.iter_gold(path))
        assert quick == [dataclasses.replace(e, context=()) for e in full]
        assert all(e.context for e in full)
    assert next(iter(BENCH.iter_gold(tmp_path / "g.json"))).id == "7"
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + GOLD.read_bytes())
    assert list(BENCH.iter_gold(bom)) == list(BENCH.iter_gold(GOLD))


def _records_with(**changes: Any) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads(GOLD.read_text(encoding="utf-8"))
    records[0] = {**records[0], **changes}
    return records


@pytest.mark.parametrize(
    "changes",
    [
        {"supporting_facts": [["A", "1"]]},
        {"supporting_facts": [["A", True]]},
        {"supporting_facts": [["A", 1, 2]]},
        {"_id": True},
        {"_id": "  "},
        {"answer": None},
        {"answer": ["x"]},
        {"question": None},
        {"type": 3},
    ],
)
def test_unusual_gold_gets_the_checked_readers_error(tmp_path: Path, changes: Any) -> None:
    path = write_json(tmp_path / "g.json", _records_with(**changes))
    with pytest.raises(InputError) as checked:
        BENCH.load_gold(path)
    with pytest.raises(InputError) as quick:
        list(BENCH.iter_gold(path))
    assert str(quick.value) == str(checked.value)


def test_scoring_does_not_check_what_it_does_not_read(tmp_path: Path) -> None:
    """Paragraphs are skipped, and a key repeated in a record keeps its last value (as in the
    official reader); load_gold, which keeps everything, rejects both."""
    bad_context = write_json(tmp_path / "c.json", _records_with(context="not a list"))
    with pytest.raises(InputError, match="field 'context'"):
        BENCH.load_gold(bad_context)
    assert next(iter(BENCH.iter_gold(bad_context))).id == "hp-01"
    text = GOLD.read_text(encoding="utf-8").replace('"answer":', '"answer": "first", "answer":', 1)
    repeated = tmp_path / "r.json"
    repeated.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match="duplicate key 'answer'"):
        BENCH.load_gold(repeated)
    assert next(iter(BENCH.iter_gold(repeated))).answer == BENCH.load_gold(GOLD)[0].answer


def test_gold_that_is_not_a_list_or_not_json(tmp_path: Path) -> None:
    for content, message in [("{}", "expected a JSON list"), ("[{", "invalid JSON"), ("", "empty")]:
        path = tmp_path / "g.json"
        path.write_text(content, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            list(BENCH.iter_gold(path))


def test_official_predictions_read_quickly_equal_the_checked_reading(tmp_path: Path) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    content = hotpot_predictions(gold)
    content["answer"]["only-answer"] = "x"
    content["sp"]["only-sp"] = [["T", 0], ["T", 0]]
    content["sp"]["empty-sp"] = []
    path = write_json(tmp_path / "p.json", content)
    quick = BENCH.load_predictions(path).by_id
    checked = {
        example_id: _parse_universal(
            Fields.at_key({k: content[k][example_id] for k in content if example_id in content[k]},
                          str(path), example_id),
            example_id,
        )
        for example_id in {**content["answer"], **content["sp"]}
    }  # fmt: skip
    assert quick == checked
    assert quick["only-sp"].answer is None and quick["only-sp"].sp == (("T", 0), ("T", 0))
    assert quick["empty-sp"].sp == ()


# --- properties -------------------------------------------------------------------------------

words = st.sampled_from(["the", "a", "yes", "no", "Paris", "paris.", "U.S.", "1,000", "x", "–"])
answers = st.lists(words, max_size=5).map(" ".join)


@given(answers, answers)
def test_em_implies_f1_outside_empty_answers(pred: str, gold: str) -> None:
    em, f1, precision, recall = answer_scores(pred, gold)
    for value in (em, f1, precision, recall):
        assert 0.0 <= value <= 1.0
    if em == 1.0 and pred.strip() and answer_scores(gold, gold)[1] == 1.0:
        assert f1 == 1.0


@settings(max_examples=25, deadline=None)
@given(rng=st.randoms(use_true_random=False), preds=st.lists(answers, min_size=14, max_size=14))
def test_results_do_not_depend_on_prediction_order(
    tmp_path_factory: pytest.TempPathFactory, rng: random.Random, preds: list[str]
) -> None:
    gold = json.loads(GOLD.read_text(encoding="utf-8"))
    ids = [r["_id"] for r in gold]
    items = list(zip(ids, preds, strict=True))
    sp = {r["_id"]: r["supporting_facts"][:1] for r in gold}
    folder = tmp_path_factory.mktemp("order")
    first = score(
        "hotpotqa", GOLD, write_json(folder / "a.json", {"answer": dict(items), "sp": sp})
    )
    rng.shuffle(items)
    shuffled = list(sp.items())
    rng.shuffle(shuffled)
    second = score(
        "hotpotqa",
        GOLD,
        write_json(folder / "b.json", {"answer": dict(items), "sp": dict(shuffled)}),
    )
    assert first.metrics == second.metrics
    assert all(0.0 <= v <= 1.0 for v in first.metrics.values())
