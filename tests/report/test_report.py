"""The HTML report as a file: self-contained, escaped, numbers equal to metrics.json."""

from __future__ import annotations

import base64
import gzip
import json
import re

from hopscore.report.build import context_text, safe_json
from hopscore.scores.display import bounds_text
from tests.analysis.builders import judge_rows, sql_row, write_jsonl
from tests.conftest import run_cli
from tests.report.conftest import XSS_ANSWER, XSS_QUESTION


def embedded_data(html: str) -> dict:
    match = re.search(
        r'<script type="application/json" id="report-data"( data-encoding="gzip\+base64")?>'
        r"(.*?)</script>", html, re.S)
    assert match is not None
    if match.group(1):
        return json.loads(gzip.decompress(base64.b64decode(match.group(2))))
    return json.loads(match.group(2))


def test_report_is_self_contained(report_case):
    html = report_case.html.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    assert "Content-Security-Policy" in html


def test_hostile_text_cannot_leave_its_element(report_case):
    html = report_case.html.read_text(encoding="utf-8")
    # exactly two script elements: the data and the browser code
    assert html.count("<script") == 2 and html.count("</script>") == 2
    assert "<script>alert" not in html and "<img src=x" not in html
    data = embedded_data(html)
    sample = next(s for s in data["samples"] if s["id"] == "q003")
    assert sample["q"] == XSS_QUESTION  # unchanged after decoding
    assert "<script>alert(3)</script>" in sample["ctx"]
    base = data["runs"].index(next(r for r in data["runs"] if r["label"] == "base"))
    assert sample["r"][base]["p"] == XSS_ANSWER
    # the flipped-examples table shows the prediction HTML-escaped
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_safe_json_round_trips_everything():
    value = {"a": "</script><!-- <script>", "b": "\u2028\u2029", "c": "&amp; <>", "d": [1.5, None]}
    text = str(safe_json(value))
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == value


def test_summary_numbers_equal_metrics_json(report_case):
    html = report_case.html.read_text(encoding="utf-8")
    for run, directory in (("base", report_case.base), ("new", report_case.new)):
        metrics = json.loads((directory / "metrics.json").read_text())
        for name, value in metrics["metrics"].items():
            pattern = (rf'data-run="{run}" data-metric="{name}" data-value="([^"]+)"[^>]*>'
                       rf'<span class="value">([^<]+)</span><span class="pm"> ([^<]+)</span>')
            match = re.search(pattern, html)
            assert match, (run, name)
            assert float(match.group(1)) == value
            assert match.group(2) == f"{100 * value:.2f}"
            ci = metrics["ci"][name]
            assert match.group(3) == bounds_text(value, ci["low"], ci["high"])


def test_browser_data_has_runs_questions_context_and_categories(report_case):
    data = embedded_data(report_case.html.read_text(encoding="utf-8"))
    assert [r["label"] for r in data["runs"]] == ["base", "new"]
    assert data["runs"][0]["ok"] == "em" and data["runs"][0]["baseline"]
    assert len(data["samples"]) == 120
    first = data["samples"][0]
    assert first["q"].startswith("Question number 0") and "## " in first["ctx"]
    assert "[0]*" in first["ctx"]  # supporting facts are starred
    base_entry = first["r"][0]
    assert base_entry["x"] == ["Paris", "Paris"] or base_entry["x"][0] is not None
    assert "answer x supporting facts" in data["runs"][0]["dims"]
    flips = {s["id"]: s["r"][1]["f"] for s in data["samples"] if s["r"][1]["f"]}
    assert flips and set(flips.values()) <= {"rw", "wr"}


def test_report_on_judge_and_sql_outputs(tmp_path):
    ids = [f"t{i}" for i in range(12)]
    a = write_jsonl(tmp_path / "judge_a.jsonl", judge_rows(ids, [i % 2 == 0 for i in range(12)]))
    b = write_jsonl(tmp_path / "judge_b.jsonl", judge_rows(ids, [i % 3 == 0 for i in range(12)]))
    out = tmp_path / "judge.html"
    result = run_cli("report", a, b, "-o", out, "--resamples", "200")
    assert result.returncode == 0, result.stderr
    data = embedded_data(out.read_text())
    assert data["runs"][0]["ok"] == "correct"
    assert data["samples"][0]["r"][0]["extra"]["reasoning"] == "compared"
    sql = write_jsonl(tmp_path / "sql.jsonl", [sql_row("s1", True, "exec_match"),
                                               sql_row("s2", False, "missing_gold_sql")])
    out = tmp_path / "sql.html"
    result = run_cli("report", sql, "-o", out, "--resamples", "200")
    assert result.returncode == 0, result.stderr
    html = out.read_text()
    assert "S2SQL failure reason" in html and "missing gold SQL" in html


def test_report_refuses_different_benchmarks(tmp_path, report_case):
    other = tmp_path / "other"
    other.mkdir()
    (other / "scores.jsonl").write_text((report_case.base / "scores.jsonl").read_text())
    metrics = json.loads((report_case.base / "metrics.json").read_text())
    metrics["benchmark"] = "bamboogle"
    (other / "metrics.json").write_text(json.dumps(metrics))
    result = run_cli("report", report_case.base, other, "-o", tmp_path / "x.html")
    assert result.returncode == 2 and "different benchmarks" in result.stderr


def test_context_text_of_plain_examples():
    from hopscore.benchmarks.base import Example

    assert context_text(None) is None
    assert '"question"' not in (context_text(Example(id="1", question="q")) or "")


def test_large_data_is_compressed_and_round_trips(report_case, tmp_path):
    out = tmp_path / "packed.html"
    result = run_cli("report", report_case.base, report_case.new, "--gold", report_case.gold,
                     "-o", out, "--resamples", "100", "--compress", "always")
    assert result.returncode == 0, result.stderr
    packed = out.read_text()
    assert 'data-encoding="gzip+base64"' in packed
    plain = embedded_data(report_case.html.read_text())
    assert embedded_data(packed)["samples"] == plain["samples"]
    result = run_cli("report", report_case.base, "-o", out, "--compress", "sometimes")
    assert result.returncode == 2 and "--compress must be one of" in result.stderr


def test_embedded_data_chooses_the_encoding():
    from hopscore.report.build import COMPRESS_ABOVE
    from hopscore.report.build import embedded_data as encode

    small = {"a": "</script>"}
    assert encode(small, "auto")[1] is None
    assert encode(small, "always")[1] == "gzip+base64"
    big = {"a": "x" * (COMPRESS_ABOVE + 1)}
    assert encode(big, "auto")[1] == "gzip+base64"
    assert encode(big, "never")[1] is None


def test_report_mixing_a_run_and_a_judge_file(report_case, tmp_path):
    judge = write_jsonl(tmp_path / "judge.jsonl",
                        judge_rows([f"q{i:03d}" for i in range(10)], [True] * 10))
    out = tmp_path / "mixed.html"
    result = run_cli("report", report_case.base, judge, "-o", out, "--resamples", "100")
    assert result.returncode == 0, result.stderr
    assert "no comparison of judge with base" in result.stderr
    data = embedded_data(out.read_text())
    assert [r["kind"] for r in data["runs"]] == ["scores", "judge"]
    assert len(data["samples"]) == 120
