"""The options of ``hopscore run`` that only some benchmarks read (``Benchmark.run_options``,
``Benchmark.reads_wiki_db``): their help names the benchmarks that declare them, and a run of a
benchmark given one it does not read warns that it is ignored. A plugin gets both by declaring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.benchmarks.strategyqa import StrategyQA
from hopscore.cli.help import with_declared
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import run_args


class TablesToo(StrategyQA):
    """A third-party benchmark that reads the tables folder too (a plugin, in this process)."""

    name = "tables-too"
    title = "TablesToo"
    run_options = ("--tables-dir",)


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(benchmarks, "_plugins", {
        "tables-too": (f"{__name__}:TablesToo", "tables-too")})
    yield


def test_the_built_ins_declare_what_they_read() -> None:
    readers = {option: [name for name in benchmarks.names()
                        if benchmarks.get(name).reads_run_option(option)]
               for option in ("--aliases", "--tables-dir", "--context-tokens", "--wiki-db",
                              "--wiki-pages", "--wiki-elements", "--corpus")}
    assert readers == {"--aliases": ["2wikimultihopqa"], "--tables-dir": ["hybridqa"],
                       "--context-tokens": ["hybridqa"], "--wiki-db": ["feverous"],
                       "--wiki-pages": ["feverous"], "--wiki-elements": ["feverous"],
                       "--corpus": []}


def test_the_placeholder_names_the_readers() -> None:
    assert with_declared("{benchmark titles reading: --tables-dir}: a folder.") == \
        "HybridQA: a folder."
    assert with_declared("({benchmark titles reading: --wiki-pages})") == "(FEVEROUS)"
    assert with_declared("{benchmark titles reading: --nothing}") == "no benchmark"


def test_a_plugin_is_named_by_declaring_the_option(plugin: None) -> None:
    assert benchmarks.get("tables-too").reads_run_option("--tables-dir")
    assert not benchmarks.get("tables-too").reads_run_option("--context-tokens")
    assert with_declared("{benchmark titles reading: --tables-dir}") == "HybridQA, TablesToo"
    assert with_declared("{benchmark titles reading: --context-tokens}") == "HybridQA"


def test_the_run_help_shows_the_titles_not_the_placeholder() -> None:
    import typer.main

    from hopscore.cli import app

    root = typer.main.get_command(app)
    command = root.get_command(type(root).context_class(root), "run")  # type: ignore[attr-defined]
    helps = {param.opts[0]: param.help for param in command.params if param.opts}
    assert helps["--tables-dir"].startswith("HybridQA: WikiTables-WithLinks folder")
    assert helps["--aliases"] == "2WikiMultihopQA id_aliases.json."
    assert helps["--context-tokens"] == "Budget for table + passages (HybridQA)."
    assert helps["--wiki-pages"] == "FEVEROUS open book: pages retrieved per claim."
    assert not any("{benchmark" in (text or "") for text in helps.values())


def _answer(prompt: str, attempt: int) -> Reply:
    return Reply("Answer: no")


def test_an_option_the_benchmark_does_not_read_is_ignored_with_a_warning(tmp_path: Path) -> None:
    tables = tmp_path / "tables"
    tables.mkdir()
    with FakeOpenAI(_answer) as server:
        given = run_cli(*run_args("strategyqa", server.base_url, tmp_path / "a", tmp_path / "c",
                                  "--limit", "1", "--tables-dir", tables,
                                  "--context-tokens", "500", "--wiki-pages", "3"))
        plain = run_cli(*run_args("strategyqa", server.base_url, tmp_path / "b", tmp_path / "c",
                                  "--limit", "1", "--context-tokens", "3000"))
    assert given.returncode == 0, given.stderr
    warned = [line for line in given.stderr.splitlines() if line.startswith("warning: ")]
    assert warned == [
        "warning: strategyqa does not read --tables-dir, so it is ignored (read by hybridqa)",
        "warning: strategyqa does not read --context-tokens, so it is ignored (read by "
        "hybridqa)",
        "warning: strategyqa does not read --wiki-pages, so it is ignored (read by feverous)",
    ]
    # given its default, an option is still given: the user said it
    assert plain.returncode == 0, plain.stderr
    assert "does not read --context-tokens" in plain.stderr
    assert "does not read" not in "\n".join(
        line for line in plain.stderr.splitlines() if "--context-tokens" not in line)


def test_an_option_the_benchmark_reads_gives_no_warning(tmp_path: Path) -> None:
    with FakeOpenAI(_answer) as server:
        result = run_cli(*run_args("hybridqa", server.base_url, tmp_path / "a", tmp_path / "c",
                                   "--limit", "1", "--context-tokens", "500"))
    assert result.returncode == 0, result.stderr
    assert "does not read" not in result.stderr


def test_a_command_imported_before_the_root_group_is_built_still_fills_its_help() -> None:
    """The root group made after ``hopscore.cli.run`` was imported (an earlier command in the
    same process) builds ``run`` as the command line's own class, placeholders filled."""
    import importlib

    import typer.main

    from hopscore.cli import HelpCommand, app

    importlib.import_module("hopscore.cli.run")
    root = typer.main.get_command(app)
    command = root.get_command(type(root).context_class(root), "run")  # type: ignore[attr-defined]
    assert isinstance(command, HelpCommand)
    helps = {param.opts[0]: param.help for param in command.params if param.opts}
    assert not any("{benchmark" in (text or "") for text in helps.values())
