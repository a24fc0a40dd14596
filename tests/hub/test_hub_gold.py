"""Gold from Hugging Face layouts scores exactly as the official file of the same split.

Each case takes an official gold file (the shared real data where there is one, else the
package sample), writes it in its Hub copy's layout with the real ``datasets`` library (parquet,
JSON Lines, save_to_disk, a Hub-style repository folder read through ``load_dataset``, and for
some the offline cache read by the Hub name), and checks that ``hopscore score`` gives the same
metrics.json and scores.jsonl from each as from the official file.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.hub import official_gold
from hopscore.scores.scoring import score_files
from tests.conftest import FIXTURES, run_cli, shared_file
from tests.parity import adversarial, adversarial_musique
from tests.parity import adversarial_sqa_fermi_feverous as adversarial2
from tests.parity.common import SAMPLES

exports = pytest.importorskip("tests.hub.exports")


@dataclass(frozen=True)
class Case:
    benchmark: str
    gold: Callable[[], Path]
    export: Callable[[Any], Any]
    predictions: Callable[[Any, Path], Path]
    config: str = "default"
    split: str = "validation"
    aliases: Path | None = None
    read: Callable[[Path], Any] = exports.official_json
    #: its JSON Lines export is read as the official layout, as it is (not converted)
    jsonl_as_is: bool = False


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


BENCHMARKS = Path(__file__).resolve().parents[2] / "src" / "hopscore" / "benchmarks"


def _openqa_predictions(gold: list[dict[str, Any]], path: Path) -> Path:
    answers = adversarial.answer_list_predictions([r["golden_answers"][0] for r in gold])
    return _jsonl(path, [{"id": r["id"], "answer": a} for r, a in zip(gold, answers,
                                                                      strict=True)])


def _twowiki_aliases() -> dict[str, list[str]]:
    table = {}
    for row in exports.official_jsonl(SAMPLES / "2wikimultihopqa" / "id_aliases.json"):
        table[row["Q_id"]] = [*row["aliases"], *row.get("demonyms", [])]
    return table


CASES = {
    "hotpotqa-shared": Case(
        "hotpotqa", lambda: shared_file("hotpotqa/hotpot_dev_distractor_v1.first53.json"),
        exports.hotpotqa, lambda gold, p: _write(p, adversarial.hotpot_predictions(gold)),
        config="distractor",
    ),
    "hotpotqa-fixture": Case(
        "hotpotqa", lambda: FIXTURES / "hotpotqa" / "dev_small.json", exports.hotpotqa,
        lambda gold, p: _write(p, adversarial.hotpot_predictions(gold)), config="distractor",
    ),
    "2wiki-without-ids": Case(
        "2wikimultihopqa", lambda: SAMPLES / "2wikimultihopqa" / "dev.json",
        lambda gold: exports.twowiki(gold, with_ids=False),
        lambda gold, p: _write(p, adversarial.twowiki_predictions(gold, {})),
    ),
    "2wiki-with-ids-and-aliases": Case(
        "2wikimultihopqa", lambda: SAMPLES / "2wikimultihopqa" / "dev.json",
        lambda gold: exports.twowiki(gold, with_ids=True),
        lambda gold, p: _write(p, adversarial.twowiki_predictions(gold, _twowiki_aliases())),
        aliases=SAMPLES / "2wikimultihopqa" / "id_aliases.json",
    ),
    "hybridqa-shared": Case(
        "hybridqa", lambda: shared_file("hybridqa/dev.json"), exports.hybridqa,
        lambda gold, p: _write(p, adversarial.hybridqa_predictions(
            {r["question_id"]: r["answer-text"] for r in gold})),
    ),
    "strategyqa-shared": Case(
        "strategyqa", lambda: shared_file("strategyqa/eladsegal/dev.json"), exports.strategyqa,
        lambda gold, p: _write(p, adversarial2.strategyqa_predictions(
            gold, 7, keys=("answer", "decomposition"))),
        split="train",
    ),
    "fermi-shared": Case(
        "fermi", lambda: shared_file("fermi/realFP/val_realfp.json"), exports.fermi,
        lambda gold, p: _write(p, adversarial2.fermi_predictions(gold, 7)), split="test",
    ),
    "bamboogle-shared": Case(
        "bamboogle", lambda: shared_file("bamboogle/bamboogle_test_questions_and_answers.json"),
        exports.bamboogle,
        lambda gold, p: _write(p, dict(enumerate(adversarial.answer_list_predictions(
            [r["answer"] for r in gold])))),
        split="test",
    ),
    "quartz-sample": Case(
        "quartz", lambda: SAMPLES / "quartz" / "dev.jsonl", exports.quartz,
        lambda gold, p: _jsonl(p, [{"id": r["id"], "answer": a} for r, a in
                                   zip(gold, adversarial.quartz_answers(gold), strict=True)]),
        read=exports.official_jsonl,
    ),
    "feverous-sample": Case(
        "feverous", lambda: SAMPLES / "feverous" / "gold.jsonl", exports.feverous,
        lambda gold, p: _jsonl(p, adversarial2.feverous_predictions(
            [r for r in gold if r.get("id") != ""], 7)),
        read=exports.official_jsonl,
    ),
    "musique-shared": Case(
        "musique", lambda: shared_file("musique/migres/musique.json"), exports.musique,
        lambda gold, p: _jsonl(p, adversarial_musique.predictions(gold, 7)),
        read=exports.official_jsonl,
    ),
    "musique-flashrag-shared": Case(
        "musique", lambda: shared_file("musique/migres/musique.json"), exports.musique_flashrag,
        lambda gold, p: _jsonl(p, adversarial_musique.predictions(gold, 8)),
        config="musique", split="dev", read=exports.official_jsonl,
    ),
    "openqa-nq-shared": Case(
        "openqa", lambda: shared_file("flashrag/quick_start/nq/test.jsonl"), exports.openqa,
        _openqa_predictions, config="nq", split="test", read=exports.official_jsonl,
        jsonl_as_is=True,
    ),
    "frames-sample": Case(
        "frames", lambda: BENCHMARKS / "frames" / "samples" / "gold.tsv", exports.frames,
        lambda gold, p: BENCHMARKS / "frames" / "samples" / "predictions.jsonl",
        split="test", read=lambda path: path, jsonl_as_is=True,
    ),
}


def _score(benchmark: str, gold: Path, predictions: Path, out: Path,
           aliases: Path | None) -> tuple[dict[str, Any], str]:
    score_files(benchmarks.get(benchmark), gold, predictions, out, aliases=aliases, resamples=50)
    metrics = json.loads((out / "metrics.json").read_text())
    return metrics, (out / "scores.jsonl").read_text()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "hopscore-cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # datasets reads its cache location when it is imported: point it at this test's folder
    config = exports.datasets.config
    monkeypatch.setattr(config, "HF_DATASETS_CACHE", tmp_path / "hf-home" / "datasets")
    monkeypatch.setattr(config, "HF_DATASETS_OFFLINE", True)
    monkeypatch.setattr(config, "HF_HUB_OFFLINE", True)


@pytest.mark.parametrize("name", list(CASES))
def test_hub_layouts_score_as_the_official_file(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    official = case.gold()
    gold = case.read(official)
    predictions = case.predictions(gold, tmp_path / "predictions.json")
    want_metrics, want_scores = _score(case.benchmark, official, predictions, tmp_path / "official",
                                       case.aliases)
    assert want_metrics["n_gold"] > 0
    sources = exports.write_all(case.export(gold), tmp_path / "hub" / case.config, case.config,
                                case.split)
    if case.benchmark == "feverous":  # JSON Lines holds class indices, without their names
        with pytest.raises(Exception, match="class index"):
            official_gold(case.benchmark, sources.pop("jsonl"))
    for kind, source in sources.items():
        converted = official_gold(case.benchmark, source)
        if kind == "jsonl" and case.jsonl_as_is:
            assert not converted.converted
        else:
            assert converted.converted, kind
            assert converted.rows == want_metrics["n_gold"], kind
        metrics, scores = _score(case.benchmark, converted.path, predictions,
                                 tmp_path / f"from-{kind}", case.aliases)
        # a warning about the gold file itself names it (the Hub copy has no answer_id to warn of)
        want_metrics["warnings"] = [w for w in want_metrics["warnings"] if str(official) not in w]
        assert metrics == want_metrics, kind
        assert scores == want_scores, kind


def test_official_files_are_read_as_they_are(tmp_path: Path) -> None:
    """An official file (JSON list, JSON Lines with a header) is never taken for a Hub layout."""
    for benchmark, path in [
        ("hotpotqa", FIXTURES / "hotpotqa" / "dev_small.json"),
        ("2wikimultihopqa", SAMPLES / "2wikimultihopqa" / "dev.json"),
        ("quartz", SAMPLES / "quartz" / "dev.jsonl"),
        ("feverous", SAMPLES / "feverous" / "gold.jsonl"),
        ("hybridqa", SAMPLES / "hybridqa" / "dev_reference.json"),
    ]:
        gold = official_gold(benchmark, path)
        assert not gold.converted and gold.path == path, benchmark


def test_offline_cache_by_hub_name_through_the_cli(tmp_path: Path) -> None:
    """``--gold hf:hotpotqa/hotpot_qa:distractor@validation`` with HF_DATASETS_OFFLINE=1 reads
    the datasets cache, as after a real download, and scores as the official file."""
    official = FIXTURES / "hotpotqa" / "dev_small.json"
    gold = exports.official_json(official)
    predictions = _write(tmp_path / "pred.json", adversarial.hotpot_predictions(gold))
    sources = exports.write_all(exports.hotpotqa(gold), tmp_path / "hub", "distractor",
                                "validation")
    hf_home = tmp_path / "hf-home"
    exports.fill_offline_cache(hf_home, "hotpotqa/hotpot_qa", "distractor", "validation",
                               sources["parquet"])
    env = {"HF_HOME": str(hf_home), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
           "HOPSCORE_CACHE_DIR": str(tmp_path / "cache")}
    hub = run_cli("score", "hotpotqa", "--gold", "hf:hotpotqa/hotpot_qa:distractor@validation",
                  "--predictions", predictions, "-o", tmp_path / "hub-out", env=env)
    assert hub.returncode == 0, hub.stderr
    assert "rows read in the official layout" in hub.stderr
    plain = run_cli("score", "hotpotqa", "--gold", official, "--predictions", predictions,
                    "-o", tmp_path / "official-out", env=env)
    assert plain.returncode == 0, plain.stderr
    assert (tmp_path / "hub-out" / "scores.jsonl").read_text() == \
        (tmp_path / "official-out" / "scores.jsonl").read_text()
    made = [json.loads((tmp_path / out / "metrics.json").read_text())
            for out in ("hub-out", "official-out")]
    assert made[0].pop("scored_from")["gold"] == "hf:hotpotqa/hotpot_qa:distractor@validation"
    assert made[1].pop("scored_from")["gold"] == str(official)
    assert made[0] == made[1]  # the same numbers; only the gold each was made from differs
    assert hub.stdout == plain.stdout
    missing = run_cli("score", "hotpotqa", "--gold", "hf:hotpotqa/hotpot_qa:fullwiki@validation",
                      "--predictions", predictions, env=env)
    assert missing.returncode == 2
    assert "offline mode is on" in missing.stderr and "Traceback" not in missing.stderr


def test_class_labels_come_back_through_the_offline_cache(tmp_path: Path) -> None:
    official = SAMPLES / "feverous" / "gold.jsonl"
    gold = exports.official_jsonl(official)
    sources = exports.write_all(exports.feverous(gold), tmp_path / "hub", "default", "validation")
    hf_home = tmp_path / "hf-home"
    exports.fill_offline_cache(hf_home, "fever/feverous", "default", "validation",
                               sources["parquet"])
    converted = official_gold("feverous", "hf:fever/feverous")
    rows = exports.official_jsonl(converted.path)
    assert [r["label"] for r in rows] == [r["label"] for r in gold if r.get("id") != ""]


def test_ids_are_positions_when_the_copy_has_none(tmp_path: Path) -> None:
    gold = exports.official_json(FIXTURES / "hotpotqa" / "dev_small.json")
    dataset = exports.hotpotqa(gold).remove_columns(["id"])
    sources = exports.write_all(dataset, tmp_path / "hub", "distractor", "validation")
    converted = official_gold("hotpotqa", sources["parquet"])
    assert any("no ids" in w for w in converted.warnings)
    ids = [r["_id"] for r in exports.official_json(converted.path)]
    assert ids == [str(i) for i in range(len(gold))]


def test_bad_sources_are_clear_errors(tmp_path: Path) -> None:
    gold = exports.official_json(FIXTURES / "hotpotqa" / "dev_small.json")
    sources = exports.write_all(exports.hotpotqa(gold), tmp_path / "hub", "distractor",
                                "validation")
    env = {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf"),
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    pred = _write(tmp_path / "p.json", adversarial.hotpot_predictions(gold))
    for gold_arg, message in [
        (sources["save_to_disk_dict"].replace("@validation", "@test"), "no split 'test'"),
        (str(tmp_path / "nothing.parquet"), "nothing.parquet"),
        ("hf:", "no dataset name"),
    ]:
        result = run_cli("score", "hotpotqa", "--gold", gold_arg, "--predictions", pred, env=env)
        assert result.returncode == 2, (gold_arg, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr
    broken = tmp_path / "broken.jsonl"
    rows = exports.official_jsonl(Path(sources["jsonl"]))
    rows[1]["answer"] = None
    broken.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = run_cli("score", "hotpotqa", "--gold", broken, "--predictions", pred, env=env)
    assert result.returncode == 2
    assert "record [1]" in result.stderr and "'answer'" in result.stderr


def test_random_rows_round_trip(tmp_path: Path) -> None:
    """Random HotpotQA-shaped records (empty lists, unicode, repeated titles) survive the Hub
    layout unchanged."""
    rng = random.Random(3)
    gold = []
    for i in range(40):
        titles = [rng.choice(["Ab", "Ç d", "e\u00e9", "Ab"]) for _ in range(rng.randint(0, 4))]
        gold.append({
            "_id": f"q{i}", "question": f"q {i}?",
            "answer": rng.choice(["yes", "no", "Zürich", ""]),
            "type": rng.choice(["bridge", "comparison"]), "level": "easy",
            "supporting_facts": [[t, rng.randint(0, 3)] for t in titles],
            "context": [[t, [f"s{j}" for j in range(rng.randint(0, 3))]] for t in titles],
        })  # fmt: skip
    sources = exports.write_all(exports.hotpotqa(gold), tmp_path / "hub", "distractor",
                                "validation")
    for source in sources.values():
        assert exports.official_json(official_gold("hotpotqa", source).path) == gold
