"""A hostile scripted model cannot change a database, hang the run or crash it: every case ends
with a recorded error and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from tests.hdr.world import ALL_TASKS, Turn, build_world, scripted
from tests.openai_server import FakeOpenAI, Reply

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
CROSS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 3000) "
         "SELECT count(*) FROM c a, c b, c d")
WIDE = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000) "
        "SELECT x, printf('%.5000c', 'w') AS pad, randomblob(3000) AS b FROM c")


def question(name: str) -> str:
    return f"Hostile case {name}: which city hosts the maker of the best seller?"


def hostile_tasks() -> list[dict[str, Any]]:
    names = ["writes", "endless", "huge", "malformed", "finals", "never", "stall", "broken"]
    tasks = []
    for index, name in enumerate(names):
        prefix = "parallel" if name in ("malformed", "finals") else "sql2s"
        tasks.append({"id": f"{prefix}_{index}_{name}", "final_question": question(name),
                      "hint": "", "db": "shop", "final_answer": "Springfield"})
    return tasks


def final(answer: str) -> tuple[str, Any]:
    return ("final_answer", {"answer": answer})


def scripts(db_root: Path) -> dict[str, list[Turn]]:
    writes = ["DELETE FROM products", "INSERT INTO products VALUES (9, 'x', 'y', 1, 'z')",
              "UPDATE products SET price = 0", "DROP TABLE sales",
              f"ATTACH DATABASE '{db_root}/evil.sqlite' AS evil",
              "SELECT 1; DROP TABLE products", "PRAGMA writable_schema = 1",
              f"VACUUM INTO '{db_root}/copy.sqlite'", "SELECT load_extension('/tmp/x')",
              "WITH x AS (SELECT 1) DELETE FROM products", "CREATE TEMP TABLE t(x)",
              "REPLACE INTO products VALUES (1, 'a', 'b', 1, 'c')"]
    return {
        "sql2s_0_writes": [[("run_sql", {"sql": sql}) for sql in writes], [final("Springfield")]],
        "sql2s_1_endless": [[("run_sql", {"sql": ENDLESS})], [("run_sql", {"sql": CROSS})],
                            [final("Springfield")]],
        "sql2s_2_huge": [[("run_sql", {"sql": WIDE})],
                         [("run_sql", {"sql": "SELECT randomblob(5000000) AS blob"})],
                         [final("Springfield")]],
        "parallel_3_malformed": [
            [("run_sql", "{not json"), ("run_sql", "[1]"), ("run_sql", ""),
             ("web_search", {"query": "acme", "count": "abc"}), ("rm_rf", {"path": "/"}),
             ("", "{}"), ("web_fetch", {"url": ["x"]})],
            [("final_answer", '{"answer": ""}')],
            [final("Springfield")]],
        "parallel_4_finals": [
            [final("Springfield"), final("Shelbyville")],
            [final("Springfield"), ("run_sql", {"sql": "SELECT 1"})],
            "I think the answer is Springfield.",
            [final("Springfield")]],
        "sql2s_5_never": [],  # the default below: SELECT 1 forever
        "sql2s_6_stall": [Reply("too late", delay=60)],
        "sql2s_7_broken": [Reply(status=500)],
    }


def test_hostile_model(tmp_path: Path) -> None:
    tasks = hostile_tasks()
    world = build_world(tmp_path, tasks)
    ALL_TASKS.extend(tasks)
    before = world.fingerprint()
    respond = scripted(scripts(world.db_root),
                       default=lambda turn: [("run_sql", {"sql": "SELECT 1"})])
    try:
        with FakeOpenAI(body_responder=respond) as server:
            result = run_cli(
                "run", "hybrid-deep-research", "--tasks", world.tasks, "--db-root",
                world.db_root, "--corpus", world.corpus, "--model", "openai/hostile",
                "--base-url", server.base_url, "--judge-model", "judge", "--judge-base-url",
                server.base_url, "-o", tmp_path / "run", "--no-cache", "--no-progress",
                "--concurrency", "4", "--max-turns", "6", "--task-timeout", "8",
                "--sql-timeout", "1", "--max-retries", "1", "--max-observation-chars", "20000",
                "--resamples", "0", timeout=240)
    finally:
        del ALL_TASKS[-len(tasks):]
    assert world.fingerprint() == before  # no database file changed, none appeared
    assert result.returncode == 1, result.stdout + result.stderr  # the broken endpoint
    assert "Traceback" not in result.stderr
    samples = {s["instance_id"]: s for s in
               map(json.loads, (tmp_path / "run" / "samples.jsonl").read_text().splitlines())}
    assert len(samples) == 8

    writes = samples["sql2s_0_writes"]
    assert writes["status"] == "final_answer" and writes["tool_errors"] == 12
    kinds = {c["error_kind"] for c in writes["tool_calls"] if c["name"] == "run_sql"}
    assert kinds <= {"rejected", "sql_error"} and "rejected" in kinds

    endless = samples["sql2s_1_endless"]
    assert [c["error_kind"] for c in endless["tool_calls"][:2]] == ["timeout", "timeout"]
    assert endless["status"] == "final_answer"

    huge = samples["sql2s_2_huge"]
    first = huge["tool_calls"][0]
    assert first["truncated"] and first["result_chars"] > 20_000 and not first["error"]
    assert huge["status"] == "final_answer"

    malformed = samples["parallel_3_malformed"]
    errors = [c["error_kind"] for c in malformed["tool_calls"]]
    assert errors == ["bad_arguments", "bad_arguments", "bad_arguments", "bad_arguments",
                      "unknown_tool", "unknown_tool", "bad_arguments", "bad_arguments", None]
    assert malformed["final_answer"] == "Springfield"

    finals = samples["parallel_4_finals"]
    assert finals["refused_final_answers"] == 3 and finals["text_replies"] == 1
    assert finals["final_answer"] == "Springfield" and finals["turns"] == 4

    assert samples["sql2s_5_never"]["status"] == "max_turns"
    assert samples["sql2s_5_never"]["turns"] == 6 and samples["sql2s_5_never"]["final_answer"] \
        is None
    assert samples["sql2s_6_stall"]["status"] == "task_timeout"
    broken = samples["sql2s_7_broken"]
    assert broken["status"] == "model_error" and broken["error"]["kind"] == "server_error"

    grades = {g["instance_id"]: g for g in
              map(json.loads, (tmp_path / "run" / "grades.jsonl").read_text().splitlines())}
    assert grades["sql2s_5_never"]["status"] == "no_final_answer"
    assert grades["sql2s_5_never"]["correct"] is False
    assert grades["sql2s_6_stall"]["correct"] is False
    assert grades["sql2s_7_broken"]["status"] == "not_graded"
    assert grades["sql2s_7_broken"]["correct"] is None
    assert grades["parallel_3_malformed"]["correct"] is True
    # every trajectory stays well-formed: each tool call has its result
    for path in (tmp_path / "run" / "trajectories").glob("*.json"):
        messages = json.loads(path.read_text())["messages"]
        calls = [c["id"] for m in messages for c in m.get("tool_calls") or []]
        results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
        assert sorted(calls) == sorted(results), path.name
    assert "1 attempts have no verdict" in result.stderr
