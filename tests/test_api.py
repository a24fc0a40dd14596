"""The Python API: its names stay, its docstring examples run, it agrees with the command line,
and ``import hopscore`` stays light."""

from __future__ import annotations

import doctest
import json
import pydoc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import hopscore
from hopscore import benchmarks, metrics
from hopscore.benchmarks import sample_files
from tests.conftest import SRC, run_cli
from tests.openai_server import FakeOpenAI
from tests.stub_models import judge_responder

#: The public API. A name that disappears from here breaks users' code: removing one is a
#: deliberate, documented change (docs/python-api.md), never a side effect.
PUBLIC = {
    "__version__", "score", "load_gold", "load_predictions", "benchmark_names",
    "sample_files", "SampleFiles", "judge", "judge_rows", "sql_match", "compare",
    "ScoreReport", "GroupSummary", "ExampleScore", "Predictions", "Example", "Prediction",
    "PairComparison", "HopscoreError", "InputError", "metrics", "run_benchmark", "judge_file",
    "analyze", "write_report", "read_report",
}  # fmt: skip
METRICS = {
    "hotpotqa_answer", "hotpotqa_supporting_facts", "twowiki_answer", "hybridqa_answer",
    "bamboogle_answer", "fermi_answer", "quartz_answer", "strategyqa_answer", "feverous_claim",
}  # fmt: skip
DOCUMENTED_MODULES = ("hopscore", "hopscore.api", "hopscore.api_grading", "hopscore.api_commands",
                      "hopscore.metrics")
#: the benchmark whose bundled sample the docstring examples read as ``SAMPLE`` (their outputs
#: are its sample's: five questions, scored by exact match and F1)
SAMPLE = "bamboogle"


def test_no_public_name_disappears() -> None:
    assert set(hopscore.__all__) >= PUBLIC
    assert set(metrics.__all__) >= METRICS
    for name in hopscore.__all__:
        assert getattr(hopscore, name) is not None, name
    for name in metrics.__all__:
        assert callable(getattr(metrics, name)), name


def test_the_api_page_lists_every_public_name() -> None:
    page = (SRC.parent / "docs" / "python-api.md").read_text(encoding="utf-8")
    for name in sorted(PUBLIC - {"__version__"}) + sorted(METRICS):
        assert f"`{name}" in page, f"docs/python-api.md does not list {name}"


def test_help_shows_the_api() -> None:
    text = pydoc.render_doc(hopscore, renderer=pydoc.plaintext)
    for name in ("score", "load_gold", "load_predictions", "judge", "judge_rows", "sql_match",
                 "compare", "ScoreReport", "metrics"):
        assert name in text
    assert "score(benchmark, gold, predictions" in text  # the signature, from the function


def test_help_of_hopscore_runs_in_a_fresh_interpreter() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import hopscore; help(hopscore)"], capture_output=True,
        text=True, env={"PYTHONPATH": str(SRC), "PAGER": "cat", "TERM": "dumb"}, check=True)
    assert "judge_rows(" in proc.stdout and "Python API" in proc.stdout


def test_import_hopscore_loads_nothing_else() -> None:
    code = ("import sys, json, hopscore\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hopscore')"
            " or m.split('.')[0] in ('numpy', 'rich', 'typer', 'openai', 'msgspec'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC)}, check=True)
    assert json.loads(proc.stdout) == ["hopscore", "hopscore.version"]


@pytest.fixture(scope="module")
def judge_url() -> Iterator[str]:
    with FakeOpenAI(judge_responder) as server:
        yield server.base_url


@pytest.mark.parametrize("module", DOCUMENTED_MODULES)
def test_docstring_examples_run(module: str, judge_url: str, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    target = sys.modules.get(module) or __import__(module, fromlist=["_"])
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    monkeypatch.chdir(tmp_path)
    tests = finder.find(target, module, globs={"JUDGE_URL": judge_url, "MODEL_URL": judge_url,
                                               "SAMPLE": sample_files.require(SAMPLE).benchmark,
                                               **vars(target)})
    assert sum(len(t.examples) for t in tests) > 0
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} doctest failures in {module} (see stdout)"


def test_every_api_function_has_an_example() -> None:
    from hopscore import api, api_commands, api_grading

    for name in [*api.__all__, *api_grading.__all__, *api_commands.__all__]:
        value = getattr(hopscore, name)
        if callable(value) and not isinstance(value, type):
            assert ">>>" in (value.__doc__ or ""), f"hopscore.{name} has no example"
    for name in metrics.__all__:
        assert ">>>" in (getattr(metrics, name).__doc__ or ""), f"metrics.{name} has no example"


@pytest.mark.parametrize("sample", sample_files.samples(), ids=lambda s: s.benchmark)
def test_score_equals_the_command_line(sample: sample_files.BundledSample, tmp_path: Path) -> None:
    files = hopscore.sample_files(sample.benchmark)
    report = hopscore.score(sample.benchmark, files.gold, files.predictions,
                            aliases=files.aliases, output_dir=tmp_path / "api")
    args = ["score", sample.benchmark, "-g", files.gold, "-p", files.predictions,
            "-o", tmp_path / "cli"]
    if files.aliases:
        args += ["--aliases", files.aliases]
    assert run_cli(*args).returncode == 0
    written = json.loads((tmp_path / "cli" / "metrics.json").read_text(encoding="utf-8"))
    assert report.to_json() == written
    assert (tmp_path / "api" / "scores.jsonl").read_text(encoding="utf-8") == \
        (tmp_path / "cli" / "scores.jsonl").read_text(encoding="utf-8")


def _per_example(benchmark: str, example: object, prediction: object) -> dict[str, float]:
    """The metrics module's scores of one (example, prediction) pair, from plain values."""
    answer = getattr(prediction, "answer", None) or ""
    if benchmark == "hotpotqa":
        out = metrics.hotpotqa_answer(answer, example.answer)  # type: ignore[attr-defined]
        if getattr(prediction, "sp", None) is not None:
            out |= metrics.hotpotqa_supporting_facts(
                prediction.sp, example.supporting_facts)  # type: ignore[attr-defined]
        return out
    if benchmark == "2wikimultihopqa":
        return metrics.twowiki_answer(answer, example.answer,  # type: ignore[attr-defined]
                                      example.answers[1:])  # type: ignore[attr-defined]
    if benchmark == "hybridqa":
        return metrics.hybridqa_answer(answer, example.answer)  # type: ignore[attr-defined]
    if benchmark == "bamboogle":
        return metrics.bamboogle_answer(answer, example.answer)  # type: ignore[attr-defined]
    if benchmark == "fermi":
        return metrics.fermi_answer(answer, example.answer)  # type: ignore[attr-defined]
    if benchmark == "quartz":
        label = getattr(prediction, "label", None)
        return metrics.quartz_answer(label or answer, example.choices,  # type: ignore[attr-defined]
                                     example.answer_key)  # type: ignore[attr-defined]
    if benchmark == "strategyqa":
        value = getattr(prediction, "value", None)
        if not isinstance(value, bool):
            return {"accuracy": 0.0}
        return metrics.strategyqa_answer(value, example.answer)  # type: ignore[attr-defined]
    if benchmark == "feverous":
        return metrics.feverous_claim(
            answer, ["_".join(e) for e in prediction.evidence],  # type: ignore[attr-defined]
            example.label,  # type: ignore[attr-defined]
            [["_".join(e) for e in group] for group in example.evidence])  # type: ignore[attr-defined]
    if benchmark == "musique":
        line = prediction.lines[0]  # type: ignore[attr-defined]
        return (metrics.musique_answer(line.answer, example.answer,  # type: ignore[attr-defined]
                                       example.aliases)  # type: ignore[attr-defined]
                | metrics.musique_support(line.support, example.support))  # type: ignore[attr-defined]
    raise AssertionError(benchmark)


@pytest.mark.parametrize("sample", sample_files.samples(), ids=lambda s: s.benchmark)
def test_metrics_functions_equal_the_scorer(sample: sample_files.BundledSample) -> None:
    """Each per-example function gives the benchmark scorer's own values on every bundled
    example that has a prediction."""
    bench = benchmarks.get(sample.benchmark)
    files = hopscore.sample_files(sample.benchmark)
    examples = bench.load_gold(files.gold, aliases=files.aliases)
    predictions = bench.load_predictions(files.predictions)
    compared = 0
    for index, example in enumerate(examples):
        key = str(index) if predictions.by_position else example.id
        prediction = predictions.by_id.get(key)
        if prediction is None:
            continue
        expected = bench.score(example, prediction)
        got = _per_example(sample.benchmark, example, prediction)
        assert got == {name: expected[name] for name in got}, example.id
        compared += 1
    assert compared > 0


def test_in_memory_predictions_name_their_record() -> None:
    files = hopscore.sample_files("hotpotqa")
    with pytest.raises(hopscore.InputError) as error:
        hopscore.score("hotpotqa", files.gold, [{"id": "a", "answer": "x"},
                                                 {"id": "b", "answer": ["not", "text"]}])
    message = str(error.value)
    assert message.startswith("predictions[1]: field 'answer'"), message
    assert "/tmp" not in message


def test_in_memory_predictions_score_as_the_file(tmp_path: Path) -> None:
    files = hopscore.sample_files("hotpotqa")
    gold = json.loads(files.gold.read_text(encoding="utf-8"))
    answers = {record["_id"]: record["answer"] for record in gold[:3]}
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": k, "answer": v}) + "\n"
                            for k, v in answers.items()), encoding="utf-8")
    from_memory = hopscore.score("hotpotqa", files.gold, answers, resamples=0)
    from_file = hopscore.score("hotpotqa", files.gold, path, resamples=0)
    assert from_memory.metrics == from_file.metrics
    assert from_memory.missing_ids == from_file.missing_ids == [r["_id"] for r in gold[3:]]


def test_judge_rows_in_a_running_event_loop(judge_url: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook cell runs inside an event loop: the API still works there."""
    import asyncio

    monkeypatch.setenv("HOPSCORE_CACHE_DIR", str(tmp_path))

    async def cell() -> list[dict[str, object]]:
        return hopscore.judge_rows(
            [{"question": "q", "response": "Paris", "correct_answer": "Paris"}],
            model="judge", base_url=judge_url)

    assert [row["correct"] for row in asyncio.run(cell())] == [True]


def test_judge_rows_reports_bad_rows_by_index() -> None:
    with pytest.raises(hopscore.HopscoreError, match=r"rows: record \[1\]: field 'question'"):
        hopscore.judge_rows([{"question": "q", "response": "a", "correct_answer": "a"},
                             {"question": ["x"], "response": "a", "correct_answer": "a"}],
                            model="judge", base_url="http://127.0.0.1:9/v1")


def test_the_version_loads_neither_the_api_nor_the_help() -> None:
    """``hopscore --version`` stays fast: no command module, no API, no help renderer."""
    code = ("import sys, json, contextlib, io\n"
            "from hopscore.launch import main\n"
            "try:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        main(['--version'])\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('hopscore'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(SRC)}, check=True)
    loaded = set(json.loads(proc.stdout))
    assert loaded.isdisjoint({"hopscore.api", "hopscore.api_grading", "hopscore.cli.help",
                              "hopscore.scores.display", "hopscore.scores.scoring",
                              "hopscore.cli.score"}), loaded


def test_reports_carry_their_examples_and_compare_like_their_directories(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = hopscore.sample_files("hotpotqa")
    report = hopscore.score("hotpotqa", files.gold, files.predictions,
                            output_dir=tmp_path / "a", resamples=0)
    written = [json.loads(line) for line in (tmp_path / "a" / "scores.jsonl").read_text()
               .splitlines()]
    assert [e.to_json() for e in report.examples] == written
    back = hopscore.read_report(tmp_path / "a")
    assert back.metrics == report.metrics and back.examples == report.examples
    other = hopscore.score("hotpotqa", files.gold, {"x": "y"}, resamples=0)
    from_reports = hopscore.compare(report, other, resamples=200)
    from_paths = hopscore.compare(tmp_path / "a", run_score_dir(tmp_path / "b", files),
                                  resamples=200)
    assert [r.to_json() for r in from_reports.metrics] == [r.to_json()
                                                           for r in from_paths.metrics]
    table = report.to_pandas()
    assert list(table["id"]) == [e.id for e in report.examples]
    assert list(table["type"]) == [e.groups["type"] for e in report.examples]
    assert table["em"].mean() == pytest.approx(report.metrics["em"])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(hopscore.HopscoreError, match="pip install pandas"):
        report.to_pandas()
    with pytest.raises(hopscore.HopscoreError, match="no per-example scores"):
        hopscore.compare(hopscore.ScoreReport.from_json(report.to_json()), report)


def run_score_dir(out: Path, files: hopscore.SampleFiles) -> Path:
    result = run_cli("score", "hotpotqa", "-g", files.gold, "-p", _empty(out.parent), "-o", out,
                     "--resamples", "0")
    assert result.returncode in (0, 1), result.stderr
    return out


def _empty(folder: Path) -> Path:
    path = folder / "empty.json"
    path.write_text('{"answer": {"x": "y"}, "sp": {}}')
    return path
