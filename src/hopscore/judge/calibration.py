"""A judge measured against human labels (``hopscore judge-calibrate``), and the calibration file
that carries its error rates to ``score --judge`` and ``compare``.

The human labels are a small slice of the judged rows, ``id, correct`` as CSV/TSV (a header
line) or JSON Lines; ``correct`` reads true/false, 1/0, yes/no, correct/incorrect (any case).
They are joined to a judge output file (``hopscore judge`` or ``score --judge``'s judge.jsonl)
by id. Labelled ids the judge file lacks are listed; judge rows without a verdict (an error, an
unparsed reply) are left out and listed; judge rows without a label are simply not part of the
calibration.

The calibration file is bound to the judge that made the verdicts: its model, its endpoint and
the sha256 of its prompt, read from the judge rows (every row must name the same ones). A
calibration is refused for verdicts of another model or prompt (the error rates are those of
one model asked one way); another endpoint serving the same model is a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hopscore.engine.types import canonical_json, sha256_text
from hopscore.errors import HopscoreError, InputError, Location
from hopscore.files.digest import file_sha256
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_delimited, iter_jsonl, read_text
from hopscore.inference.judge_error import Confusion, Corrected, corrected_accuracy
from hopscore.inference.two_phase import sample_check
from hopscore.judge.rows import EMPTY_RESPONSE

FORMAT = "hopscore-judge-calibration"
VERSION = 1
TRUE_WORDS = frozenset({"true", "1", "yes", "correct", "right"})
FALSE_WORDS = frozenset({"false", "0", "no", "incorrect", "wrong"})
ID_FIELDS = ("id", "qid", "example_id", "question_id")
MAX_LISTED = 10
#: below this p-value the labelled rows do not look like a random slice of the judged rows
SLICE_P = 0.001


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """Which judge made a set of verdicts."""

    model: str
    endpoint: str
    prompt_sha256: str

    def to_json(self) -> dict[str, str]:
        return {"model": self.model, "endpoint": self.endpoint,
                "prompt_sha256": self.prompt_sha256}

    def text(self) -> str:
        return f"{self.model} at {self.endpoint}, prompt sha256 {self.prompt_sha256[:12]}"


def judge_identity(rows: Mapping[str, Mapping[str, Any]], source: str) -> JudgeIdentity:
    """The one judge named by every row's ``judge`` object; an error when rows differ or lack
    it."""
    seen: dict[tuple[str, str, str], str] = {}
    for example_id, row in rows.items():
        if isinstance(row.get("jury"), dict):
            seen.setdefault(jury_identity(row["jury"]), example_id)
            continue
        meta = row.get("judge")
        if not isinstance(meta, dict):
            raise HopscoreError(f"{source}: row {example_id!r} has no 'judge' object: not the "
                                "output of hopscore judge or score --judge")
        key = tuple(str(meta.get(name) or "") for name in ("model", "endpoint", "prompt_sha256"))
        seen.setdefault((key[0], key[1], key[2]), example_id)
    if len(seen) > 1:
        listed = "; ".join(f"{m} at {e}, prompt {p[:12]} (first row {i!r})"
                           for (m, e, p), i in list(seen.items())[:MAX_LISTED])
        raise HopscoreError(f"{source}: its rows come from {len(seen)} different judges "
                            f"(model, endpoint, prompt): {listed}; calibrate one at a time")
    (model, endpoint, prompt), _ = next(iter(seen.items()))
    if not model or not prompt:
        raise HopscoreError(f"{source}: the judge rows do not name their model and prompt "
                            "sha256")
    return JudgeIdentity(model, endpoint, prompt)


def jury_identity(meta: Mapping[str, Any]) -> tuple[str, str, str]:
    """(model, endpoint, prompt sha256) standing for a jury (a ``hopscore jury`` row's
    ``jury`` object): its judges' models joined, and the sha256 of its judges' models, prompts
    and weights with its rule; another jury is another judge."""
    votes = [v for v in meta.get("votes") or () if isinstance(v, dict)]
    parts = [[str(v.get("model")), str(v.get("prompt_sha256")), v.get("weight")] for v in votes]
    model = "jury(" + ", ".join(str(v.get("model")) for v in votes) + ")"
    return (model, "", sha256_text(canonical_json(
        {"judges": parts, "rule": meta.get("rule"), "on_tie": meta.get("on_tie")})))


def judge_verdict(row: Mapping[str, Any]) -> bool | None:
    """A judge row's decision; None without one (an error, an unparsed reply)."""
    if row.get("error") or row.get("parse_ok") is False:
        return None
    decided = row.get("correct")
    return decided if isinstance(decided, bool) else None


def never_asked(row: Mapping[str, Any] | None) -> bool:
    """A row with no answer to judge: graded wrong without asking the judge."""
    meta = None if row is None else row.get("judge")
    return isinstance(meta, dict) and meta.get("status") == EMPTY_RESPONSE


def _label(value: Any, record: Fields) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        raise record.error("correct", f"expected true/false, 1/0, yes/no or correct/incorrect, "
                                      f"got {value!r}")
    raise record.error("correct", f"expected a boolean, got {json_type(value)}")


def read_labels(path: Path) -> dict[str, bool]:
    """Human labels by id from CSV/TSV (with a header) or JSON Lines."""
    delimited = path.suffix.lower() in {".csv", ".tsv", ".tab"}
    rows = iter_delimited(path) if delimited else iter_jsonl(path)
    labels: dict[str, bool] = {}
    first: dict[str, Location] = {}
    for where, value in rows:
        record = Fields(value, where)
        name = next((n for n in ID_FIELDS if record.has(n)), None)
        if name is None:
            raise InputError(where, f"a label row needs an id ({', '.join(ID_FIELDS)})")
        if not record.has("correct"):
            raise InputError(where, "missing (the human label: true or false)", field="correct")
        example_id = record.id(name)
        if example_id in labels:
            raise record.error(name, f"duplicate id {example_id!r} (first at {first[example_id]})")
        labels[example_id] = _label(record.raw("correct"), record)
        first[example_id] = where
    if not labels:
        raise InputError(path, "holds no labels (rows of id, correct)")
    return labels


@dataclass(slots=True)
class Calibration:
    """A judge's verdicts against human labels, bound to the judge."""

    judge: JudgeIdentity
    confusion: Confusion
    level: float = 0.95
    #: labelled ids the judge file has no row for, and labelled rows the judge did not decide
    #: (an error, an unparsed reply, an empty answer it was never asked about)
    missing_ids: list[str] = field(default_factory=list)
    undecided_ids: list[str] = field(default_factory=list)
    sources: dict[str, Any] = field(default_factory=dict)
    #: each labelled row the judge decided: id -> (human label, judge verdict); empty in files
    #: written before it was kept (then only the Rogan-Gladen correction applies)
    labelled: dict[str, tuple[bool, bool]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "judge": self.judge.to_json(),
                "level": self.level, "counts": self.confusion.to_json(self.level),
                "missing_ids": self.missing_ids, "undecided_ids": self.undecided_ids,
                "sources": self.sources,
                "labelled": [{"id": key, "human": human, "judge": said}
                             for key, (human, said) in self.labelled.items()]}


def calibrate(judge_rows: Mapping[str, Mapping[str, Any]], labels: Mapping[str, bool],
              judge: JudgeIdentity, level: float = 0.95) -> Calibration:
    """Join labels to verdicts by id and count the 2x2 table."""
    counts = [0, 0, 0, 0]  # tp, fn, fp, tn
    missing: list[str] = []
    undecided: list[str] = []
    labelled: dict[str, tuple[bool, bool]] = {}
    for example_id, human in labels.items():
        row = judge_rows.get(example_id)
        if row is None:
            missing.append(example_id)
            continue
        said = judge_verdict(row)
        if said is None or never_asked(row):  # an empty answer says nothing of the judge
            undecided.append(example_id)
            continue
        counts[(0 if human else 2) + (0 if said == human else 1)] += 1
        labelled[example_id] = (human, said)
    true_pos, false_neg, true_neg, false_pos = counts
    if not any(counts):
        raise HopscoreError(f"no labelled id has a judge verdict ({len(missing)} not in the "
                            f"judge file, {len(undecided)} without a verdict)")
    return Calibration(judge, Confusion(true_pos, false_neg, false_pos, true_neg), level,
                       missing, undecided, labelled=labelled)


def write_sources(calibration: Calibration, judge_path: Path, labels_path: Path) -> None:
    calibration.sources = {"judge_file": str(judge_path), "judge_sha256": file_sha256(judge_path),
                           "labels_file": str(labels_path),
                           "labels_sha256": file_sha256(labels_path)}


def load_calibration(path: Path) -> Calibration:
    """A calibration file written by ``hopscore judge-calibrate`` (located errors)."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(Location(str(path), line=exc.lineno), f"not JSON: {exc.msg}") from None
    where = Location(str(path))
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(where, f"not a judge calibration file (format {FORMAT!r}); "
                         "hopscore judge-calibrate writes one")
    record = Fields(data, where)
    if record.int("version") != VERSION:
        raise record.error("version", f"this hopscore reads version {VERSION}")
    judge = Fields(record.dict("judge"), Location(str(path), key="judge"))
    counts = Fields(record.dict("counts"), Location(str(path), key="counts"))
    cells = []
    for name in ("true_pos", "false_neg", "false_pos", "true_neg"):
        value = counts.int(name)
        if value < 0:
            raise counts.error(name, "a count cannot be negative")
        cells.append(value)
    confusion = Confusion(*cells)
    return Calibration(
        JudgeIdentity(judge.str("model"), judge.str("endpoint"), judge.str("prompt_sha256")),
        confusion, float(data.get("level", 0.95)),
        list(data.get("missing_ids") or []), list(data.get("undecided_ids") or []),
        dict(data.get("sources") or {}), _labelled(record, confusion, path))


def _labelled(record: Fields, confusion: Confusion, path: Path
              ) -> dict[str, tuple[bool, bool]]:
    """The ``labelled`` rows of a calibration file, checked against its counts."""
    if not record.has("labelled"):
        return {}
    out: dict[str, tuple[bool, bool]] = {}
    counts = [0, 0, 0, 0]  # tp, fn, fp, tn
    for index, value in enumerate(record.list("labelled")):
        row = Fields.at_index(value, str(path), index)
        key = row.id("id")
        human, said = row.bool("human"), row.bool("judge")
        if key in out:
            raise row.error("id", f"labelled twice: {key!r}")
        out[key] = (human, said)
        counts[(0 if human else 2) + (0 if said else 1)] += 1
    cells = (confusion.true_pos, confusion.false_neg, confusion.false_pos, confusion.true_neg)
    if tuple(counts) != cells:
        raise record.error("labelled", f"its rows do not add up to the counts (tp, fn, fp, tn "
                                       f"{tuple(counts)} against {cells})")
    return out


def check_bound_to(calibration: tuple[Calibration, Path], judge: JudgeIdentity,
                   verdicts: str) -> list[str]:
    """Refuse a calibration of another model or prompt; a warning for another endpoint."""
    made, calibration_path = calibration[0].judge, calibration[1]
    differ = [f"{what}: calibrated {a!r}, judged {b!r}" for what, a, b in (
        ("model", made.model, judge.model),
        ("prompt sha256", made.prompt_sha256, judge.prompt_sha256)) if a != b]
    if differ:
        raise HopscoreError(
            f"{calibration_path} calibrates another judge than the one of {verdicts} ("
            + "; ".join(differ) + "): a judge's error rates hold for one model asked one way; "
            "calibrate this judge with hopscore judge-calibrate")
    if made.endpoint != judge.endpoint:
        return [f"{calibration_path} was measured at {made.endpoint}, these verdicts came from "
                f"{judge.endpoint} (same model and prompt)"]
    return []


@dataclass(frozen=True, slots=True)
class CorrectedJudge:
    """The judge's accuracy over the rows it decided, corrected with a calibration."""

    corrected: Corrected
    calibration: Calibration
    #: rows left out: the judge gave no verdict
    undecided: int
    #: rows with no answer to judge (empty response): wrong for certain, never asked
    empty: int = 0
    warnings: tuple[str, ...] = ()

    def overall(self) -> tuple[float | None, float | None, float | None]:
        """Estimate and interval over asked + empty rows (the empty ones count 0)."""
        c = self.corrected
        share = c.n / (c.n + self.empty)
        return tuple(None if v is None else v * share  # type: ignore[return-value]
                     for v in (c.estimate, c.low, c.high))

    def text(self) -> str:
        estimate, low, high = self.overall()
        if estimate is None or low is None or high is None:
            return f"not corrected: {self.corrected.undefined}"
        return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"

    def to_json(self) -> dict[str, Any]:
        c = self.calibration
        estimate, low, high = self.overall()
        return {**self.corrected.to_json(), "undecided": self.undecided, "empty": self.empty,
                "overall": {"corrected": estimate, "low": low, "high": high,
                            "n": self.corrected.n + self.empty},
                "calibration": {"judge": c.judge.to_json(),
                                "sensitivity": c.confusion.sensitivity,
                                "specificity": c.confusion.specificity,
                                "n": c.confusion.n, "sources": c.sources}}


def correct_rows(rows: Iterable[Mapping[str, Any] | None], calibration: Calibration,
                 level: float, warnings: Sequence[str] = (),
                 ids: Sequence[str] | None = None) -> CorrectedJudge | None:
    """The accuracy of the rows the judge decided, corrected (None: it decided none). Rows with
    an empty response were never asked (wrong for certain): they stay out of the correction
    and count 0 in :meth:`CorrectedJudge.overall`.

    With ``ids`` (the rows' example ids), a calibration whose labelled rows are all among these
    rows, with the same verdicts, is a slice of this very run: the two-phase estimate is used
    (:func:`hopscore.inference.judge_error.corrected_accuracy`). Otherwise the judge's
    sensitivity and specificity carry the correction over (Rogan-Gladen)."""
    right = asked = undecided = empty = 0
    verdicts: dict[str, bool] = {}
    for index, row in enumerate(rows):
        said = None if row is None else judge_verdict(row)
        if never_asked(row):
            empty += 1
        elif said is None:
            undecided += 1
        else:
            asked += 1
            right += said
            if ids is not None:
                verdicts[ids[index]] = said
    if asked == 0:
        return None
    notes = list(warnings)
    same = _same_rows(calibration, verdicts, notes) if ids is not None else False
    if same:
        labelled = calibration.labelled
        passed = sum(said for _, said in labelled.values())
        p_value = sample_check(passed, len(labelled), right, asked)
        if p_value < SLICE_P:
            notes.append(f"the judge passed {passed} of the {len(labelled)} labelled rows "
                         f"against {right} of all {asked} (p = {p_value:.2g}): the labels do "
                         "not look like a random slice of the judged rows, which the "
                         "correction assumes")
    return CorrectedJudge(corrected_accuracy(right, asked, calibration.confusion, level,
                                             same_rows=same),
                          calibration, undecided, empty, tuple(notes))


def _same_rows(calibration: Calibration, verdicts: Mapping[str, bool], notes: list[str]
               ) -> bool:
    """Whether every labelled row is one of these rows with the same verdict (else a note
    when only some are)."""
    labelled = calibration.labelled
    if not labelled:
        return False
    matching = sum(verdicts.get(key) is said for key, (_, said) in labelled.items())
    if matching == len(labelled):
        return True
    if matching:
        notes.append(f"{len(labelled) - matching} of the {len(labelled)} labelled rows are not "
                     "rows of this run with the same verdict: the correction uses the "
                     "judge's sensitivity and specificity, not this run's labelled slice")
    return False
