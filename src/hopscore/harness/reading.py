"""Reading one model reply into a benchmark prediction, as ``hopscore run`` reads its own.

The answer is the flexible extraction of the reply (:func:`hopscore.run.extract.extract_flexible`,
with the benchmark's answer kind, and the choices and unit its prompt variables give), and the
prediction is what the benchmark makes of it (:meth:`Benchmark.make_prediction`: it may read
citations from the whole reply, turn yes/no into a boolean, read a label). ``hopscore score
--from`` and the inspect_ai scorer both read replies here, so a log re-scores exactly as it was
scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hopscore.benchmarks.base import Benchmark, Example, ModelAnswer, Prediction, PromptInputs
from hopscore.errors import HopscoreError
from hopscore.run.extract import Hints, extract_flexible


def hints_for(benchmark: Benchmark[Any, Any], example: Example) -> Hints:
    """What flexible extraction needs to know about one example's answer."""
    try:
        variables = benchmark.prompt_variables(example, PromptInputs())
    except HopscoreError:  # a layout that needs run inputs (tables on disk): no hints then
        variables = {}
    choices = tuple((c["label"], c["text"]) for c in variables.get("choices", ()))
    return Hints(kind=benchmark.answer_kind, choices=choices, unit=variables.get("unit"))


@dataclass(frozen=True, slots=True)
class Reading:
    """The answer read from one reply and the prediction made of it."""

    answer: str | None
    prediction: Prediction


def read_reply(
    benchmark: Benchmark[Any, Any], example: Example, reply: str, *, full_output: str | None = None
) -> Reading:
    """The prediction a reply makes; ``full_output`` (default: the reply) is the text that
    citations are read from when the reply is an already extracted answer."""
    answer = extract_flexible(reply, hints_for(benchmark, example))
    prediction = benchmark.make_prediction(
        example, ModelAnswer(answer, reply if full_output is None else full_output)
    )
    return Reading(answer, prediction)
