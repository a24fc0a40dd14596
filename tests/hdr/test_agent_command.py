"""``hopscore agent`` and its old spelling ``hopscore run NAME`` (issue 24): the same run, the
same files; the old spelling says on stderr that it is now ``hopscore agent``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.hdr.world import SCRIPTS, build_world, scripted
from tests.openai_server import FakeOpenAI
from tests.test_golden import _files, _normalize


def _run(cwd: Path, server: FakeOpenAI, *command: str) -> tuple[dict[str, str], str, str]:
    build_world(cwd / "hdr")
    result = run_cli(*command, "--tasks", "hdr/tasks.jsonl", "--db-root", "hdr/dbs",
                     "--corpus", "hdr/corpus.jsonl", "--model", "openai/scripted-agent",
                     "--base-url", server.base_url, "--judge-model", "scripted-judge",
                     "--judge-base-url", server.base_url, "--output-dir", "run-hdr",
                     "--no-cache", "--no-progress", "--concurrency", "3", "--fixed-concurrency",
                     cwd=cwd, env={"COLUMNS": "1000"})
    assert result.returncode == 0, result.stderr
    files = {}
    for name, text in _files(cwd / "run-hdr").items():
        if name == "config.json":  # the command line it was given, as it was given
            document = json.loads(text)
            document.pop("command")
            text = json.dumps(document)
        files[name] = _normalize(text, cwd, loose=True)
    return files, _normalize(result.stdout, cwd, loose=True), result.stderr


def test_agent_writes_what_the_old_spelling_writes(tmp_path: Path) -> None:
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        new, new_out, new_err = _run(tmp_path / "agent", server, "agent")
        old, old_out, old_err = _run(tmp_path / "run", server, "run", "hybrid-deep-research")
    assert new == old
    assert new_out == old_out
    moved = "hopscore run hybrid-deep-research is now hopscore agent (this form keeps working)\n"
    assert old_err == moved + new_err and moved not in new_err


def test_the_old_spelling_takes_the_other_names_and_gold(tmp_path: Path) -> None:
    """``run hdr`` and ``--gold`` for ``--tasks``, as before; a QA benchmark refuses the
    agent's options, the agent a QA benchmark."""
    build_world(tmp_path / "hdr")
    result = run_cli("run", "--model", "openai/x", "hdr", "--gold", "hdr/tasks.jsonl",
                     "--max-turns", "2", "--db-root", "hdr/missing", "--corpus",
                     "hdr/corpus.jsonl", "--judge-model", "j", cwd=tmp_path)
    assert "hopscore run hdr is now hopscore agent" in result.stderr
    assert result.returncode == 2 and "hdr/missing" in result.stderr
    qa = run_cli("run", "hotpotqa", "--gold", "g.json", "--model", "openai/x", "--max-turns",
                 "2", cwd=tmp_path)
    assert qa.returncode == 2 and "--max-turns" in qa.stderr and "now" not in qa.stderr
    # a QA benchmark gets the search agent (tests/run/test_search_agent.py), not the tool agent
    wrong = run_cli("agent", "hotpotqa", "--agent", "tools", "--model", "openai/x",
                    cwd=tmp_path)
    assert wrong.returncode == 2 and "hopscore run hotpotqa" in wrong.stderr
