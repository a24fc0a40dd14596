"""A benchmark that only scores implements only loading and scoring (issue 24).

The benchmark below defines ``load_gold``, ``load_predictions`` and ``score`` and nothing of
:class:`~hopscore.benchmarks.base.Prompting` or :class:`~hopscore.benchmarks.base.Analysis`.
It is registered as a third party registers one (an entry point in ``hopscore.benchmarks``,
its package and ``dist-info`` written into ``tmp_path``), scores through the Python API and the
command line, and ``hopscore run`` on it exits 2 saying it has no prompt, before anything runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.base import Loading, Prompting, Scoring
from hopscore.errors import HopscoreError

MODULE = '''
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from hopscore.benchmarks.base import (
    Benchmark, Example, Prediction, Predictions, check_unique_ids, load_universal,
)
from hopscore.files.io import load_json


@dataclass(frozen=True, slots=True, kw_only=True)
class CapitalExample(Example):
    answer: str


class Capitals(Benchmark[CapitalExample, Prediction]):
    name = "capitals"
    title = "Capitals"
    metrics: ClassVar[tuple[str, ...]] = ("accuracy",)

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[CapitalExample]:
        return check_unique_ids([CapitalExample(id=str(r["id"]), answer=str(r["answer"]))
                                 for r in load_json(path)], path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        by_id = load_universal(path, lambda f, i: Prediction(id=i, answer=f.str("answer")))
        return Predictions(by_id=by_id, source=str(path), format="universal")

    def score(self, example: CapitalExample, prediction: Prediction | None) -> dict[str, float]:
        right = prediction is not None and prediction.answer == example.answer
        return {"accuracy": float(right)}
'''


def _write(root: Path) -> None:
    (root / "capitals_bench").mkdir()
    (root / "capitals_bench" / "__init__.py").write_text(textwrap.dedent(MODULE))
    info = root / "capitals_bench-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: capitals-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[hopscore.benchmarks]\ncapitals = capitals_bench:Capitals\n")
    (root / "gold.json").write_text(json.dumps(
        [{"id": "fr", "answer": "Paris"}, {"id": "it", "answer": "Rome"},
         {"id": "de", "answer": "Berlin"}]))
    (root / "pred.jsonl").write_text('{"id": "fr", "answer": "Paris"}\n'
                                     '{"id": "it", "answer": "Milan"}\n')


@pytest.fixture
def registered(tmp_path: Path) -> Iterator[Path]:
    _write(tmp_path)
    sys.path.insert(0, str(tmp_path))
    benchmarks._plugins = None
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("capitals_bench", None)
        benchmarks._plugins = None


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "hopscore", *args], env=env, cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_it_defines_only_loading_and_scoring(registered: Path) -> None:
    bench = benchmarks.get("capitals")
    cls = type(bench)
    defined = {name for name in vars(cls) if callable(vars(cls)[name])}
    assert defined == {"load_gold", "load_predictions", "score"}
    assert defined <= set(vars(Loading)) | set(vars(Scoring))
    assert not bench.prompts()
    assert all(benchmarks.get(name).prompts() for name in benchmarks.REGISTRY
               if benchmarks.get(name).runner == "qa")


def test_the_api_scores_it(registered: Path) -> None:
    import hopscore

    report = hopscore.score("capitals", registered / "gold.json", registered / "pred.jsonl")
    assert report.metrics["accuracy"] == pytest.approx(1 / 3)
    assert report.missing_ids == ["de"]


def test_the_command_line_scores_it(tmp_path: Path) -> None:
    _write(tmp_path)
    done = _cli(tmp_path, "score", "capitals", "-g", "gold.json", "-p", "pred.jsonl",
                "-o", "out")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["metrics"]["accuracy"] == pytest.approx(1 / 3)
    assert len((tmp_path / "out" / "scores.jsonl").read_text().splitlines()) == 3


def test_run_refuses_it_saying_it_has_no_prompt(tmp_path: Path) -> None:
    _write(tmp_path)
    done = _cli(tmp_path, "run", "capitals", "-g", "gold.json", "--model", "openai/any",
                "--base-url", "http://127.0.0.1:9/v1", "-o", "out")
    assert done.returncode == 2, done.stderr
    assert "benchmark 'capitals' has no prompt" in done.stderr
    assert "hopscore run cannot run a model on it" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_refusal_names_the_command() -> None:
    class NoPrompt(Prompting[Any, Any]):
        name = "plain"
        title = "Plain"

    with pytest.raises(HopscoreError, match="hopscore suite cannot run a model"):
        NoPrompt().require_prompting("hopscore suite")
