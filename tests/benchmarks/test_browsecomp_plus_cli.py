"""BrowseComp-Plus through the command line: scoring, errors, a model run, score directories."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.benchmarks._cli import cli_error
from tests.benchmarks.helpers import score
from tests.benchmarks.test_browsecomp_plus import SAMPLE, run_file


def test_cli_scores_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    from hopscore.launch import main

    with pytest.raises(SystemExit) as done:
        main(["score", "browsecomp-plus", "-g", str(SAMPLE / "gold"), "-p",
              str(SAMPLE / "run")])
    assert done.value.code in (0, None)
    out = capsys.readouterr().out
    assert "evidence_recall" in out and "accuracy" in out


def test_cli_bad_run_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_file(tmp_path / "run", "1", status=...)
    err = cli_error(capsys, "score", "browsecomp-plus", "-g", SAMPLE / "gold", "-p",
                    tmp_path / "run")
    assert "1.json" in err and "'status'" in err and "missing" in err


def test_model_run_writes_a_run_directory_that_scores_the_same(tmp_path: Path) -> None:
    from tests.conftest import run_cli
    from tests.openai_server import FakeOpenAI, Reply

    reply = "Explanation: the diary [101].\nAnswer: 1911\nConfidence: 80%"
    out = tmp_path / "out"
    with FakeOpenAI(lambda prompt, attempt: Reply(reply)) as server:
        result = run_cli("run", "browsecomp-plus", "--gold", SAMPLE / "gold", "--model",
                         "openai/m", "-o", out, "--cache-dir", tmp_path / "cache",
                         "--no-progress", env={"OPENAI_BASE_URL": server.base_url,
                                               "OPENAI_API_KEY": "x"})
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (out / "run").iterdir()) == [f"{i}.json" for i in range(1, 6)]
    record = json.loads((out / "run" / "1.json").read_text(encoding="utf-8"))
    assert record["status"] == "completed" and record["result"][-1]["output"] == reply
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))["metrics"]
    assert metrics == score("browsecomp-plus", SAMPLE / "gold", out / "run").metrics


def test_folders_rescore_into_their_score_directory(tmp_path: Path) -> None:
    """Gold and predictions that are folders are pinned by a digest of what they hold, so a
    score directory made from them takes the same scores again and refuses another gold."""
    from hopscore.files.digest import file_sha256
    from tests.conftest import run_cli

    gold = tmp_path / "gold"
    shutil.copytree(SAMPLE / "gold", gold)
    before = file_sha256(gold)
    args = ["score", "browsecomp-plus", "-g", gold, "-p", SAMPLE / "run", "-o", tmp_path / "s"]
    assert run_cli(*args).returncode == 0
    assert run_cli(*args).returncode == 0
    with (gold / "topics-qrels" / "qrel_golds.txt").open("a", encoding="utf-8") as handle:
        handle.write("1 Q0 102 1\n")
    assert file_sha256(gold) != before  # a change inside a sub-folder counts
    again = run_cli(*args)
    assert again.returncode == 2 and "Nothing was changed" in again.stderr


def test_calibration_error_in_metrics_json_and_under_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The run-level figures (Benchmark.run_figures) reach metrics.json and the table's notes,
    equal to the Python summary: every bin counted, and the official script's figure."""
    from hopscore.benchmarks import get
    from hopscore.benchmarks.browsecomp_plus.summary import summarize
    from hopscore.launch import main

    bench = get("browsecomp-plus")
    expected = summarize(bench.load_gold(SAMPLE / "gold"),
                         bench.load_predictions(SAMPLE / "run").by_id).calibration
    with pytest.raises(SystemExit) as done:
        main(["score", "browsecomp-plus", "-g", str(SAMPLE / "gold"), "-p", str(SAMPLE / "run"),
              "-o", str(tmp_path / "scored")])
    assert done.value.code in (0, None)
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text(encoding="utf-8"))
    assert expected.n > 0
    assert metrics["figures"] == {"calibration_error": pytest.approx(expected.error),
                                  "calibration_error_official": expected.official}
    out = " ".join(capsys.readouterr().out.split())
    assert f"calibration_error = {expected.error:.2f}: RMS calibration error" in out
    assert "bins of 100" in out and "every bin counted" in out
    assert f"calibration_error_official = {expected.official:.2f}" in out
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path / "scored"), "-o", str(tmp_path / "report.html")])
    assert done.value.code in (0, None)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert f"scored: note: calibration_error = {expected.error:.2f}: RMS calibration error" in html
