"""The report's judge sections: a jury (each judge's accuracy, Fleiss' kappa / Krippendorff's
alpha, split rows first), judge vs exact metrics by disagreement kind, and the calibration of
stated confidences (ECE with its binning, reliability diagram)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from hopscore.analysis.confidence import reliability
from hopscore.cli.jury import write_jury
from hopscore.inference.raters import fleiss_kappa, krippendorff_alpha
from hopscore.judge.jury import Juror, deliberate
from tests.conftest import run_cli

#: rows x judges: True / False / None (no verdict)
VOTES = [
    (True, True, True), (True, False, True), (False, False, False), (True, False, None),
    (False, True, False), (True, True, True), (False, False, True), (True, True, True),
]


def judge_row(line: int, vote: bool | None, confidence: float | None = None) -> dict[str, Any]:
    return {"id": f"q{line}", "question": f"question {line}", "response": f"answer {line}",
            "correct_answer": f"gold {line}", "correct": vote, "parse_ok": vote is not None,
            "raw_judge_output": f"correct: {vote}", "confidence": confidence,
            "error": None if vote is not None else "unparsed",
            "judge": {"input_line": line}}


def write_jury_dir(tmp: Path) -> Path:
    jurors = [Juror(f"judge-{k}", f"model-{k}", "0" * 64, 1.0,
                    {line + 1: judge_row(line + 1, votes[k]) for line, votes in enumerate(VOTES)})
              for k in range(3)]
    write_jury(deliberate(jurors, "majority"), tmp)
    return tmp / "jury.jsonl"


def section(html: str, css_class: str) -> str:
    start = html.index(f'class="agreement {css_class}"')
    return html[start:html.index("\n</div>\n", start)]


def cells(fragment: str, table: str) -> list[list[str]]:
    body = fragment[fragment.index(f'class="{table}') :]
    body = body[: body.index("</table>")]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r)]
            for r in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>")[1])]


def test_jury_section(tmp_path: Path) -> None:
    jury = write_jury_dir(tmp_path)
    html_path = tmp_path / "report.html"
    result = run_cli("report", jury, "-o", html_path)
    assert result.returncode == 0, result.stderr
    html = html_path.read_text(encoding="utf-8")
    part = section(html, "jury")
    judges = cells(part, "numbers jury-judges")
    for k, (name, accuracy, decided, rows) in enumerate(judges):
        said = [v[k] for v in VOTES if v[k] is not None]
        assert name == f"judge-{k}" and int(decided) == len(said) and int(rows) == len(VOTES)
        assert accuracy == f"{100 * sum(said) / len(said):.2f}"
    complete = [[sum(v), 3 - sum(v)] for v in VOTES if None not in v]
    fleiss = fleiss_kappa(complete)
    alpha = krippendorff_alpha([list(v) for v in VOTES])
    assert f'<span class="fleiss">{fleiss.text()}</span>' in part
    assert f'<span class="alpha">{alpha.text()}</span>' in part
    split = cells(part, "flips jury-split")
    # the 1-1 tie (q4) first (split 0.50), then the 2-1 rows in input order
    assert [r[0] for r in split] == ["q4", "q2", "q5", "q7"]
    assert split[0][1] == "0.50" and "tie: wrong" in split[0][3]
    assert all(r[1] == "0.33" for r in split[1:])


def test_jury_agreement_undefined_is_stated(tmp_path: Path) -> None:
    jurors = [Juror(f"judge-{k}", "m", "0" * 64, 1.0,
                    {line: judge_row(line, True) for line in (1, 2, 3)}) for k in range(2)]
    write_jury(deliberate(jurors, "majority"), tmp_path)
    html_path = tmp_path / "report.html"
    assert run_cli("report", tmp_path / "jury.jsonl", "-o", html_path).returncode == 0
    part = section(html_path.read_text(encoding="utf-8"), "jury")
    assert re.search(r'<span class="fleiss">undefined: [^<]+</span>', part)
    assert re.search(r'<span class="alpha">undefined: [^<]+</span>', part)
    assert "The judges agree on every row." in part


def write_judged_dir(tmp: Path) -> Path:
    """A ``score --judge`` directory: scores with em, f1 and judge_accuracy, and metrics.json
    with its judge block."""
    rows = [  # prediction, gold, em, judge
        ("Paris", "Paris", 1, 1), ("it is Paris, France", "Paris", 0, 1),
        ("the answer is Lyon city", "Lyon", 0, 1), ("1,000 km", "1000 kilometres", 0, 1),
        ("Rome", "Rome", 1, 0), ("Oslo", "Bergen", 0, 0), ("Milan", "Turin", 0, 1),
        ("", "Nice", 0, 0),
    ]
    tmp.mkdir()
    with (tmp / "scores.jsonl").open("w", encoding="utf-8") as handle:
        for i, (pred, gold, em, judged) in enumerate(rows):
            handle.write(json.dumps({"id": f"r{i}", "prediction": pred, "gold": [gold],
                                     "metrics": {"em": em, "f1": float(em), "cover_em": em,
                                                 "judge_accuracy": judged}}) + "\n")
    n = len(rows)
    metrics = {"benchmark": None, "n_gold": n,
               "metrics": {"em": sum(r[2] for r in rows) / n, "f1": sum(r[2] for r in rows) / n,
                           "cover_em": sum(r[2] for r in rows) / n,
                           "judge_accuracy": sum(r[3] for r in rows) / n},
               "judge": {"compared_with": "em", "model": "j"}}
    (tmp / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with (tmp / "judge.jsonl").open("w", encoding="utf-8") as handle:
        for i, (pred, gold, _, judged) in enumerate(rows):
            handle.write(json.dumps({"id": f"r{i}", "response": pred, "correct_answer": gold,
                                     "correct": bool(judged), "parse_ok": True,
                                     "confidence": [95, 80, 70, 85, 100, 20, 90, 5][i]}) + "\n")
    return tmp


def test_judge_vs_exact_metrics_and_confidence(tmp_path: Path) -> None:
    run = write_judged_dir(tmp_path / "judged")
    html_path = tmp_path / "report.html"
    result = run_cli("report", run, "-o", html_path)
    assert result.returncode == 0, result.stderr
    html = html_path.read_text(encoding="utf-8")
    part = section(html, "judge-kinds")
    head = part[part.index("judge-metrics"):].split("</thead>")[0]
    header = re.findall(r"<th>([^<]+)</th>", head)
    assert header == ["em", "f1", "cover_em", "judge_accuracy"]  # compared metric first, judge last
    assert cells(part, "numbers judge-metrics") == [["25.00", "25.00", "25.00", "62.50"]]
    kinds = cells(part, "numbers disagreement-kinds")
    assert kinds == [["verbose answer (judge right)", "2"],
                     ["matches the gold (judge wrong)", "1"],
                     ["numbers and units (judge right)", "1"],
                     ["different answer (judge right)", "1"]]
    rows = cells(part, "flips disagreement-rows")
    assert [r[0] for r in rows] == ["r1", "r2", "r4", "r3", "r6"]  # most frequent kind first
    assert rows[0][2:4] == ["✓", "✗"] and rows[2][2:4] == ["✗", "✓"]
    calibration = section(html, "confidence")
    expected = reliability([c / 100 for c in (95, 80, 70, 85, 100, 20, 90, 5)],
                           [True, True, True, True, False, False, True, False])
    assert f'<span class="ece">{100 * expected.ece:.2f}</span>' in calibration
    assert "10 equal-width bins over [0, 1]" in calibration
    bins = cells(calibration, "numbers reliability-bins")
    assert len(bins) == 10 and [int(b[1]) for b in bins] == [b.n for b in expected.bins]
    assert calibration.count("<rect") == sum(1 for b in expected.bins if b.n)


@pytest.mark.parametrize("confidence", [None, "high", True])
def test_no_confidence_no_calibration_section(tmp_path: Path, confidence: Any) -> None:
    path = tmp_path / "judge.jsonl"
    path.write_text("".join(json.dumps({**judge_row(i, i % 2 == 0), "confidence": confidence})
                            + "\n" for i in range(1, 5)), encoding="utf-8")
    html_path = tmp_path / "report.html"
    assert run_cli("report", path, "-o", html_path).returncode == 0
    html = html_path.read_text(encoding="utf-8")
    assert 'class="agreement confidence"' not in html and 'class="agreement jury"' not in html
