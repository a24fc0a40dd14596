"""A third-party benchmark found through the ``hopscore.benchmarks`` entry point group.

The toy package is written into ``tmp_path`` with a ``toy_bench-0.1.dist-info`` beside it, so
``importlib.metadata`` finds its entry point without pip: in-process through ``sys.path``, in a
subprocess through ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.errors import HopscoreError

TOY_MODULE = '''
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from hopscore.benchmarks.base import (
    Benchmark, Example, Prediction, Predictions, check_unique_ids, load_universal,
)
from hopscore.files.io import load_json


@dataclass(frozen=True, slots=True, kw_only=True)
class ToyExample(Example):
    answer: str


class Toy(Benchmark[ToyExample, Prediction]):
    name = "toy"
    title = "Toy"
    metrics: ClassVar[tuple[str, ...]] = ("em",)

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[ToyExample]:
        rows = load_json(path)
        return check_unique_ids([ToyExample(id=str(r["id"]), answer=str(r["answer"]))
                                 for r in rows], path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        by_id = load_universal(path, lambda f, i: Prediction(id=i, answer=f.str("answer")))
        return Predictions(by_id=by_id, source=str(path), format="universal")

    def score(self, example: ToyExample, prediction: Prediction | None) -> dict[str, float]:
        ok = prediction is not None and (prediction.answer or "").lower() == example.answer.lower()
        return {"em": float(ok)}
'''


def _write_plugin(root: Path, entry: str = "toy = toy_bench:Toy") -> None:
    (root / "toy_bench").mkdir(exist_ok=True)
    (root / "toy_bench" / "__init__.py").write_text(textwrap.dedent(TOY_MODULE))
    info = root / "toy_bench-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hopscore.benchmarks]\n{entry}\n")
    (root / "gold.json").write_text(json.dumps(
        [{"id": "a", "answer": "Paris"}, {"id": "b", "answer": "Rome"}]))
    (root / "pred.jsonl").write_text('{"id": "a", "answer": "paris"}\n'
                                     '{"id": "b", "answer": "Milan"}\n')


@pytest.fixture
def plugin_path(tmp_path: Path) -> Iterator[Path]:
    _write_plugin(tmp_path)
    sys.path.insert(0, str(tmp_path))
    benchmarks._plugins = None
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("toy_bench", None)
        benchmarks._plugins = None


def test_plugin_is_registered_after_the_built_ins(plugin_path: Path) -> None:
    assert benchmarks.names()[-1] == "toy"
    assert list(benchmarks.REGISTRY) == benchmarks.names()[:-1]
    assert benchmarks.plugins() == {"toy": ("toy_bench:Toy", "toy-bench")}
    assert benchmarks.get("TOY").name == "toy"


def test_python_api_scores_a_plugin(plugin_path: Path) -> None:
    import hopscore

    report = hopscore.score("toy", plugin_path / "gold.json", plugin_path / "pred.jsonl")
    assert report.metrics["em"] == 0.5


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "hopscore", *args], env=env, cwd=root,
                          capture_output=True, text=True, timeout=120)


def test_cli_scores_a_plugin(tmp_path: Path) -> None:
    _write_plugin(tmp_path)
    done = _cli(tmp_path, "score", "toy", "-g", "gold.json", "-p", "pred.jsonl", "-o", "out")
    assert done.returncode == 0, done.stderr
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["metrics"]["em"] == 0.5


def test_a_broken_plugin_is_a_user_error_naming_it(tmp_path: Path) -> None:
    _write_plugin(tmp_path, entry="toy = toy_missing_module:Toy")
    done = _cli(tmp_path, "score", "toy", "-g", "gold.json", "-p", "pred.jsonl")
    assert done.returncode == 2, done.stderr
    assert "toy-bench" in done.stderr and "toy_missing_module" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_plugin_may_not_shadow_a_built_in(tmp_path: Path) -> None:
    _write_plugin(tmp_path, entry="hotpotqa = toy_bench:Toy")
    sys.path.insert(0, str(tmp_path))
    benchmarks._plugins = None
    try:
        with pytest.raises(HopscoreError, match="built-in benchmark"):
            benchmarks.names()
    finally:
        sys.path.remove(str(tmp_path))
        benchmarks._plugins = None


def test_a_plugin_ships_its_own_template_and_shots(plugin_path: Path) -> None:
    from hopscore.run.prompts import PromptTemplate, builtin_template_name, load_shots

    package = plugin_path / "toy_bench"
    (package / "template.jinja").write_text(
        '{% import "builtin/_common.jinja" as common %}Toy question: {{ question }}\n')
    (package / "shots.json").write_text(json.dumps(
        {"default": [{"question": "Q?", "reasoning": "R.", "answer": "A"}], "mcr": []}))
    template = PromptTemplate.builtin(builtin_template_name("toy", "default"))
    assert template.render({"question": "Where?"}) == [
        {"role": "user", "content": "Toy question: Where?"}]
    assert set(template.sources) == {"builtin/toy.jinja", "builtin/_common.jinja"}
    assert load_shots("toy", "default", 1)[0]["answer"] == "A"
    with pytest.raises(HopscoreError, match="toy has 0 built-in exemplars for the mcr protocol"):
        load_shots("toy", "mcr", 1)
