"""hopscore: evaluation harness for multi-hop question answering over text, tables and SQL.

Scores predictions with the exact semantics of each benchmark's official scorer, grades
answers by LLM judge and by SQL execution match, and compares systems with paired intervals.
The command line is ``hopscore --help``; the Python API is below (docs/python-api.md).

Scoring files
    score(benchmark, gold, predictions, **options) -> ScoreReport
    load_gold(benchmark, gold) -> list of typed examples
    load_predictions(benchmark, predictions) -> Predictions
    benchmark_names() -> the benchmark names;  sample_files(benchmark) -> bundled files

One example at a time (plain strings, no files)
    hopscore.metrics: hotpotqa_answer, twowiki_answer, hybridqa_answer, bamboogle_answer,
    fermi_answer, quartz_answer, strategyqa_answer, feverous_claim, ...

Grading and comparing
    judge(question, response, correct_answer, model=...) -> one judged row
    judge_rows(rows, model=...) -> judged rows;  sql_match(records) -> verdicts
    compare(a, b) -> PairComparison (paired intervals, McNemar, flips); a, b: reports or dirs

Running, analysing, reporting (the commands' options as keyword arguments)
    run_benchmark(benchmark, gold, model=..., **options) -> ScoreReport;  judge_file(...)
    analyze(source) -> ErrorAnalysis (error categories);  write_report(*dirs, output=...) -> Path
    read_report(directory) -> ScoreReport;  report.examples, report.to_pandas()

>>> import hopscore
>>> hopscore.metrics.hotpotqa_answer("Paris", "paris")["em"]
1.0

The names are loaded on first use, so ``import hopscore`` stays light. Everything not listed
in ``__all__`` is internal and may change between versions.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hopscore.version import __version__ as __version__

#: public name -> the module that defines it (imported on first use)
_PUBLIC = {
    "score": "hopscore.api",
    "load_gold": "hopscore.api",
    "load_predictions": "hopscore.api",
    "benchmark_names": "hopscore.api",
    "sample_files": "hopscore.api",
    "SampleFiles": "hopscore.api",
    "judge": "hopscore.api_grading",
    "judge_rows": "hopscore.api_grading",
    "sql_match": "hopscore.api_grading",
    "compare": "hopscore.api",
    "run_benchmark": "hopscore.api_commands",
    "judge_file": "hopscore.api_commands",
    "analyze": "hopscore.api_commands",
    "write_report": "hopscore.api_commands",
    "read_report": "hopscore.api_commands",
    "ScoreReport": "hopscore.scores.results",
    "GroupSummary": "hopscore.scores.results",
    "ExampleScore": "hopscore.scores.results",
    "Predictions": "hopscore.benchmarks.base",
    "Example": "hopscore.benchmarks.base",
    "Prediction": "hopscore.benchmarks.base",
    "PairComparison": "hopscore.analysis.compare_records",
    "HopscoreError": "hopscore.errors",
    "InputError": "hopscore.errors",
}
_MODULES = ("metrics",)

__all__ = ["__version__", *_PUBLIC, *_MODULES]

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ loads them
    from hopscore import metrics as metrics
    from hopscore.analysis.compare_records import PairComparison as PairComparison
    from hopscore.api import SampleFiles as SampleFiles
    from hopscore.api import benchmark_names as benchmark_names
    from hopscore.api import compare as compare
    from hopscore.api import load_gold as load_gold
    from hopscore.api import load_predictions as load_predictions
    from hopscore.api import sample_files as sample_files
    from hopscore.api import score as score
    from hopscore.api_commands import analyze as analyze
    from hopscore.api_commands import judge_file as judge_file
    from hopscore.api_commands import read_report as read_report
    from hopscore.api_commands import run_benchmark as run_benchmark
    from hopscore.api_commands import write_report as write_report
    from hopscore.api_grading import judge as judge
    from hopscore.api_grading import judge_rows as judge_rows
    from hopscore.api_grading import sql_match as sql_match
    from hopscore.benchmarks.base import Example as Example
    from hopscore.benchmarks.base import Prediction as Prediction
    from hopscore.benchmarks.base import Predictions as Predictions
    from hopscore.errors import HopscoreError as HopscoreError
    from hopscore.errors import InputError as InputError
    from hopscore.scores.results import ExampleScore as ExampleScore
    from hopscore.scores.results import GroupSummary as GroupSummary
    from hopscore.scores.results import ScoreReport as ScoreReport


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(importlib.import_module(_PUBLIC[name]), name)
    elif name in _MODULES:
        value = importlib.import_module(f"hopscore.{name}")
    else:
        raise AttributeError(f"module 'hopscore' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
