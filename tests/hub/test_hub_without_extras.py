"""What works without the hf extra: JSON Lines exports in a Hub layout, official files read as
they are, and a clear message where ``datasets`` is needed."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.hub import official_gold
from hopscore.scores.scoring import score_files
from tests.conftest import FIXTURES, run_cli
from tests.parity import adversarial
from tests.parity.common import SAMPLES


def _hub_rows(gold: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """HotpotQA records in the layout of hotpotqa/hotpot_qa, as Dataset.to_json writes them."""
    return [{
        "id": r["_id"], "question": r["question"], "answer": r["answer"], "type": r["type"],
        "level": r["level"],
        "supporting_facts": {"title": [t for t, _ in r["supporting_facts"]],
                             "sent_id": [s for _, s in r["supporting_facts"]]},
        "context": {"title": [t for t, _ in r["context"]],
                    "sentences": [s for _, s in r["context"]]},
    } for r in gold]  # fmt: skip


def test_json_lines_export_scores_as_the_official_file(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "cache"))
    official = FIXTURES / "hotpotqa" / "dev_small.json"
    gold = json.loads(official.read_text())
    export = tmp_path / "validation.jsonl"
    export.write_text("".join(json.dumps(r) + "\n" for r in _hub_rows(gold)))
    predictions = tmp_path / "pred.json"
    predictions.write_text(json.dumps(adversarial.hotpot_predictions(gold)))
    converted = official_gold("hotpotqa", export)
    assert converted.converted and json.loads(converted.path.read_text()) == gold
    bench = benchmarks.get("hotpotqa")
    a = score_files(bench, official, predictions, tmp_path / "a")
    b = score_files(bench, converted.path, predictions, tmp_path / "b")
    assert a.to_json() == b.to_json()
    assert (tmp_path / "a" / "scores.jsonl").read_text() == \
        (tmp_path / "b" / "scores.jsonl").read_text()
    for benchmark, path in [("hotpotqa", official), ("quartz", SAMPLES / "quartz" / "dev.jsonl"),
                            ("feverous", SAMPLES / "feverous" / "gold.jsonl")]:
        assert not official_gold(benchmark, path).converted


@pytest.mark.skipif(importlib.util.find_spec("datasets") is not None,
                    reason="datasets is installed")
def test_parquet_without_datasets_says_what_to_install(tmp_path: Path) -> None:
    gold = tmp_path / "validation.parquet"
    gold.write_bytes(b"PAR1")
    result = run_cli("score", "hotpotqa", "--gold", gold, "--predictions",
                     SAMPLES / "hotpotqa" / "predictions.json",
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2
    assert "hopscore[hf]" in result.stderr and "Traceback" not in result.stderr
