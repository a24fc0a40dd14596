"""``validate-predictions`` and ``hdr-tasks`` name the agent benchmark only by what it declares
(issue 24): their panel in ``hopscore --help`` is its title, their help its abbreviation
(``Benchmark.short_title``), and the tasks are read by its ``load_agent_tasks``."""

from __future__ import annotations

from typing import Any

from hopscore.cli.help import with_declared


def _command(name: str) -> Any:
    import typer.main

    from hopscore.cli import app

    root = typer.main.get_command(app)
    return root.get_command(type(root).context_class(root), name)  # type: ignore[attr-defined]


def test_the_short_titles_placeholder() -> None:
    assert with_declared("{benchmark short titles: agent} tasks") == "HDR tasks"
    assert with_declared("{benchmark titles: agent}") == "HybridDeepResearch"
    assert with_declared("{benchmark short titles: qa}").startswith("HotpotQA, ")  # no short


def test_the_help_shows_the_declared_names_not_the_placeholders() -> None:
    validate = _command("validate-predictions")
    assert validate.help.startswith("Check an HDR predictions file and report every problem")
    argument = next(param for param in validate.params if param.name == "predictions")
    assert argument.help == "HDR submission: JSON Lines of {instance_id, final_answer}."
    tasks = _command("hdr-tasks")
    assert tasks.help.startswith("Check an HDR task set (and apply the v2 overlay)")
    assert validate.rich_help_panel == tasks.rich_help_panel == "{benchmark titles: agent}"


def test_the_overview_panel_is_the_agent_benchmarks_title() -> None:
    from tests.conftest import run_cli

    result = run_cli("--help", env={"COLUMNS": "100", "TERM": "dumb"})
    assert result.returncode == 0
    assert "─ HybridDeepResearch ─" in result.stdout and "{benchmark" not in result.stdout
