"""README.md and docs/: every example runs (tests/docs_runner.py says how), every link
resolves, the architecture page names real files, and the README stays a short front page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import docs_runner as d
from tests.openai_server import FakeOpenAI
from tests.stub_models import docs_model

PAGES = d.pages()
README_MAX_LINES = 160


@pytest.fixture(scope="module")
def model_url() -> Iterator[str]:
    with FakeOpenAI(body_responder=docs_model(d.REPO / "src/hopscore/benchmarks")) as server:
        yield server.base_url


def _id(page: Path) -> str:
    return str(page.relative_to(d.REPO))


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_examples_print_what_the_page_shows(page: Path, tmp_path: Path, model_url: str) -> None:
    root = d.make_sandbox(tmp_path / "clone")
    env = d.sandbox_env(root, model_url)
    failures = []
    ran = 0
    globs: dict[str, object] = {"JUDGE_URL": model_url}
    for block in d.blocks(page):
        if block.language == "console":
            for step in d.console_steps(block):
                ran += 1
                problem = d.run_step(step, root, env)
                if problem:
                    failures.append(f"{block.where}: $ {step.command}\n{problem}")
        elif block.language == "pycon":
            ran += 1
            problem = d.run_pycon(block, root, globs)
            if problem:
                failures.append(f"{block.where}:\n{problem}")
    if not ran:
        pytest.skip("no console or pycon examples on this page")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_shown_commands_exist(page: Path) -> None:
    problems = []
    for block in d.blocks(page):
        if block.language in d.SHELL_LANGUAGES:
            for words in d.shell_commands(block):
                problem = d.check_command(words)
                if problem:
                    problems.append(f"{block.where}: hopscore {' '.join(words)}: {problem}")
    assert not problems, "\n".join(problems)


_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_links_resolve(page: Path) -> None:
    missing = []
    for match in _LINK.finditer(page.read_text(encoding="utf-8")):
        target = match["target"].split("#")[0]
        if not target or "://" in target or target.startswith("mailto:"):
            continue
        if not (page.parent / target).exists():
            missing.append(target)
    assert not missing, f"{_id(page)} links to missing files: {missing}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    """Any detail is two clicks away: README -> a docs page."""
    readme = (d.REPO / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in sorted((d.REPO / "docs").glob("*.md"))
                if f"docs/{p.name}" not in readme]
    assert not unlinked, f"README.md does not link {unlinked}"


def test_readme_is_a_short_front_page() -> None:
    lines = (d.REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (d.REPO / "README.md").read_text(encoding="utf-8")
    quick = next(b for b in d.blocks(d.REPO / "README.md") if b.language in d.SHELL_LANGUAGES)
    commands = [line for line in quick.text.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2, "the quick start has exactly two set-up commands"
    assert "pytest" in commands[1]
    assert commands[1] in (d.REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "hopscore demo" in commands[0] and commands[0] in readme


_PATH = re.compile(r"`(?P<path>[a-z_]+(?:/[a-z_]+)*(?:\.py|/))`")


def test_the_architecture_page_is_true() -> None:
    page = (d.REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = d.REPO / "src" / "hopscore"
    named = {m["path"] for m in _PATH.finditer(page)}
    missing = sorted(p for p in named if not (package / p).exists()
                     and not (d.REPO / p).exists())
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"
    parts = sorted([f"{p.name}/" for p in package.iterdir()
                    if p.is_dir() and (p / "__init__.py").exists()]
                   + [p.name for p in package.glob("*.py") if p.name != "__init__.py"])
    absent = [p for p in parts if f"`{p}`" not in page]
    assert not absent, f"docs/architecture.md does not place {absent}"


def test_the_runner_matches_wildcards() -> None:
    assert d.matches(["a ... c", "...", "z"], ["a b c", "x", "y", "z"])
    assert d.matches(["...", "z"], ["z"])
    assert not d.matches(["a ... c"], ["a b d"])
    assert not d.matches(["a"], ["a", "b"])
