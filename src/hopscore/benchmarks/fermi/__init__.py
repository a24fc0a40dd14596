"""Fermi problems (realFP, synthFP): the log-ratio ``fp_score`` of allenai/fermi.

Gold: the official JSON list of ``{question, program, answer, context, ...}``; an example's id is
its 0-based position in the list, as a string. Predictions: a JSON object keyed by those ids,
``{"0": "22.3 km", "1": 3.2e13, ...}``, or universal JSON Lines ``{"id", "answer"}``.

Both answers are evaluated the way the official pipeline does (``convert_units`` then
``accuracy_metric``; see :mod:`hopscore.benchmarks.fermi.quantities`): pint with the Fermi units,
conversion to base units, and a comparison of magnitudes only. A JSON number is taken as it
is. A prediction pint cannot evaluate scores 0 (the official code raises), and so does an empty
string (pint would evaluate "" to 1). Groups: ``with_unit`` / ``no_unit`` by whether the gold
answer carries a unit after conversion ("$7224" and "15 people" do not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopscore.benchmarks.base import (
    Benchmark,
    Example,
    ModelAnswer,
    Prediction,
    Predictions,
    PromptInputs,
    SuiteFiles,
    load_universal,
)
from hopscore.benchmarks.fast_init import fast_init
from hopscore.benchmarks.fermi import hub
from hopscore.benchmarks.fermi.realfp import REALFP_JOINED, join_realfp
from hopscore.errors import InputError, Location
from hopscore.files.atomic import write_json_atomic
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import load_json, sniff_json_kind
from hopscore.text.quantities import Quantity


# numpy and pint load with the first score, not with the benchmark's declaration (the help
# of every command lists the benchmarks)
def answer_quantity(answer: str | int | float) -> Quantity:
    """:func:`hopscore.benchmarks.fermi.quantities.answer_quantity`, imported on first use."""
    from hopscore.benchmarks.fermi.quantities import answer_quantity as parse

    return parse(answer)


def fp_score(gold: Any, pred: Any) -> float:
    """:func:`hopscore.benchmarks.fermi.quantities.fp_score`, imported on first use."""
    from hopscore.benchmarks.fermi.quantities import fp_score as score

    return score(gold, pred)


def mcr_fermi_score(prediction: str, gold: str) -> float:
    """:func:`hopscore.benchmarks.fermi.quantities.mcr_fermi_score`, imported on first use."""
    from hopscore.benchmarks.fermi.quantities import mcr_fermi_score as score

    return score(prediction, gold)

@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FermiExample(Example):
    answer: str
    #: The gold magnitude in base units.
    value: Any
    has_unit: bool
    #: the ``context`` string: ``"CONTEXT:=F1: ...=F2: ..."``
    context: str = ""

    def groups(self) -> dict[str, str]:
        return {"unit": "with_unit" if self.has_unit else "no_unit"}

    def gold_answers(self) -> tuple[str, ...]:
        return (self.answer,)


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FermiPrediction(Prediction):
    #: The predicted magnitude in base units; None when the answer could not be evaluated.
    value: Any = None
    error: str | None = None


def predicted_quantity(answer: str | int | float) -> Quantity:
    """A prediction's value; a blank string has none (pint alone would read "" as 1)."""
    if isinstance(answer, str) and not answer.strip():
        return Quantity(None, False, "empty answer")
    return answer_quantity(answer)


def _answer(record: Fields, field: str) -> str | int | float:
    value = record.raw(field)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise record.error(
            field, f'expected a string such as "22.3 km" or a number, got {json_type(value)}'
        )
    return value


def _prediction(record: Fields, example_id: str, field: str = "answer") -> FermiPrediction:
    answer = _answer(record, field)
    quantity = predicted_quantity(answer)
    return FermiPrediction(
        id=example_id, answer=str(answer), value=quantity.magnitude, error=quantity.error
    )


class Fermi(Benchmark[FermiExample, FermiPrediction]):
    name = "fermi"
    hub_layout = hub.LAYOUT
    hub_copies = hub.COPIES
    title = "Fermi (realFP / synthFP)"
    metric_functions = "hopscore.benchmarks.fermi.per_example"
    error_categories = "hopscore.benchmarks.fermi.categories"
    recorded_as = ("realfp",)
    metrics = ("fp_score",)
    headline = ("fp_score",)
    group_keys = ("unit",)
    #: its examples depend on the gold file alone: scoring keeps them between runs
    gold_examples_kept = True
    gold_formats = "official JSON list (realFP/synthFP); ids are 0-based positions"
    prediction_formats = 'JSON object {"0": "22.3 km", ...}; universal JSONL {"id", "answer"}'

    def load_gold(self, path: Path, *, aliases: Path | None = None) -> list[FermiExample]:
        data = load_json(path)
        if not isinstance(data, list):
            raise InputError(path, f"expected a JSON list of Fermi problems, got {json_type(data)}")
        examples = []
        for index, item in enumerate(data):
            record = Fields.at_index(item, str(path), index)
            answer = record.str("answer")
            quantity = answer_quantity(answer) if answer.strip() else Quantity(None, False, "empty")
            if quantity.magnitude is None:
                raise record.error(
                    "answer", f"cannot evaluate gold answer {answer!r}: {quantity.error}"
                )
            examples.append(
                FermiExample(
                    id=str(index),
                    question=record.str("question", ""),
                    answer=answer,
                    value=quantity.magnitude,
                    has_unit=quantity.has_unit,
                    context=record.str("context", ""),
                )
            )
        return examples

    def load_predictions(self, path: Path) -> Predictions[FermiPrediction]:
        if sniff_json_kind(path) == "jsonl":
            predictions = Predictions(load_universal(path, _prediction), str(path), "universal")
        else:
            data = load_json(path)
            if not isinstance(data, dict):
                raise InputError(
                    path,
                    'expected a JSON object {"0": "22.3 km", ...} or JSON Lines, '
                    f"got {json_type(data)}",
                )
            if "id" in data and "answer" in data:  # a one-line universal file
                predictions = Predictions(load_universal(path, _prediction), str(path), "universal")
            else:
                by_id = {}
                for key, value in data.items():
                    record = Fields.at_key({"answer": value}, str(path), key)
                    by_id[key] = _prediction(record, key)
                predictions = Predictions(by_id, str(path), "official")
        failed = [p for p in predictions.by_id.values() if p.value is None]
        if failed:
            first = failed[0]
            predictions.warnings.append(
                f"{path}: {len(failed)} predicted answers could not be evaluated as quantities and "
                f"score 0 (first: id {first.id!r}, {first.answer!r}: {first.error})"
            )
        return predictions

    def score(self, example: FermiExample, prediction: FermiPrediction | None) -> dict[str, float]:
        if prediction is None or prediction.value is None:
            return {"fp_score": 0.0}
        return {"fp_score": fp_score(example.value, prediction.value)}

    answer_kind = "number"
    mcr_evaluator = "fermi"

    answer_metric = "fp_score"
    demo_position = 4
    suite_files = SuiteFiles(1, ("fermi", "realFP", "realfp"), ("train_realfp.json", "realfp.json"),
                             companions=("val_realfp.json",))
    suite_title = "Fermi"
    suite_layout = ("fermi/train_realfp.json + val_realfp.json (joined, deduplicated by "
                    "question)")
    suite_writes = (REALFP_JOINED,)
    mcr_metric = "fp_score"

    def mcr_score(self, prediction: str, gold: str) -> float | None:
        """:func:`hopscore.benchmarks.fermi.quantities.mcr_fermi_score`, with MCR's "trillion" =
        1e9 bug."""
        return mcr_fermi_score(prediction, gold)

    def suite_gold(self, folder: Path, work_dir: Path) -> Path | None:
        """realFP train + val joined (:func:`join_realfp`), when both are in ``folder``."""
        train, val = folder / "train_realfp.json", folder / "val_realfp.json"
        if train.is_file() and val.is_file():
            return join_realfp(train, val, work_dir / REALFP_JOINED)
        return None

    def prompt_variables(self, example: FermiExample, inputs: PromptInputs) -> dict[str, Any]:
        """The question, its context facts, and the unit the answer is asked in.

        The unit is read from the gold answer as MCR's reader does ("$" when the answer has
        one, else the last word of a multi-word answer, else none): the realFP questions do not
        always say which unit they want, and the official score compares base-unit magnitudes.
        """
        unit = answer_unit(example.answer)
        mcr = f"{example.question} Unit: {unit}." if unit else example.question
        return {"question": example.question, "mcr_question": mcr, "unit": unit,
                "facts": context_facts(example.context)}

    def make_prediction(self, example: FermiExample, answer: ModelAnswer) -> FermiPrediction:
        return _prediction(Fields({"answer": answer.text or ""}, Location("run")), example.id)

    def write_predictions(self, predictions: Sequence[FermiPrediction], path: Path) -> None:
        write_json_atomic(path, {p.id: p.answer or "" for p in predictions})


def answer_unit(answer: str) -> str | None:
    """MCR's unit of a gold answer: "$" if it has one, else the last of several words."""
    if "$" in answer:
        return "$"
    words = answer.split(" ")
    return words[-1] if len(words) > 1 else None


_FACT = re.compile(r"(?:^|=)\s*F\d+\s*:\s*")


def context_facts(context: str) -> list[str]:
    """``"CONTEXT:=F1: a=F2: b"`` -> ``["a", "b"]`` (a context without F-labels: one fact)."""
    body = context.strip()
    if body.upper().startswith("CONTEXT:"):
        body = body[len("CONTEXT:"):]
    parts = [part.strip() for part in _FACT.split(body)]
    return [part for part in parts if part]
