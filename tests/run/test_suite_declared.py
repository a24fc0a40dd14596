"""``hopscore suite mcr`` reads what the benchmarks declare (issue 24): its datasets, their order,
the default of ``--datasets``, the help's list of them and of where their gold lies
(``Benchmark.suite_files``, ``suite_title``, ``suite_layout``, ``suite_writes``). A third-party
benchmark that declares its place joins the suite; one that does not is not in it."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hopscore import benchmarks
from hopscore.benchmarks.base import SuiteFiles
from hopscore.benchmarks.strategyqa import StrategyQA
from hopscore.cli.help import with_declared
from hopscore.run.suite import described, locate, suite_benchmarks, suite_writes
from tests.conftest import FIXTURES
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, load

BUILT_INS = ["strategyqa", "fermi", "quartz", "hotpotqa", "2wikimultihopqa", "bamboogle",
             "feverous"]


class InTheSuite(StrategyQA):
    """A third-party benchmark (a plugin, in this process) that declares its place in the
    suite: last, in ``toyqa/`` (or ``toy/``), ``gold.json`` before ``gold.jsonl``."""

    name = "toyqa"
    title = "ToyQA (yes / no)"
    suite_files = SuiteFiles(7, ("toyqa", "toy"), ("gold.json", "gold.jsonl"))
    suite_title = "ToyQA"
    suite_layout = ""  # the default: the first folder, the files joined by "or"
    suite_writes = ("toyqa_joined.json",)


class NotInTheSuite(StrategyQA):
    """A plugin that declares nothing about the suite."""

    name = "elsewhere"
    title = "Elsewhere"
    suite_files = None
    suite_layout = "ignored/because.json"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(benchmarks, "_plugins", {
        "toyqa": (f"{__name__}:InTheSuite", "toy-suite"),
        "elsewhere": (f"{__name__}:NotInTheSuite", "elsewhere")})
    yield


def test_the_built_ins_declare_the_suite() -> None:
    assert list(suite_benchmarks()) == BUILT_INS
    assert suite_writes() == ("fermi_realfp.json",)
    assert with_declared("its {benchmark suite count} datasets ({benchmark suite titles})") == (
        "its seven datasets (StrategyQA, Fermi, QuaRTz, HotpotQA, 2WikiMQA, Bamboogle, "
        "FEVEROUS)")
    assert with_declared("{benchmark suite layouts}.") == (
        "strategyqa/dev.json; fermi/train_realfp.json + val_realfp.json (joined, deduplicated "
        "by question); quartz/dev.jsonl; hotpotqa/hotpot_dev_fullwiki_v1.json or "
        "hotpot_dev_distractor_v1.json; 2wikimultihopqa/dev.json; "
        "bamboogle/bamboogle_prerelease_random.csv (or Bamboogle_Prerelease.tsv, "
        "bamboogle.json); feverous/feverous_dev_challenges.jsonl.")


def test_the_suite_help_shows_what_is_declared_not_the_placeholders() -> None:
    command = _suite_command()
    assert command.help is not None and "{benchmark" not in command.help
    assert command.help.startswith("The MCR protocol on its seven datasets (StrategyQA, Fermi,")
    helps = {param.opts[0]: param.help for param in command.params if param.opts}
    assert helps["--datasets"] == "Comma-separated subset, in table order (default: all seven)."


def test_a_plugin_that_declares_its_place_joins_the_suite(plugins: None) -> None:
    assert list(suite_benchmarks()) == [*BUILT_INS, "toyqa"]
    assert described()[-1] == ("ToyQA", "toyqa/gold.json or gold.jsonl")
    assert suite_writes() == ("fermi_realfp.json", "toyqa_joined.json")
    assert with_declared("all {benchmark suite count}: {benchmark suite titles}") == (
        "all eight: StrategyQA, Fermi, QuaRTz, HotpotQA, 2WikiMQA, Bamboogle, FEVEROUS, ToyQA")
    assert with_declared("{benchmark suite layouts}").endswith(
        "; feverous/feverous_dev_challenges.jsonl; toyqa/gold.json or gold.jsonl")


def test_the_lookup_honours_the_declared_folders_and_files(plugins: None,
                                                           tmp_path: Path) -> None:
    missing = locate(tmp_path, "toyqa", tmp_path)
    assert missing.gold is None and missing.looked_for == "toyqa|toy/{gold.json, gold.jsonl}"
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "gold.jsonl").write_text("[]")
    assert locate(tmp_path, "toyqa", tmp_path).gold == tmp_path / "toy" / "gold.jsonl"
    (tmp_path / "toy" / "gold.json").write_text("[]")  # the first file found wins
    assert locate(tmp_path, "toyqa", tmp_path).gold == tmp_path / "toy" / "gold.json"
    (tmp_path / "toyqa").mkdir()
    (tmp_path / "toyqa" / "gold.jsonl").write_text("[]")  # and the first folder holding one
    assert locate(tmp_path, "toyqa", tmp_path).gold == tmp_path / "toyqa" / "gold.jsonl"


def test_a_plugin_that_declares_nothing_is_not_in_it(plugins: None, tmp_path: Path) -> None:
    assert "elsewhere" not in suite_benchmarks()
    assert "ignored" not in with_declared("{benchmark suite layouts}")
    with pytest.raises(Exception, match="Elsewhere is not in the MCR suite"):
        locate(tmp_path, "elsewhere", tmp_path)


def test_the_suite_runs_a_plugin_by_default(plugins: None, tmp_path: Path) -> None:
    """No --datasets: every benchmark of the suite, the plugin last; only its folder is there."""
    from hopscore.cli import app

    data = tmp_path / "data"
    (data / "toyqa").mkdir(parents=True)
    shutil.copy(FIXTURES / "strategyqa" / "gold.json", data / "toyqa" / "gold.json")
    with FakeOpenAI(lambda prompt, attempt: Reply("Thinking. So the answer is: yes.")) as server:
        result = CliRunner().invoke(app, [
            "suite", "mcr", "--data-dir", str(data), "--model", MODEL, "--base-url",
            server.base_url, "-o", str(tmp_path / "suite"), "--no-cache", "--no-progress",
            "--limit", "3"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output  # the built-in datasets are missing
    rows = {row["benchmark"]: row for row in load(tmp_path / "suite" / "suite.json")["datasets"]}
    assert list(rows) == [*BUILT_INS, "toyqa"]
    assert {name for name, row in rows.items() if row["status"] == "missing"} == set(BUILT_INS)
    assert rows["toyqa"]["status"] == "ok" and rows["toyqa"]["mcr"]["n"] == 3


def _suite_command() -> object:
    import typer.main

    from hopscore.cli import app

    root = typer.main.get_command(app)
    suite = root.get_command(type(root).context_class(root), "suite")  # type: ignore[attr-defined]
    return suite.get_command(type(suite).context_class(suite), "mcr")
