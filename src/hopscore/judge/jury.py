"""A jury: several judges (models and/or prompts) over the same rows, one verdict per row by a
stated rule, and how much the judges agree.

Each judge's verdicts come from its own ``hopscore judge`` output file (resumable, with its raw
replies); rows are lined up by their input line (``judge.input_line``). :func:`aggregate` is the
rule, on one row's votes:

* a judge that gave no verdict (an error, an unparsed reply) **abstains**: its vote is left
  out; with fewer than ``min_votes`` votes left the row has no jury verdict (null);
* ``majority``: correct when more judges say correct than wrong;
* ``weighted``: the same with each judge's weight (``--weight``);
* ``unanimous``: correct only when every judge says correct; one "wrong" makes it wrong; with no
  "wrong" but an abstention, unanimity cannot be known and the row has no verdict;
* a **tie** (equal votes or weights) is decided by ``on_tie``: ``wrong`` (the default: a tie
  is no pass), ``correct``, or ``undecided`` (no verdict).

Agreement among the judges: Fleiss' kappa over the rows every judge decided, Krippendorff's
alpha (nominal) over every row with two or more verdicts
(:mod:`hopscore.inference.raters`); per row, the *split*: the minority's share of the votes
(0 unanimous, 0.5 an even split), by which the disagreeing rows are listed first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hopscore.errors import HopscoreError
from hopscore.inference.raters import Coefficient, fleiss_kappa, krippendorff_alpha
from hopscore.judge.calibration import judge_verdict

RULES = ("majority", "weighted", "unanimous")
TIES = ("wrong", "correct", "undecided")
VOTE_FIELDS = ("correct", "parse_ok", "raw_judge_output", "error")


@dataclass(frozen=True, slots=True)
class JuryVerdict:
    """One row's verdict and the votes it came from."""

    correct: bool | None
    yes: float
    no: float
    abstained: int
    #: how the verdict was reached when not by a plain count ("tie: wrong", "too few votes")
    note: str | None = None

    @property
    def split(self) -> float:
        """The minority's share of the votes cast (0 when they agree)."""
        total = self.yes + self.no
        return min(self.yes, self.no) / total if total else 0.0


def check_rule(rule: str, on_tie: str, weights: Sequence[float], judges: int,
               min_votes: int) -> None:
    if rule not in RULES:
        raise HopscoreError(f"--rule must be one of {', '.join(RULES)} (got {rule!r})")
    if on_tie not in TIES:
        raise HopscoreError(f"--on-tie must be one of {', '.join(TIES)} (got {on_tie!r})")
    if len(weights) != judges:
        raise HopscoreError(f"{len(weights)} weights for {judges} judges: give one --weight "
                            "per --judge, or none")
    if any(not w > 0 for w in weights):
        raise HopscoreError("every --weight must be above 0")
    if rule != "weighted" and len(set(weights)) > 1:
        raise HopscoreError(f"--weight is for --rule weighted (the rule is {rule})")
    if not 1 <= min_votes <= judges:
        raise HopscoreError(f"--min-votes must be between 1 and the {judges} judges")


def aggregate(votes: Sequence[bool | None], rule: str, weights: Sequence[float],
              on_tie: str = "wrong", min_votes: int = 1) -> JuryVerdict:
    """The jury's verdict on one row (see the module docstring for the rule)."""
    counted = [(vote, weight if rule == "weighted" else 1.0)
               for vote, weight in zip(votes, weights, strict=True) if vote is not None]
    yes = sum(w for vote, w in counted if vote)
    no = sum(w for vote, w in counted if not vote)
    abstained = len(votes) - len(counted)
    if len(counted) < min_votes:
        return JuryVerdict(None, yes, no, abstained,
                           f"{len(counted)} of {len(votes)} judges decided (--min-votes "
                           f"{min_votes})")
    if rule == "unanimous":
        if no:
            return JuryVerdict(False, yes, no, abstained)
        if abstained:
            return JuryVerdict(None, yes, no, abstained, "unanimity unknown: a judge abstained")
        return JuryVerdict(True, yes, no, abstained)
    if yes == no:
        decided = {"wrong": False, "correct": True, "undecided": None}[on_tie]
        return JuryVerdict(decided, yes, no, abstained, f"tie: {on_tie}")
    return JuryVerdict(yes > no, yes, no, abstained)


@dataclass(frozen=True, slots=True)
class Juror:
    """One judge of the jury: what it is and its rows by input line."""

    label: str
    model: str
    prompt_sha256: str
    weight: float
    rows: Mapping[int, Mapping[str, Any]]


def rows_by_line(rows: Sequence[Mapping[str, Any]], source: str) -> dict[int, Mapping[str, Any]]:
    """A judge output file's rows by their input line (the last row of a line wins, as a
    resumed file's latest row does)."""
    out: dict[int, Mapping[str, Any]] = {}
    for row in rows:
        meta = row.get("judge")
        line = meta.get("input_line") if isinstance(meta, dict) else None
        if not isinstance(line, int):
            raise HopscoreError(f"{source}: a row has no judge.input_line")
        out[line] = row
    return out


@dataclass(slots=True)
class JuryResult:
    """Every row's verdict, and the agreement among the judges."""

    rule: str
    on_tie: str
    jurors: list[Juror]
    lines: list[int]
    verdicts: list[JuryVerdict]
    fleiss: Coefficient
    alpha: Coefficient
    warnings: list[str] = field(default_factory=list)

    def row(self, index: int) -> dict[str, Any]:
        """The jury.jsonl row of one input row: its input fields, the verdict, every vote."""
        line = self.lines[index]
        first = next(j.rows[line] for j in self.jurors if line in j.rows)
        base = {k: v for k, v in first.items() if k not in (*VOTE_FIELDS, "judge",
                                                            "extracted_final_answer",
                                                            "reasoning", "confidence")}
        verdict = self.verdicts[index]
        votes = []
        for juror in self.jurors:
            got = juror.rows.get(line)
            votes.append({"judge": juror.label, "model": juror.model,
                          "prompt_sha256": juror.prompt_sha256, "weight": juror.weight,
                          "correct": None if got is None else judge_verdict(got),
                          "raw_judge_output": None if got is None else got.get("raw_judge_output"),
                          "error": "no row for this input line" if got is None
                          else got.get("error")})
        return {**base, "correct": verdict.correct,
                "jury": {"input_line": line, "rule": self.rule, "on_tie": self.on_tie,
                         "yes": verdict.yes, "no": verdict.no, "abstained": verdict.abstained,
                         "split": verdict.split, "note": verdict.note, "votes": votes}}

    def to_json(self) -> dict[str, Any]:
        decided = [v for v in self.verdicts if v.correct is not None]
        right = sum(1 for v in decided if v.correct)
        jurors = []
        for juror in self.jurors:
            said = [judge_verdict(r) for r in juror.rows.values()]
            n = sum(1 for s in said if s is not None)
            jurors.append({"judge": juror.label, "model": juror.model,
                           "prompt_sha256": juror.prompt_sha256, "weight": juror.weight,
                           "rows": len(said), "decided": n,
                           "accuracy_decided": sum(1 for s in said if s) / n if n else None})
        return {
            "rule": self.rule, "on_tie": self.on_tie, "rows": len(self.lines),
            "decided": len(decided), "correct": right,
            "accuracy": right / len(self.lines) if self.lines else None,
            "accuracy_decided": right / len(decided) if decided else None,
            "split_rows": sum(1 for v in self.verdicts if v.split > 0),
            "ties": sum(1 for v in self.verdicts if (v.note or "").startswith("tie")),
            "judges": jurors, "fleiss_kappa": self.fleiss.to_json(),
            "krippendorff_alpha": self.alpha.to_json(), "warnings": self.warnings,
        }  # fmt: skip


def deliberate(jurors: list[Juror], rule: str, on_tie: str = "wrong",
               min_votes: int = 1) -> JuryResult:
    """Every input line any judge has, in order: the verdict and the agreement."""
    lines = sorted({line for juror in jurors for line in juror.rows})
    weights = [j.weight for j in jurors]
    labels: list[list[bool | None]] = []
    warnings = []
    for juror in jurors:
        absent = len(lines) - len(juror.rows)
        if absent:
            warnings.append(f"{juror.label}: no row for {absent} input lines (abstains there)")
    for line in lines:
        labels.append([None if line not in j.rows else judge_verdict(j.rows[line])
                       for j in jurors])
    verdicts = [aggregate(votes, rule, weights, on_tie, min_votes) for votes in labels]
    complete = [[sum(1 for v in votes if v), sum(1 for v in votes if v is False)]
                for votes in labels if all(v is not None for v in votes)]
    return JuryResult(rule, on_tie, jurors, lines, verdicts,
                      fleiss_kappa(complete), krippendorff_alpha(labels), warnings)


def disagreeing_first(result: JuryResult) -> list[int]:
    """Row indices with a split vote, the most even splits first (then input order)."""
    split = [i for i, v in enumerate(result.verdicts) if v.split > 0]
    return sorted(split, key=lambda i: (-result.verdicts[i].split, result.lines[i]))
