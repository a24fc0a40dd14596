"""Predictions from other harnesses: ``hopscore score BENCH -p P --from lm-eval|inspect``.

Each reply in the harness's output (:mod:`hopscore.harness.lm_eval`,
:mod:`hopscore.harness.inspect_log`) is joined to a gold example (:mod:`hopscore.harness.join`)
and read into the benchmark's prediction as ``hopscore run`` reads its own replies
(:mod:`hopscore.harness.reading`). The scores are then the official ones, computed by the same
code as for any other prediction file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import Benchmark, Example, ModelAnswer, Predictions
from hopscore.errors import HopscoreError
from hopscore.harness.join import HarnessRecord, JoinReport, join
from hopscore.harness.reading import hints_for, read_reply

SOURCES = ("lm-eval", "inspect")



def read_records(path: Path, source: str, lm_filter: str | None) -> tuple[list[HarnessRecord],
                                                                        str, list[str]]:
    """The records of a harness output, a name for messages, and notes about the reading."""
    if source == "lm-eval":
        from hopscore.harness.lm_eval import read_samples

        records, used = read_samples(path, lm_filter)
        return records, f"lm-eval {path.name} (filter {used})", []
    if source == "inspect":
        if lm_filter is not None:
            raise HopscoreError("--filter chooses an lm-eval filter; it has no meaning for "
                                "--from inspect")
        from hopscore.harness.inspect_log import read_log

        log = read_log(path)
        notes = []
        if log.epochs > 1:
            notes.append(f"{path}: the log has {log.epochs} epochs; the first epoch of each "
                         "sample is scored")
        return log.records, f"inspect log {path.name}", notes
    raise HopscoreError(f"--from must be one of {', '.join(SOURCES)}, not {source!r}")


def harness_predictions(
    benchmark: Benchmark[Any, Any],
    examples: Sequence[Example],
    path: Path,
    source: str,
    lm_filter: str | None = None,
) -> tuple[Predictions[Any], JoinReport, str]:
    """The predictions of a harness output, the join accounting and its one-line summary."""
    records, name, notes = read_records(path, source, lm_filter)
    joined, report = join(examples, records)
    by_example = {example.id: example for example in examples}
    by_id = {}
    for gold_id, record in joined.items():
        example = by_example[gold_id]
        if record.choice_index is not None:
            by_id[gold_id] = _choice_prediction(benchmark, example, record)
        elif record.reply is not None:
            by_id[gold_id] = read_reply(benchmark, example, record.reply,
                                        full_output=record.full_output).prediction
    summary = report.summary(name, len(examples))
    warnings = list(notes)
    warnings.extend(_uncited(benchmark, by_id, name))
    if not report.complete():
        warnings.append(summary)
    if report.joined == 0:
        raise HopscoreError(
            f"{summary}: nothing joined. The records carry neither the gold ids nor the gold "
            "questions; check that --gold is the split the harness evaluated"
        )
    return Predictions(by_id, str(path), source, warnings), report, summary


def _uncited(benchmark: Benchmark[Any, Any], by_id: dict[str, Any], source: str) -> list[str]:
    """Warnings for the parts the benchmark reads from citations (its ``cited_parts``:
    supporting facts, evidence) that the replies lack, worded as for a prediction file
    without them."""
    from hopscore.benchmarks.formats import unpredicted_warning

    out = []
    for cited in benchmark.cited_parts:
        missing = [key for key, prediction in by_id.items()
                   if not getattr(prediction, cited.part)]
        warning = unpredicted_warning(source, cited.part, cited.metrics, missing, len(by_id))
        if warning:
            out.append(f"{warning} (a reply gives them as {cited.wanted})")
    return out


def _choice_prediction(benchmark: Benchmark[Any, Any], example: Example,
                       record: HarnessRecord) -> Any:
    choices = hints_for(benchmark, example).choices
    index = record.choice_index
    assert index is not None
    if not choices:
        raise HopscoreError(f"{record.where}: a multiple-choice (loglikelihood) reply, but "
                            f"{benchmark.title} answers are not choices; score a generation task")
    if index >= len(choices):
        raise HopscoreError(f"{record.where}: option {index} chosen but the gold question has "
                            f"{len(choices)} choices")
    label = choices[index][0]
    return benchmark.make_prediction(example, ModelAnswer(label, label))


def predictions_reader(
    benchmark: Benchmark[Any, Any], path: Path, source: str, lm_filter: str | None,
    note: Callable[[str], None],
) -> Callable[[Sequence[Example]], Predictions[Any]]:
    """A ``read_predictions`` for :func:`hopscore.scores.scoring.score_files`; ``note`` gets the
    join summary."""

    def read(examples: Sequence[Example]) -> Predictions[Any]:
        predictions, _, summary = harness_predictions(benchmark, examples, path, source,
                                                      lm_filter)
        note(summary)
        return predictions

    return read
