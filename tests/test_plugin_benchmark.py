"""A third-party benchmark found through the ``hopscore.benchmarks`` entry point group.

The toy package is written into a temporary directory with a ``toy_bench-0.1.dist-info`` beside
it, so ``importlib.metadata`` finds its entry point without pip: in-process through
``sys.path``, in a subprocess through ``PYTHONPATH``. It ships what a run needs inside the
package (``template.jinja``, ``shots.json``, ``samples/``, ``categories.py``), and nothing in
hopscore names it: score, run (against the stand-in server), ``--strategy sc``, analyze,
report, export, shard + merge, the Python API and the inspect task all work on it.

docs/writing-a-benchmark.md walks through this same package.
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
from hopscore.errors import HopscoreError
from tests.conftest import SRC, CliResult, run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.chain_script import chain_reply, parse_call
from tests.scale.helpers import jsonl, load, same_bytes, same_json, same_rows

TOY_MODULE = '''
"""Toy: short factual questions, scored by exact match after lower-casing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from hopscore.benchmarks.base import (
    Benchmark, Example, ModelAnswer, Prediction, Predictions, PromptInputs, check_unique_ids,
    load_universal,
)
from hopscore.errors import InputError
from hopscore.files.atomic import write_jsonl_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json


@dataclass(frozen=True, slots=True, kw_only=True)
class ToyExample(Example):
    answer: str
    kind: str

    def groups(self) -> dict[str, str]:
        return {"kind": self.kind}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)


class Toy(Benchmark[ToyExample, Prediction]):
    name = "toy"
    title = "Toy"
    metrics: ClassVar[tuple[str, ...]] = ("em",)
    group_keys: ClassVar[tuple[str, ...]] = ("kind",)
    gold_formats = "JSON list of {id, question, answer, kind}"
    prediction_formats = "universal JSONL"
    predictions_file = "predictions.jsonl"
    mcr_evaluator = "em"  # the question alone suffices: the chain strategies may ask it
    error_categories = "toy_bench.categories"

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[ToyExample]:
        rows = load_json(path)
        if not isinstance(rows, list):
            raise InputError(path, f"expected a JSON list of questions, got {json_type(rows)}")
        examples = []
        for index, item in enumerate(rows):
            record = Fields.at_index(item, str(path), index)
            examples.append(ToyExample(id=record.id("id"), question=record.str("question"),
                                       answer=record.str("answer"), kind=record.str("kind")))
        return check_unique_ids(examples, path)

    def load_predictions(self, path: Path) -> Predictions[Prediction]:
        by_id = load_universal(path, lambda f, i: Prediction(id=i, answer=f.str("answer")))
        return Predictions(by_id=by_id, source=str(path), format="universal")

    def score(self, example: ToyExample, prediction: Prediction | None) -> dict[str, float]:
        said = (prediction.answer or "") if prediction is not None else ""
        return {"em": float(said.strip().lower() == example.answer.lower())}

    def prompt_variables(self, example: ToyExample, inputs: PromptInputs) -> dict[str, Any]:
        return {"question": example.question, "mcr_question": example.question}

    def make_prediction(self, example: ToyExample, answer: ModelAnswer) -> Prediction:
        return Prediction(id=example.id, answer=answer.text or "")

    def write_predictions(self, predictions: Sequence[Prediction], path: Path) -> None:
        write_jsonl_atomic(path, ({"id": p.id, "answer": p.answer or ""} for p in predictions))
'''

TOY_TEMPLATE = """\
[[system]]
You answer short factual questions. Finish with one line:
{{ answer_marker }} the answer alone
[[user]]
{% for shot in shots %}
Question: {{ shot.question }}
{{ shot.reasoning }}
{{ answer_marker }} {{ shot.answer }}

{% endfor %}
Question: {{ question }}
"""

TOY_CATEGORIES = '''
"""Toy's error categories: right, or wrong by the kind of question."""

from __future__ import annotations

from hopscore.benchmarks.error_categories import NO_PREDICTION, Dimension, Inputs, Sample


def _kind(sample: Sample) -> str | None:
    if sample.missing:
        return NO_PREDICTION
    return "right" if sample.metrics.get("em") == 1.0 else f"wrong {sample.groups['kind']}"


def dimensions(inputs: Inputs) -> list[Dimension]:
    return [Dimension("toy outcome", "Right, or wrong by the kind of question.", _kind)]
'''

GOLD = [
    {"id": "a", "question": "Capital of France?", "answer": "Paris", "kind": "city"},
    {"id": "b", "question": "Capital of Italy?", "answer": "Rome", "kind": "city"},
    {"id": "c", "question": "Largest planet?", "answer": "Jupiter", "kind": "planet"},
    {"id": "d", "question": "Red planet?", "answer": "Mars", "kind": "planet"},
]
#: what the stand-in model answers: all right but "b"
MODEL_ANSWERS = {"Capital of France?": "Paris", "Capital of Italy?": "Milan",
                 "Largest planet?": "Jupiter", "Red planet?": "Mars"}
SHOT = {"question": "Capital of Spain?", "reasoning": "Spain's capital is Madrid.",
        "answer": "Madrid"}
#: predictions of a system: a and c right, b wrong, d missing -> em 0.5
PREDICTIONS = ('{"id": "a", "answer": "paris"}\n{"id": "b", "answer": "Milan"}\n'
               '{"id": "c", "answer": "Jupiter"}\n')
MODEL = "openai/test-model"


def _write_plugin(root: Path, entry: str = "toy = toy_bench:Toy") -> None:
    package = root / "toy_bench"
    (package / "samples").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(textwrap.dedent(TOY_MODULE))
    (package / "template.jinja").write_text(TOY_TEMPLATE)
    (package / "shots.json").write_text(json.dumps({"default": [SHOT]}))
    (package / "categories.py").write_text(textwrap.dedent(TOY_CATEGORIES))
    (package / "samples" / "gold.json").write_text(json.dumps(GOLD))
    (package / "samples" / "predictions.jsonl").write_text(PREDICTIONS)
    (package / "samples" / "manifest.json").write_text(json.dumps(
        {"gold": "gold.json", "predictions": "predictions.jsonl", "aliases": None,
         "note": "four invented questions"}))
    info = root / "toy_bench-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-bench\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[hopscore.benchmarks]\n{entry}\n")
    (root / "gold.json").write_text(json.dumps(GOLD))
    (root / "pred.jsonl").write_text(PREDICTIONS)


def _env(root: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), str(SRC),
                                                        os.environ.get("PYTHONPATH")]))}


def _cli(root: Path, *args: str | Path) -> CliResult:
    return run_cli(*args, cwd=root, env=_env(root), timeout=120)


def _ok(root: Path, *args: str | Path) -> CliResult:
    done = _cli(root, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _answer(body: dict[str, Any], attempt: int) -> Reply:
    """The stand-in model: a cot prompt gets "Answer: X", a self-ask chain its final answer."""
    call = parse_call(body)
    if call.kind == "chain":
        return Reply(chain_reply(([], MODEL_ANSWERS[call.question]), call.follow_ups))
    question = [line for line in call.block.splitlines() if line.startswith("Question: ")][-1]
    return Reply(f"Let me think.\nAnswer: {MODEL_ANSWERS[question[len('Question: '):]]}")


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The toy package, importable in this process and in the subprocesses (cwd)."""
    root = tmp_path_factory.mktemp("plugin")
    _write_plugin(root)
    sys.path.insert(0, str(root))
    benchmarks._plugins = None
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n == "toy_bench" or n.startswith("toy_bench.")]:
            del sys.modules[name]
        benchmarks._plugins = None


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(body_responder=_answer) as running:
        yield running


def _run_args(server: FakeOpenAI, out: str, *extra: str) -> list[str]:
    return ["run", "toy", "--gold", "gold.json", "--model", MODEL, "--base-url", server.base_url,
            "-o", out, "--no-cache", "--no-progress", "--resamples", "50", *extra]


#: the template the package ships, named as a user would name a file of their own
PACKAGED_TEMPLATE = ("--prompt-template", "toy_bench/template.jinja")


@pytest.fixture(scope="module")
def runs(toy: Path, server: FakeOpenAI) -> Path:
    """``runs/whole``; ``runs/shard0`` and ``runs/shard1`` (``--shard I/2``, run at once, as a
    scheduler starts them) merged into ``runs/merged``; ``scored``: ``hopscore score``."""
    _ok(toy, *_run_args(server, "runs/whole", *PACKAGED_TEMPLATE))
    procs = [subprocess.Popen(
        [sys.executable, "-m", "hopscore",
         *_run_args(server, f"runs/shard{i}", *PACKAGED_TEMPLATE, "--shard", f"{i}/2")],
        cwd=toy, env={**os.environ, "NO_PROXY": "127.0.0.1,localhost", **_env(toy)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-3000:]
    merged = _ok(toy, "merge", "runs/shard0", "runs/shard1", "-o", "runs/merged")
    assert "merged 2 shards" in merged.stderr
    _ok(toy, "score", "toy", "-g", "gold.json", "-p", "pred.jsonl", "-o", "scored")
    return toy


# --- found, and scored --------------------------------------------------------------------------


def test_plugin_is_registered_after_the_built_ins(toy: Path) -> None:
    assert benchmarks.names()[-1] == "toy"
    assert list(benchmarks.REGISTRY) == benchmarks.names()[:-1]
    assert benchmarks.plugins() == {"toy": ("toy_bench:Toy", "toy-bench")}
    assert benchmarks.get("TOY").name == "toy"


def test_cli_scores_a_plugin(runs: Path) -> None:
    metrics = load(runs / "scored" / "metrics.json")
    assert metrics["metrics"]["em"] == 0.5
    assert metrics["missing_ids"] == ["d"]
    assert {name: group["metrics"]["em"] for name, group in metrics["groups"].items()} == \
        {"city": 0.5, "planet": 0.5}


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


# --- run, shard + merge ---------------------------------------------------------------------------


def test_a_run_uses_the_template_the_package_ships(runs: Path) -> None:
    whole = runs / "runs" / "whole"
    metrics = load(whole / "metrics.json")
    assert metrics["metrics"]["em"] == 0.75 and metrics["missing_ids"] == []
    rows = jsonl(whole / "samples.jsonl")
    assert [row["answer"] for row in rows] == ["Paris", "Milan", "Jupiter", "Mars"]
    assert rows[0]["prompt"] == [
        {"role": "system", "content": "You answer short factual questions. Finish with one "
                                      "line:\nAnswer: the answer alone"},
        {"role": "user", "content": "Question: Capital of France?"}]
    # the predictions file is the benchmark's own format and scores as the run did
    assert jsonl(whole / "predictions.jsonl")[1] == {"id": "b", "answer": "Milan"}
    again = _ok(runs, "score", "toy", "-g", "gold.json", "-p", whole / "predictions.jsonl",
                "-o", "rescored")
    assert again.returncode == 0
    same_bytes(whole / "scores.jsonl", runs / "rescored" / "scores.jsonl")


def test_shards_merge_into_the_unsharded_run(runs: Path) -> None:
    whole, merged = runs / "runs" / "whole", runs / "runs" / "merged"
    per_shard = [[row["id"] for row in jsonl(runs / "runs" / f"shard{i}" / "samples.jsonl")]
                 for i in range(2)]
    assert sorted(per_shard[0] + per_shard[1]) == ["a", "b", "c", "d"]
    assert all(per_shard)  # both shards had work
    same_rows(whole / "samples.jsonl", merged / "samples.jsonl")
    same_bytes(whole / "predictions.jsonl", merged / "predictions.jsonl")
    same_bytes(whole / "scores.jsonl", merged / "scores.jsonl")
    same_json(whole / "metrics.json", merged / "metrics.json")


def test_a_run_finds_the_template_and_shots_in_the_package(runs: Path,
                                                            server: FakeOpenAI) -> None:
    _ok(runs, *_run_args(server, "runs/shots", "--shots", "1"))
    rows = jsonl(runs / "runs" / "shots" / "samples.jsonl")
    assert rows[0]["prompt"][1]["content"] == (
        "Question: Capital of Spain?\nSpain's capital is Madrid.\nAnswer: Madrid\n\n"
        "Question: Capital of France?")
    assert load(runs / "runs" / "shots" / "metrics.json")["metrics"]["em"] == 0.75


def test_the_sc_strategy_runs_on_a_plugin(runs: Path, server: FakeOpenAI) -> None:
    _ok(runs, *_run_args(server, "runs/sc", "--strategy", "sc", "--chains", "3"))
    metrics = load(runs / "runs" / "sc" / "metrics.json")
    assert metrics["metrics"]["em"] == 0.75
    assert metrics["methods"]["methods"]["sc"]["score_all"] == pytest.approx(0.75)


# --- analyze, report, export ----------------------------------------------------------------------


def test_analyze_a_plugin_run(runs: Path) -> None:
    _ok(runs, "analyze", "runs/whole", "--gold", "gold.json", "-o", "analysis.json")
    analysis = load(runs / "analysis.json")
    (extraction,) = [d for d in analysis["dimensions"] if d["name"] == "answer extraction"]
    assert {c["name"]: c["count"] for c in extraction["categories"]} == \
        {"strict extraction ok": 4}


def test_analyze_uses_the_categories_the_package_ships(runs: Path) -> None:
    _ok(runs, "analyze", "scored", "--gold", "gold.json", "-o", "categories.json")
    (toy,) = [d for d in load(runs / "categories.json")["dimensions"]
              if d["name"] == "toy outcome"]
    assert {c["name"]: c["count"] for c in toy["categories"]} == \
        {"right": 2, "wrong city": 1, "no prediction": 1}


def test_report_on_plugin_runs(runs: Path) -> None:
    done = _ok(runs, "report", "runs/whole", "scored", "--gold", "gold.json", "-o",
               "report.html", "--resamples", "100")
    assert "wrote report.html" in done.stderr
    page = (runs / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "Capital of Italy?" in page and "Milan" in page


def test_export_plugin_runs(runs: Path) -> None:
    _ok(runs, "export", "runs/whole", "scored", "-o", "table.jsonl")
    rows = jsonl(runs / "table.jsonl")
    assert {row["benchmark"] for row in rows} == {"toy"}
    assert [(row["run"], row["id"], row["value"], row["group_kind"]) for row in rows] == [
        ("whole", "a", 1.0, "city"), ("whole", "b", 0.0, "city"),
        ("whole", "c", 1.0, "planet"), ("whole", "d", 1.0, "planet"),
        ("scored", "a", 1.0, "city"), ("scored", "b", 0.0, "city"),
        ("scored", "c", 1.0, "planet"), ("scored", "d", 0.0, "planet")]


# --- the Python API ---------------------------------------------------------------------------


def test_python_api_on_a_plugin(runs: Path, server: FakeOpenAI) -> None:
    import hopscore

    report = hopscore.score("toy", runs / "gold.json", runs / "pred.jsonl")
    assert report.metrics["em"] == 0.5
    assert [e.answer for e in hopscore.load_gold("toy", runs / "gold.json")] == \
        ["Paris", "Rome", "Jupiter", "Mars"]
    assert sorted(hopscore.load_predictions("toy", runs / "pred.jsonl").by_id) == ["a", "b", "c"]
    out = runs / "api-run"
    ran = hopscore.run_benchmark("toy", runs / "gold.json", model=MODEL,
                                 base_url=server.base_url, output_dir=out, no_cache=True,
                                 prompt_template=runs / "toy_bench" / "template.jinja",
                                 progress=False, resamples=50)
    assert ran.metrics == {"em": 0.75}
    assert hopscore.read_report(out).metrics == {"em": 0.75}
    comparison = hopscore.compare(out, runs / "scored")
    (em,) = comparison.metrics
    assert (em.metric, em.n, em.a, em.b) == ("em", 4, 0.75, 0.5)
    analysis = hopscore.analyze(out, gold=runs / "gold.json")
    assert "answer extraction" in [d.name for d in analysis.dimensions]
    page = hopscore.write_report(out, output=runs / "api-report.html")
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_python_api_finds_the_sample_the_package_ships(toy: Path) -> None:
    import hopscore

    files = hopscore.sample_files("toy")
    assert files.gold.parent == toy / "toy_bench" / "samples"
    assert hopscore.score("toy", files.gold, files.predictions).metrics["em"] == 0.5


# --- the inspect task -----------------------------------------------------------------------------


def test_inspect_task_on_a_plugin_and_its_log_rescores(runs: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from hopscore.integrations.inspect import build_task

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        last = [line for line in messages[-1].text.splitlines() if line.startswith("Question: ")]
        output = ModelOutput.from_content(
            model="mockllm", content=f"Answer: {MODEL_ANSWERS[last[-1][len('Question: '):]]}")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    task = build_task("toy", gold=str(runs / "gold.json"),
                      template=str(runs / "toy_bench" / "template.jinja"))
    (result,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=reply),
                             log_dir=str(runs / "inspect-logs"), display="none")
    assert result.status == "success", result.error
    assert result.results is not None
    (scores,) = result.results.scores
    assert {name: m.value for name, m in scores.metrics.items()} == \
        {"em": 0.75, "city_em": 0.5, "planet_em": 1.0}
    (log,) = sorted((runs / "inspect-logs").iterdir())
    _ok(runs, "score", "toy", "-g", "gold.json", "-p", log, "--from", "inspect", "-o",
        "from-inspect")
    same_bytes(runs / "runs" / "whole" / "scores.jsonl", runs / "from-inspect" / "scores.jsonl")


def test_inspect_eval_finds_the_plugin_task(runs: Path) -> None:
    pytest.importorskip("inspect_ai")
    inspect = Path(sys.executable).with_name("inspect")
    stub = Path(__file__).parent / "harness" / "offline_tiktoken"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(stub), _env(runs)["PYTHONPATH"]]),
           "INSPECT_LOG_DIR": str(runs / "inspect-cli")}
    proc = subprocess.run([str(inspect), "eval", "hopscore/toy", "-T", "gold=gold.json",
                           "--model", "mockllm/model", "--log-dir", str(runs / "inspect-cli"),
                           "--display", "plain"], capture_output=True, text=True, env=env,
                          cwd=runs, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (log,) = sorted((runs / "inspect-cli").iterdir())
    _ok(runs, "score", "toy", "-g", "gold.json", "-p", log, "--from", "inspect", "-o",
        "from-inspect-cli")


# --- the docs page ------------------------------------------------------------------------------


def test_the_docs_page_shows_this_package() -> None:
    from tests.docs_runner import REPO, blocks

    page = list(blocks(REPO / "docs" / "writing-a-benchmark.md"))
    shown = {b.language: b.text.strip() for b in reversed(page)}  # the first of each language
    assert shown["python"] == textwrap.dedent(TOY_MODULE).strip()
    assert shown["jinja"] == TOY_TEMPLATE.strip()
    assert [b.text.strip() for b in page if b.language == "python"][1] == \
        textwrap.dedent(TOY_CATEGORIES).strip()
    assert json.loads(shown["json"]) == {"default": [SHOT]}
