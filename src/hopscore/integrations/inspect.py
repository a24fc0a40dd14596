"""hopscore's benchmarks as inspect_ai tasks: ``inspect eval hopscore/<benchmark> --model ...``.

Installed with the ``inspect`` extra (``pip install 'hopscore[inspect]'``), hopscore registers
one task per benchmark through inspect's ``inspect_ai`` entry point, ``hopscore/<name>``, for
every benchmark of the registry (third-party ones included) that a model answers one question
at a time (``runner == "qa"``) and that has a prompt (:meth:`Benchmark.prompts`). Each task is

* **dataset**: the examples of ``-T gold=FILE`` read by hopscore's loader (any form ``--gold``
  takes, Hugging Face layouts included; without it, the bundled sample), one inspect ``Sample``
  per example, with the gold ``id``, ``question`` and groups in its metadata;
* **prompt**: hopscore's template for the benchmark (``-T shots=N``, ``-T template=FILE``,
  ``-T protocol=mcr``), the same messages ``hopscore run`` sends;
* **scorer**: the reply read as ``hopscore run`` reads it (flexible extraction, the
  benchmark's prediction) and scored by the official per-example scorer; its metrics are the
  benchmark's metrics overall (``official``) and per group (``groups``: ``bridge_em``, ...).

A log written by these tasks re-scores identically with ``hopscore score BENCH --gold FILE
--predictions LOG --from inspect``: that route reads each completion with the same code.
Task arguments (``-T``): ``gold``, ``aliases`` (for a benchmark whose gold takes an alias file),
``tables_dir`` (for one whose prompts hold tables read from a folder: required there), ``shots``,
``template``, ``protocol``, ``limit``, ``documents`` (the pages the questions link to, for one
whose prompts can show them: an oracle setting).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

from hopscore import benchmarks
from hopscore.benchmarks.base import Benchmark, Example, Predictions, PromptInputs
from hopscore.errors import HopscoreError
from hopscore.harness.reading import read_reply

#: temperature and max tokens of ``hopscore run``'s defaults
DEFAULT_CONFIG = GenerateConfig(temperature=0.0, max_tokens=1024)
_ROLES: dict[str, Callable[[str], ChatMessage]] = {
    "system": lambda text: ChatMessageSystem(content=text),
    "user": lambda text: ChatMessageUser(content=text),
    "assistant": lambda text: ChatMessageAssistant(content=text),
}


def _default_gold(name: str) -> tuple[Path, Path | None]:
    from hopscore.benchmarks.sample_files import sample_of

    sample = sample_of(name)
    if sample is not None:
        folder = Path(str(sample.folder))
        aliases = folder / sample.aliases if sample.aliases else None
        return folder / sample.gold, aliases
    raise HopscoreError(f"{name} has no bundled sample: give -T gold=FILE")


def build_task(
    name: str,
    gold: str | None = None,
    aliases: str | None = None,
    tables_dir: str | None = None,
    shots: int = 0,
    template: str | None = None,
    protocol: str = "default",
    limit: int | None = None,
    documents: str | None = None,
) -> Task:
    """The inspect task of benchmark ``name`` (see the module docstring for the arguments)."""
    from hopscore.hub import official_gold
    from hopscore.run.extract import KINDS
    from hopscore.run.prompts import PromptTemplate, builtin_template_name, load_shots
    from hopscore.run.tasks import render_messages

    bench = benchmarks.get(name)
    if gold is None:
        gold_path, alias_path = _default_gold(bench.name)
    else:
        gold_path = official_gold(bench.name, gold).path
        alias_path = Path(aliases) if aliases else None
    examples = bench.load_gold(gold_path, aliases=alias_path)
    if limit is not None:
        examples = examples[: int(limit)]
    prompt = (PromptTemplate.from_file(Path(template)) if template
              else PromptTemplate.builtin(builtin_template_name(bench.name, protocol)))
    exemplars = load_shots(bench.name, protocol, int(shots))
    kind = bench.mcr_answer_kind if protocol == "mcr" and bench.mcr_answer_kind else \
        bench.answer_kind
    if kind not in KINDS:
        raise HopscoreError(f"{bench.name}: unknown answer kind {kind!r}")
    inputs = PromptInputs(tables_dir=Path(tables_dir) if tables_dir else None,
                          documents=Path(documents) if documents else None)
    samples = []
    for example in examples:
        variables = bench.prompt_variables(example, inputs)
        messages = render_messages(bench, variables, prompt, exemplars, protocol, "Answer:", kind)
        samples.append(Sample(
            input=[_ROLES[m["role"]](m["content"]) for m in messages],
            target=list(example.gold_answers()) or "",
            id=example.id,
            metadata={"id": example.id, "question": example.question,
                      "groups": example.groups()},
        ))  # fmt: skip
    by_id = {example.id: example for example in examples}
    return Task(
        dataset=MemoryDataset(samples, name=f"hopscore/{bench.name}", location=str(gold_path)),
        solver=generate(),
        scorer=official_scorer(bench, by_id),
        config=DEFAULT_CONFIG,
        metadata={"hopscore_benchmark": bench.name, "gold": str(gold_path)},
    )


def _values(score: Score) -> dict[str, float]:
    value = score.value
    return {k: float(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _names(bench: Benchmark[Any, Any], scores: list[SampleScore]) -> list[str]:
    present = {name for s in scores for name in _values(s.score)}
    return [name for name in bench.metrics if name in present]


def _finalized(bench: Benchmark[Any, Any], names: list[str],
               scores: list[SampleScore]) -> dict[str, float]:
    if not scores:
        return {}
    means = {n: sum(_values(s.score).get(n, 0.0) for s in scores) / len(scores) for n in names}
    return bench.finalize(means)


# (inspect's decorators are applied by call, not with @: without inspect_ai installed mypy sees
# them untyped, and a decorated function would lose its types)


def official_metric(bench: Benchmark[Any, Any]) -> Metric:
    def official() -> Metric:
        def compute(scores: list[SampleScore]) -> dict[str, float]:
            return _finalized(bench, _names(bench, scores), scores)

        return compute

    made: Metric = metric(name="official")(official)()
    return made


def groups_metric(bench: Benchmark[Any, Any]) -> Metric:
    def groups() -> Metric:
        def compute(scores: list[SampleScore]) -> dict[str, float]:
            names = _names(bench, scores)
            by_group: dict[tuple[str, str], list[SampleScore]] = {}
            for s in scores:
                labels = (s.sample_metadata or {}).get("groups") or {}
                for key, value in labels.items():
                    by_group.setdefault((key, str(value)), []).append(s)
            values = [value for _, value in by_group]
            out: dict[str, float] = {}
            for (key, value), members in sorted(by_group.items()):
                label = value if values.count(value) == 1 else f"{key}={value}"
                for metric_name, number in _finalized(bench, names, members).items():
                    out[f"{label}_{metric_name}"] = number
            return out

        return compute

    made: Metric = metric(name="groups")(groups)()
    return made


def official_scorer(bench: Benchmark[Any, Any], examples: dict[str, Example]) -> Any:
    def official_per_example() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            example = examples[str(state.sample_id)]
            completion = state.output.completion if state.output else ""
            reading = read_reply(bench, example, completion)
            values = bench.score(example, reading.prediction)
            active = bench.active_metrics(
                Predictions({example.id: reading.prediction}, "inspect", "inspect"))
            return Score(
                value={name: values[name] for name in active},
                answer=reading.answer,
                explanation=f"prediction: {reading.prediction.answer_text()!r}; gold: "
                            f"{' | '.join(example.gold_answers())}",
            )

        return score

    metrics = [official_metric(bench), groups_metric(bench)]
    return scorer(metrics=metrics, name=f"{bench.name}_official")(official_per_example)()


# --- the registered tasks (names as the benchmarks': hopscore/<name>) --------------------------


def task_benchmarks() -> list[str]:
    """The benchmarks with an inspect task: those a model answers one question at a time
    (``runner == "qa"``) with a prompt; an agent with tools runs through hopscore itself."""
    out = []
    for name in benchmarks.names():
        bench = benchmarks.get(name)
        if bench.runner == "qa" and bench.prompts():
            out.append(name)
    return out


def _register(name: str) -> Callable[..., Task]:
    def benchmark_task(
        gold: str | None = None,
        aliases: str | None = None,
        tables_dir: str | None = None,
        shots: int = 0,
        template: str | None = None,
        protocol: str = "default",
        limit: int | None = None,
        documents: str | None = None,
    ) -> Task:
        return build_task(name, gold, aliases, tables_dir, shots, template, protocol, limit,
                          documents)

    benchmark_task.__name__ = benchmark_task.__qualname__ = f"hopscore_{name}"
    benchmark_task.__doc__ = f"{benchmarks.get(name).title}, scored as its official scorer does."
    registered: Callable[..., Task] = task(name=name)(benchmark_task)
    return registered


TASKS = {name: _register(name) for name in task_benchmarks()}
