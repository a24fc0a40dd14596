"""HybridQA edge cases from official-metrics.md §2."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hopscore.benchmarks.hybridqa import HybridQA, exact_and_f1
from hopscore.errors import InputError
from hopscore.text.normalize import normalize_answer
from tests.benchmarks.helpers import close, score, write_json, write_jsonl
from tests.conftest import FIXTURES

BENCH = HybridQA()
REFERENCE = FIXTURES / "hybridqa" / "dev_reference_small.json"
TRACED = FIXTURES / "hybridqa" / "dev_traced_small.json"


def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def test_exact_match_is_normalized_not_raw() -> None:
    assert exact_and_f1("eiffel tower", normalize_answer("The Eiffel Tower!")) == (1.0, 1.0)


def test_f1_is_multiset_and_empty_vs_empty_is_one() -> None:
    assert close(exact_and_f1("x y y", normalize_answer("x x y"))[1], 2 / 3)
    assert exact_and_f1("", "") == (1.0, 1.0)
    assert exact_and_f1("The", "") == (1.0, 1.0)
    assert exact_and_f1("", "paris") == (0.0, 0.0)
    assert exact_and_f1("1–2", normalize_answer("1-2")) == (0.0, 0.0)


def test_missing_ids_score_zero_instead_of_crashing(tmp_path: Path) -> None:
    ref = reference()["reference"]
    kept = dict(list(ref.items())[:10])
    pred = write_json(tmp_path / "p.json", [{"question_id": k, "pred": v} for k, v in kept.items()])
    report = score("hybridqa", REFERENCE, pred)
    assert report.missing_ids == list(ref)[10:]
    assert close(report.metrics["em"], 10 / 16)
    assert report.groups["table"].n + report.groups["passage"].n == 14  # two are unlocated
    assert report.n_gold == 16


def test_groups_follow_answer_nodes(tmp_path: Path) -> None:
    gold = {e.id: e for e in BENCH.load_gold(TRACED)}
    assert gold["hy02"].groups() == {"location": "table"}
    assert gold["hy04"].groups() == {"location": "passage"}
    assert gold["hy08"].groups() == {}  # computed answer: no answer node, in neither group
    assert {e.id: e.location for e in BENCH.load_gold(REFERENCE)} == {
        k: v.location for k, v in gold.items()
    }


def test_extra_ids_are_ignored_and_universal_jsonl_works(tmp_path: Path) -> None:
    ref = reference()["reference"]
    records = [{"id": k, "answer": v} for k, v in ref.items()] + [{"id": "zzz", "answer": "x"}]
    report = score("hybridqa", REFERENCE, write_jsonl(tmp_path / "p.jsonl", records))
    assert report.metrics == {"em": 1.0, "f1": 1.0}
    assert report.extra_ids == ["zzz"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            [{"question_id": "hy01", "pred": "a"}, {"question_id": "hy01", "pred": "b"}],
            "p.json: record [1]: field 'question_id': duplicate question id 'hy01' "
            "(first in record [0])",
        ),
        (
            [{"question_id": "hy01", "pred": None}],
            "record [0]: field 'pred': expected a string, got null",
        ),
        ([{"question_id": "hy01", "pred": ["a"]}], "field 'pred': expected a string, got list"),
        ([{"question_id": "hy01"}], "field 'pred': missing"),
        ([{"pred": "a"}], "field 'question_id': missing"),
        ({"hy01": "a"}, "expected the official JSON list"),
        (["a"], "record [0]: expected a JSON object, got string"),
    ],
)
def test_bad_predictions(tmp_path: Path, content: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        score("hybridqa", REFERENCE, write_json(tmp_path / "p.json", content))
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ({"reference": {"a": "x"}, "table": ["b"], "passage": []}, "'b' is not a question id"),
        (
            {"reference": {"a": "x"}, "table": ["a"], "passage": ["a"]},
            "listed in both 'table' and 'passage'",
        ),
        ({"reference": {"a": 1}}, "record 'a': field 'reference': expected a string, got number"),
        ({"answers": {}}, "expected dev_reference.json"),
        (
            [
                {
                    "question_id": "a",
                    "answer-text": "x",
                    "answer-node": [["x", [0, 0], None, "cell"]],
                }
            ],
            "field 'answer-node'",
        ),
        ([{"question_id": "a", "question": "q"}], "field 'answer-text': missing"),
    ],
)
def test_bad_gold(tmp_path: Path, content: Any, message: str) -> None:
    with pytest.raises(InputError) as info:
        BENCH.load_gold(write_json(tmp_path / "g.json", content))
    assert message in str(info.value)


tokens = st.sampled_from(["the", "a", "Paris", "paris!", "x", "1,000", "“q”", "–"])
texts = st.lists(tokens, max_size=4).map(" ".join)


@given(texts, texts)
def test_em_implies_f1_and_range(pred: str, gold: str) -> None:
    em, f1 = exact_and_f1(pred, normalize_answer(gold))
    assert 0.0 <= f1 <= 1.0
    if em == 1.0:
        assert f1 == 1.0


@settings(max_examples=20, deadline=None)
@given(rng=st.randoms(use_true_random=False), preds=st.lists(texts, min_size=16, max_size=16))
def test_prediction_order_does_not_matter(
    tmp_path_factory: pytest.TempPathFactory, rng: random.Random, preds: list[str]
) -> None:
    records = [
        {"question_id": k, "pred": p} for k, p in zip(reference()["reference"], preds, strict=True)
    ]
    folder = tmp_path_factory.mktemp("order")
    first = score("hybridqa", REFERENCE, write_json(folder / "a.json", records))
    rng.shuffle(records)
    second = score("hybridqa", REFERENCE, write_json(folder / "b.json", records))
    assert first.metrics == second.metrics
    assert {k: g.metrics for k, g in first.groups.items()} == {
        k: g.metrics for k, g in second.groups.items()
    }


def test_reference_examples_are_built_lazily_but_checked_up_front(tmp_path: Path) -> None:
    lazy = BENCH.iter_gold(REFERENCE)
    assert not isinstance(lazy, list)
    assert list(lazy) == BENCH.load_gold(REFERENCE)
    bad_group = {**reference(), "table": ["not-an-id"]}
    with pytest.raises(InputError, match=r"record 'table\[0\]': 'not-an-id' is not a question"):
        BENCH.iter_gold(write_json(tmp_path / "g.json", bad_group))
    ref = reference()
    last = list(ref["reference"])[-1]
    ref["reference"][last] = 3
    examples = iter(BENCH.iter_gold(write_json(tmp_path / "h.json", ref)))
    assert next(examples).id == next(iter(ref["reference"]))
    with pytest.raises(InputError, match=rf"record '{last}': field 'reference': expected a string"):
        list(examples)


def test_official_list_reads_unusual_ids_through_the_checked_path(tmp_path: Path) -> None:
    content = [
        {"question_id": "hy01", "pred": "a", "other": 1},
        {"question_id": 7, "pred": "int id"},
        {"question_id": " hy02", "pred": ""},
    ]
    predictions = BENCH.load_predictions(write_json(tmp_path / "p.json", content)).by_id
    assert {k: v.answer for k, v in predictions.items()} == {
        "hy01": "a", "7": "int id", " hy02": ""
    }
    with pytest.raises(InputError, match=r"record \[1\]: field 'question_id': duplicate"):
        BENCH.load_predictions(write_json(tmp_path / "d.json", [content[1], content[1]]))
