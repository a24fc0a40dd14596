"""Running the examples of README.md and docs/*.md, so that what they show stays true.

* A ```` ```console ```` block is a terminal session: each ``$ command`` line (continued
  with a trailing ``\\``) is run with bash in a sandbox folder and what it prints (stdout and
  stderr, as a terminal shows them, at 80 columns) must equal the lines below it. In the
  expected text, ``...`` stands for any text within a line, and a line holding only ``...``
  for any number of lines; a last line ``(exit status N)`` says the command must exit with N
  (otherwise it must exit 0).
* A ```` ```pycon ```` block is a Python session, run as a doctest in the same sandbox.
* In every other shell block (```` ```bash ````, ``sh``, ``shell``), each ``hopscore ...``
  command is checked against the real command line: the command exists and so does every
  option it uses, with a valid value where the option has choices. Those blocks show commands
  that need something a test cannot have (a hosted model, a Hub download, a GPU server), so
  they are parsed, not run.

The sandbox holds links to the checkout's ``src``, ``tests``, ``bench`` and ``docs`` (so paths
read as in a fresh clone), a ``hopscore`` command on ``PATH`` that runs this checkout, and the
environment of :func:`sandbox_env`: a private cache, and an OpenAI-compatible stand-in server
(:mod:`tests.stub_models`) as ``OPENAI_BASE_URL`` and ``JUDGE_BASE_URL``.
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHELL_LANGUAGES = ("bash", "sh", "shell", "zsh")
_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+|~~~+)\s*(?P<info>[^\n`]*)$")
_EXIT = re.compile(r"^\(exit status (\d+)\)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def blocks(page: Path) -> Iterator[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        fence, info = match["fence"], match["info"].strip().split()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][len(match["indent"]):])
            j += 1
        yield Block(page, i + 1, info[0].lower() if info else "", "\n".join(body))
        i = j + 1


@dataclass(frozen=True)
class Step:
    command: str
    expected: list[str]
    status: int


def console_steps(block: Block) -> list[Step]:
    steps: list[Step] = []
    command: list[str] | None = None
    expected: list[str] = []

    def close() -> None:
        if command is None:
            return
        status = 0
        while expected and not expected[-1].strip():
            expected.pop()
        if expected and _EXIT.match(expected[-1].strip()):
            status = int(_EXIT.match(expected.pop().strip()).group(1))  # type: ignore[union-attr]
        steps.append(Step("\n".join(command), list(expected), status))

    continued = False
    for line in block.text.splitlines():
        if continued and command is not None:
            command.append(line)
            continued = line.endswith("\\")
            continue
        if line.startswith("$ "):
            close()
            command, expected = [line[2:]], []
            continued = line.endswith("\\")
        elif command is None:
            if line.strip():
                raise AssertionError(f"{block.where}: console text before the first '$ ' line")
        else:
            expected.append(line)
    close()
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """``...`` within a line matches any text; a line of ``...`` matches any lines."""
    patterns = [None if line.strip() == "..." else
                re.compile("^" + ".*".join(re.escape(part) for part in line.split("...")) + "$")
                for line in expected]

    def match(p: int, a: int) -> bool:
        if p == len(patterns):
            return a == len(actual)
        pattern = patterns[p]
        if pattern is None:
            return any(match(p + 1, k) for k in range(a, len(actual) + 1))
        return a < len(actual) and pattern.match(actual[a]) is not None and match(p + 1, a + 1)

    return match(0, 0)


def normalized(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def make_sandbox(root: Path) -> Path:
    """The folder the examples run in, laid out like a clone of the repository."""
    root.mkdir(parents=True, exist_ok=True)
    for name in ("src", "tests", "bench", "docs"):
        link = root / name
        if not link.exists():
            link.symlink_to(REPO / name)
    bin_dir = root / ".bin"
    bin_dir.mkdir(exist_ok=True)
    launcher = bin_dir / "hopscore"
    launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m hopscore "$@"\n',
                        encoding="utf-8")
    launcher.chmod(0o755)
    return root


def sandbox_env(root: Path, model_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OPENAI_", "JUDGE_", "ANTHROPIC_", "HOPSCORE_"))}
    env.update({
        "PATH": f"{root / '.bin'}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(REPO / "src"),
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "80",
        "LINES": "50",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "HOPSCORE_CACHE_DIR": str(root / ".cache"),
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "sk-stand-in",
        "JUDGE_BASE_URL": model_url,
        "JUDGE_API_KEY": "sk-stand-in",
    })
    return env


def run_step(step: Step, root: Path, env: dict[str, str], timeout: float = 300) -> str | None:
    """Run one console step; None when it printed what the page shows, else what differs."""
    proc = subprocess.run(["bash", "-c", step.command], cwd=root, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    actual = normalized(proc.stdout)
    problems = []
    if proc.returncode != step.status:
        problems.append(f"exit status {proc.returncode}, expected {step.status}")
    if not matches(step.expected, actual):
        problems.append("output differs")
    if not problems:
        return None
    return ("; ".join(problems) + "\n--- expected\n" + "\n".join(step.expected)
            + "\n--- actual\n" + "\n".join(actual))


def run_pycon(block: Block, root: Path, globs: dict[str, object]) -> str | None:
    """Run a Python session; ``globs`` is shared by the sessions of one page, as in one
    interpreter."""
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block.text, globs, block.where, str(block.page), block.line)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    cwd = Path.cwd()
    os.chdir(root)
    try:
        runner.run(test, out=out.append, clear_globs=False)
    finally:
        os.chdir(cwd)
    globs.update(test.globs)  # DocTest copies its globals: hand them to the next session
    return "".join(out) if runner.failures else None


# --- shell blocks that are parsed, not run -------------------------------------------------


def shell_commands(block: Block) -> Iterator[list[str]]:
    """Each ``hopscore ...`` command of a shell block, as words."""
    joined = block.text.replace("\\\n", " ")
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("$ "):
            line = line[2:]
        for part in re.split(r"&&|\|\||;|\|", line):
            try:
                words = shlex.split(part, comments=True)
            except ValueError:
                continue
            while words and "=" in words[0] and not words[0].startswith("-"):
                words.pop(0)  # VAR=value prefixes
            if words and Path(words[0]).name == "hopscore":
                yield words[1:]


def check_command(words: list[str]) -> str | None:
    """None when the command and every option exist (and choices are valid), else why not."""
    import typer.main

    from hopscore.cli import app

    command: Any = typer.main.get_command(app)
    context = type(command).context_class
    ctx = context(command)
    rest = list(words)
    path = ["hopscore"]
    while hasattr(command, "list_commands") and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            return f"no command {' '.join([*path, rest[0]])!r}"
        path.append(rest.pop(0))
        command = sub
        ctx = context(command, parent=ctx)
    if hasattr(command, "list_commands") and not any(w in ("-h", "--help") for w in rest):
        return f"{' '.join(path)!r} needs a subcommand"
    options: dict[str, Any] = {}
    for param in command.params:
        for name in (*param.opts, *getattr(param, "secondary_opts", ())):
            options[name] = param
    options.setdefault("--help", None)  # type: ignore[arg-type]
    options.setdefault("-h", None)  # type: ignore[arg-type]
    i = 0
    while i < len(rest):
        word = rest[i]
        i += 1
        if word == "--":
            break
        if not word.startswith("-") or word == "-" or re.fullmatch(r"-\d.*", word):
            continue
        name, _, inline = word.partition("=")
        if name not in options:
            return f"{' '.join(path)} has no option {name}"
        param = options[name]
        if param is None or getattr(param, "is_flag", False) or getattr(param, "count", False):
            continue
        value = inline if inline else (rest[i] if i < len(rest) else None)
        if not inline:
            i += 1
        choices = getattr(param.type, "choices", None)
        if choices is not None and value is not None \
                and not re.fullmatch(r"[A-Z_]+|<.*>|\$\w+", value) \
                and value not in choices:
            return f"{' '.join(path)} {name}: {value!r} is not one of {list(choices)}"
    return None
