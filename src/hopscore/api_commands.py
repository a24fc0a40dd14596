"""The commands that run models, analyse and report, from Python: :func:`run_benchmark`,
:func:`judge_file`, :func:`analyze` and :func:`write_report` take the options of ``hopscore run``,
``judge``, ``analyze`` and ``report`` as keyword arguments, by their Python names
(``--max-tokens 64`` is ``max_tokens=64``), and return what the command wrote, read back.
Re-exported by ``hopscore`` (docs/python-api.md). (``hopscore.run`` and ``hopscore.report`` are
the packages of those commands, hence the longer names.)

:func:`run_benchmark`, :func:`judge_file` and :func:`write_report` run the command itself in
this process (its checks, resume and files are the command's), with its tables on stdout left
out; progress and warnings still go to stderr.

The examples read a benchmark's bundled sample, ``SAMPLE`` (the tests name one whose sample has
five questions; docs/python-api.md shows the same calls on named benchmarks).
"""

from __future__ import annotations

import importlib
import inspect
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hopscore.errors import HopscoreError
from hopscore.scores.results import ExampleScore, ScoreReport

if TYPE_CHECKING:
    from hopscore.analysis.error_analysis import ErrorAnalysis

__all__ = ["analyze", "judge_file", "read_report", "run_benchmark", "write_report"]

PathLike = str | os.PathLike[str]


def read_report(directory: PathLike) -> ScoreReport:
    """The :class:`ScoreReport` of a score or run directory (``metrics.json``), with each
    example's scores (``scores.jsonl``) in ``examples``.

    >>> import hopscore, tempfile
    >>> files, out = hopscore.sample_files(SAMPLE), tempfile.mkdtemp()
    >>> _ = hopscore.score(SAMPLE, files.gold, files.predictions, output_dir=out)
    >>> report = read_report(out)
    >>> report.metrics["em"], len(report.examples), report.examples[1].prediction
    (0.6, 5, 'the Tolle')
    """
    from hopscore.files.io import iter_jsonl, load_json

    folder = Path(directory)
    metrics = folder / "metrics.json"
    if not metrics.is_file():
        raise HopscoreError(f"{folder}: no metrics.json (not a score or run directory)")
    document = load_json(metrics)
    scores = folder / "scores.jsonl"
    examples = [ExampleScore.from_json(row) for _, row in iter_jsonl(scores)] \
        if scores.is_file() else []
    return ScoreReport.from_json(document, examples)


def run_benchmark(benchmark: str, gold: PathLike | None = None, *, model: str,
        output_dir: PathLike | None = None, **options: Any) -> ScoreReport:
    """Run a model on a benchmark and score it, as ``hopscore run`` does (every option of
    ``hopscore run --help`` by its Python name: ``limit=20``, ``max_tokens=64``,
    ``base_url=...``); an existing run directory is resumed. Returns the run's
    :class:`ScoreReport` (with ``examples``), read from ``output_dir`` (default
    ``runs/<benchmark>__<model>``).

    >>> import hopscore, tempfile
    >>> out = tempfile.mkdtemp() + "/run"
    >>> report = run_benchmark(SAMPLE, hopscore.sample_files(SAMPLE).gold,
    ...                        model="openai/test-model", base_url=MODEL_URL, output_dir=out,
    ...                        limit=2, progress=False)
    >>> report.n_gold, sorted(report.metrics)
    (2, ['em', 'f1'])

    (``MODEL_URL`` is an OpenAI-compatible endpoint; the tests run this example against a
    local one.)
    """
    if output_dir is None:
        from hopscore.run.settings import default_output_dir

        output_dir = default_output_dir(benchmark.lower(), model,
                                        options.get("protocol", "default"))
    _invoke("run", "run_command", {"benchmark": benchmark, "gold": gold, "model": model,
                                   "output_dir": output_dir, **options})
    return read_report(output_dir)


def judge_file(input_path: PathLike, output_path: PathLike, *, model: str,
               **options: Any) -> Path:
    """Grade a JSON Lines file of answers with an LLM judge, as ``hopscore judge -i INPUT
    -o OUTPUT`` does (its options by their Python names; an existing output is resumed).
    Returns the output path. For rows in memory, :func:`hopscore.judge_rows`.

    >>> import json, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(folder + "/answers.jsonl", "w") as rows:
    ...     _ = rows.write(json.dumps({"question": "Capital of France?", "response": "Paris",
    ...                                "correct_answer": "Paris"}) + "\\n")
    >>> out = judge_file(folder + "/answers.jsonl", folder + "/judged.jsonl", model="judge",
    ...                  base_url=JUDGE_URL, progress=False)
    >>> [json.loads(line)["correct"] for line in out.read_text().splitlines()]
    [True]
    """
    _invoke("judge", "judge", {"input_path": input_path, "output_path": output_path,
                               "model": model, **options})
    return Path(output_path)


def analyze(source: PathLike, *, gold: PathLike | None = None,
            tables: PathLike | None = None, judge: PathLike | None = None,
            examples: int = 3) -> ErrorAnalysis:
    """Error analysis of a score or run directory (or judge / sql-match output), as
    ``hopscore analyze``: ``dimensions`` (each with ``categories``: name, count, example
    ids), ``example(id)`` one example whole, ``to_json()`` what ``analyze -o`` writes.

    >>> import hopscore, tempfile
    >>> files, out = hopscore.sample_files(SAMPLE), tempfile.mkdtemp()
    >>> _ = hopscore.score(SAMPLE, files.gold, files.predictions, output_dir=out)
    >>> analysis = analyze(out)
    >>> [(c.name, c.count) for c in analysis.dimensions[0].categories]
    [('right', 3), ('partial', 1), ('wrong', 1)]
    >>> analysis.example("4")["categories"]
    {'outcome': 'wrong', 'wrong answer x gold answer': 'no word in common'}
    """
    from hopscore.analysis.error_analysis import analyze_source

    return analyze_source(Path(source), gold=_maybe(gold), tables=_maybe(tables),
                          judge=_maybe(judge), examples=examples, whole=True)


def write_report(*inputs: PathLike, output: PathLike = "report.html", **options: Any) -> Path:
    """Write the self-contained HTML report of score or run directories, as ``hopscore
    report`` does (its options by their Python names: ``gold=``, ``baseline=``,
    ``title=``); returns the HTML file's path.

    >>> import hopscore, tempfile
    >>> files, out = hopscore.sample_files(SAMPLE), tempfile.mkdtemp()
    >>> _ = hopscore.score(SAMPLE, files.gold, files.predictions, output_dir=out + "/a")
    >>> page = write_report(out + "/a", output=out + "/report.html", title="Sample")
    >>> page.read_text().startswith("<!DOCTYPE html>")
    True
    """
    if not inputs:
        raise HopscoreError("write_report() needs at least one score or run directory")
    _invoke("report", "report", {"inputs": list(inputs), "output": output, **options})
    return Path(output)


# --- the command, called in-process ------------------------------------------------------------


def _maybe(value: PathLike | None) -> Path | None:
    return None if value is None else Path(value)


def _as_annotated(value: Any, annotation: str) -> Any:
    if "Path" not in annotation or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [Path(v) for v in value]
    return Path(value) if isinstance(value, (str, os.PathLike)) else value


def _invoke(module: str, name: str, given: dict[str, Any]) -> None:
    """Call the command function ``name`` of ``hopscore.cli.<module>`` with ``given`` and the
    command's defaults for the rest, as the command line would (its outputs claimed, its
    stdout tables left out). Exit status 1 (finished, result incomplete) returns; the
    command's warnings on stderr say why."""
    import typer
    from typer.models import ArgumentInfo, OptionInfo

    from hopscore import cli
    from hopscore.files.outputs import command_scope

    function = getattr(importlib.import_module(f"hopscore.cli.{module}"), name)
    parameters = inspect.signature(function).parameters
    unknown = sorted(set(given) - set(parameters))
    if unknown:
        raise HopscoreError(f"not options of hopscore {module}: {', '.join(unknown)} (options: "
                            f"{', '.join(parameters)})")
    values: dict[str, Any] = {}
    for key, parameter in parameters.items():
        default = parameter.default
        if isinstance(default, (OptionInfo, ArgumentInfo)):
            default = default.default
        if "Context" in str(parameter.annotation):  # typer's; None: every option as given
            values[key] = None
            continue
        value = given.get(key, default)
        if value is ... or value is inspect.Parameter.empty:
            raise HopscoreError(f"hopscore {module} needs {key}=")
        values[key] = _as_annotated(value, str(parameter.annotation))
    quiet = cli.console.quiet
    cli.console.quiet = True
    try:
        with command_scope():
            function(**values)
    except typer.Exit as exit_:  # what the commands raise (click's own Exit before typer 0.2x)
        if exit_.exit_code not in (0, 1):
            raise
    finally:
        cli.console.quiet = quiet
