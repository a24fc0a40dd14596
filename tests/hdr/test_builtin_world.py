"""The built-in HybridDeepResearch world: its files are in the release's formats and agree with
themselves (gold SQL, outputs, search answers in the corpus), and ``hopscore run
hybrid-deep-research`` with no task files runs on it end to end."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hopscore.agent.knowledge import KnowledgeBase
from hopscore.agent.world import databases, materialize
from hopscore.benchmarks.agent_tasks import family_counts, load_tasks
from hopscore.run.search import Bm25Search
from tests.conftest import run_cli
from tests.hdr.world import judge_reply, tool_calls
from tests.openai_server import FakeOpenAI, Reply

RELEASE_FIELDS = ["id", "hybrid_type", "final_question", "hint", "db", "final_answer", "sql",
                  "sql_question", "sql_output", "search_question", "search_answer",
                  "search_reasoning_chain", "entity", "sql_source", "sql_knowledge_id",
                  "sql_pattern_id"]


def test_world_files_are_in_the_release_formats_and_consistent(tmp_path: Path) -> None:
    world = materialize(tmp_path)
    assert materialize(tmp_path) == world  # built once, then reused
    tasks, _ = load_tasks(world.tasks)
    assert family_counts(tasks) == {"S2SQL": 6, "SQL2S": 6, "Parallel": 6}
    assert [t.family.label for t in tasks] == ["S2SQL"] * 6 + ["SQL2S"] * 6 + ["Parallel"] * 6
    corpus = " ".join(json.loads(line)["text"] for line in
                      world.corpus.read_text(encoding="utf-8").splitlines())
    Bm25Search(world.corpus)  # reads as the agent's search backend
    for db in databases():
        assert (world.db_root / db / f"{db}_template.sqlite").is_file()
        assert KnowledgeBase.load(world.db_root, db) is not None
    for task in tasks:
        record = task.record
        assert list(record) == RELEASE_FIELDS
        con = sqlite3.connect(world.db_root / task.db / f"{task.db}_template.sqlite")
        rows = [list(r) for r in con.execute(record["sql"]).fetchall()]
        con.close()
        assert json.loads(record["sql_output"]) == rows, task.id
        if task.family.label == "S2SQL":
            assert record["final_answer"] == f"```sql\n{record['sql']}\n```"
        else:
            # the search leg is answered by the corpus, the SQL leg by the database
            for part in record["search_answer"].split(", "):
                assert part in corpus, (task.id, part)
            if task.family.label == "Parallel":
                assert [record["final_answer"]] in rows
            else:
                assert rows == [[record["entity"]]]
        assert record["entity"] in corpus or task.family.label == "Parallel"


def agent(tasks: dict[str, dict[str, Any]]) -> Any:
    """A scripted agent: one run_sql call with the gold SQL, one web search, then the gold."""

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        if "tools" not in body:
            return judge_reply(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        question = user.split("## Final question\n")[1].split("\n\n")[0].strip()
        task = tasks[question]
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        steps: list[list[tuple[str, Any]]] = [
            [("run_sql", {"sql": task["sql"]})],
            [("web_search", {"query": task["search_question"]})],
            [("final_answer", {"answer": task["final_answer"]})],
        ]
        return Reply(None, tool_calls=tool_calls(steps[min(turn, 2)], turn))

    return respond


def test_run_without_task_files_uses_the_builtin_world(tmp_path: Path) -> None:
    world = materialize(tmp_path / "cache")
    tasks = {json.loads(line)["final_question"]: json.loads(line)
             for line in world.tasks.read_text(encoding="utf-8").splitlines()}
    out = tmp_path / "run"
    with FakeOpenAI(body_responder=agent(tasks)) as server:
        result = run_cli("run", "hybrid-deep-research", "--model", "openai/agent", "--base-url",
                         server.base_url, "-o", out, "--cache-dir", tmp_path / "cache",
                         "--no-progress", "--resamples", "0", env={"JUDGE_MODEL": ""})
        judged = sum(1 for entry in server.log if "tools" not in entry.body)
    assert result.returncode == 0, result.stderr
    assert "built-in world" in result.stderr and "also judges" in result.stderr
    assert judged == 12  # SQL2S and Parallel by the judge (the agent's own model here)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_gold"] == 18
    assert metrics["metrics"]["accuracy"] == pytest.approx(1.0)
    config = json.loads((out / "config.json").read_text())
    assert str(world.tasks) in json.dumps(config)


def test_partial_world_options_are_an_error(tmp_path: Path) -> None:
    result = run_cli("run", "hybrid-deep-research", "--model", "openai/agent", "--base-url",
                     "http://127.0.0.1:9/v1", "--tasks", tmp_path / "tasks.jsonl",
                     "-o", tmp_path / "x")
    assert result.returncode == 2
    assert "--db-root" in result.stderr
