"""The agent's tools: knowledge base, BM25 search and fetch, run_sql, argument handling."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hopscore.agent.knowledge import ALL_DEFINITIONS_LIMIT, KEY_REQUIRED, KnowledgeBase
from hopscore.agent.tools import (
    SCHEMAS,
    ArgumentError,
    ToolLimits,
    Toolset,
    clean_page,
    final_answer_text,
    format_hits,
    openai_tools,
)
from hopscore.errors import HopscoreError, InputError
from hopscore.run.search import Bm25Search, SearchHit, snippet, url_key
from hopscore.sql.observation import run_sql
from hopscore.sql.sandbox import SqlExecutor
from tests.hdr.world import KB_ENTRIES, World, build_world, write_jsonl


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(tmp_path_factory.mktemp("world"))


@pytest.fixture(scope="module")
def executor() -> Iterator[SqlExecutor]:
    with SqlExecutor(workers=1) as sql:
        yield sql


def toolset(world: World, executor: SqlExecutor, *, knowledge: bool = True,
            **limits: Any) -> Toolset:
    kb = KnowledgeBase.load(world.db_root, "shop") if knowledge else None
    return Toolset(db_path=world.db_root / "shop" / "shop_template.sqlite", knowledge=kb,
                   search=Bm25Search(world.corpus), executor=executor,
                   limits=ToolLimits(**limits))


def call(tools: Toolset, name: str, arguments: Any) -> Any:
    return asyncio.run(tools.call(name, arguments))


# --- knowledge base ----------------------------------------------------------------------------

def test_knowledge_names_and_matching(world: World) -> None:
    kb = KnowledgeBase.load(world.db_root, " SHOP ")
    assert kb is not None and kb.db == "shop"
    assert json.loads(kb.names()) == ["Best Seller", "Premium Product"]
    for key in ("1", "shop_1", "SHOP_1", "premium product", "  Premium Product "):
        assert json.loads(kb.definition(key))["knowledge"] == "Premium Product", key
    assert json.loads(kb.definition("0"))["children_knowledge"] == -1  # every field shown
    assert kb.definition("shop_7") == "Knowledge not found for 'shop_7' in database 'shop'."
    assert kb.definition("  ") == KEY_REQUIRED
    assert json.loads(kb.all_definitions()) == KB_ENTRIES


def test_knowledge_catalogue_when_too_long(tmp_path: Path) -> None:
    entries = [{"id": i, "knowledge": f"Metric {i}", "definition": "x" * 500} for i in range(40)]
    write_jsonl(tmp_path / "big" / "big_kb.jsonl", entries)
    kb = KnowledgeBase.load(tmp_path, "big")
    assert kb is not None
    full = json.dumps(entries, indent=2, ensure_ascii=False)
    assert len(full) > ALL_DEFINITIONS_LIMIT
    catalogue = json.loads(kb.all_definitions())
    assert catalogue["database"] == "big" and catalogue["entry_count"] == 40
    assert catalogue["knowledge_names"][3] == "Metric 3" and str(len(full)) in catalogue["_notice"]


def test_knowledge_missing_and_malformed(tmp_path: Path) -> None:
    assert KnowledgeBase.load(tmp_path, "none") is None
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "bad_kb.jsonl").write_text('{"id": 0}\n[1]\n')
    with pytest.raises(InputError, match=r"bad_kb.jsonl:2"):
        KnowledgeBase.load(tmp_path, "bad")
    with pytest.raises(HopscoreError, match="invalid database name"):
        KnowledgeBase.load(tmp_path, "../x")


def test_knowledge_tools_dropped_without_a_kb(world: World, executor: SqlExecutor) -> None:
    tools = toolset(world, executor, knowledge=False)
    assert tools.names == ("web_search", "web_fetch", "run_sql", "final_answer")
    result = call(tools, "get_all_external_knowledge_names", "{}")
    assert result.error and result.kind == "unknown_tool"
    with_kb = toolset(world, executor)
    assert [t["function"]["name"] for t in with_kb.schemas()] == list(SCHEMAS)


# --- search ------------------------------------------------------------------------------------

def test_bm25_search_and_fetch(world: World, executor: SqlExecutor) -> None:
    tools = toolset(world, executor)
    text = call(tools, "web_search", {"query": "where is Acme Corp headquartered", "count": "2"})
    assert text.text.startswith("source=bm25\n\n1. Acme Corp\n   https://example.org/acme\n   ")
    assert "Springfield" in text.text.split("\n\n")[1]
    assert text.text.count("\n\n") <= 2  # at most two hits
    page = call(tools, "web_fetch", {"url": "http://www.example.org/globex/"})
    assert page.text.startswith("Globex Corporation makes gizmos.") and not page.error
    missing = call(tools, "web_fetch", {"url": "https://example.org/nowhere"})
    assert missing.error and missing.text.startswith("Error: web_fetch failed: ")


def test_search_observation_conventions(world: World, executor: SqlExecutor) -> None:
    tools = toolset(world, executor)
    assert call(tools, "web_search", {"query": "  "}).text == "Error: empty query."
    assert call(tools, "web_search", {"query": "zzzqqq"}).text == "source=bm25\n\n(no results)"
    long = call(tools, "web_search", {"query": "x" * 401})
    assert long.error and "at most 400" in long.text
    for bad in ("abc", 2.5, True, [1]):
        result = call(tools, "web_search", {"query": "acme", "count": bad})
        assert result.kind == "bad_arguments", bad
    clamped = call(tools, "web_search", {"query": "the", "count": 500})
    assert not clamped.error
    assert call(tools, "web_fetch", {"url": ""}).text == "Error: empty url."


def test_format_and_clean() -> None:
    hits = [SearchHit("T", "https://u", "s"), SearchHit("T2", "https://v", "s2")]
    assert format_hits(hits, "x") == (
        "source=x\n\n1. T\n   https://u\n   s\n\n2. T2\n   https://v\n   s2")
    assert clean_page("a\n\n\n\nb ") == "a\n\nb"
    assert clean_page("   ") == "(empty page)"
    capped = clean_page("y" * 30_000)
    assert len(capped) == 20_000 and capped.endswith("...")
    assert url_key("HTTPS://www.Example.org/a/#frag") == "example.org/a"
    text = ("First sentence about cats. " * 30 + "The answer is Springfield for Acme. "
            + "Tail. " * 30)
    assert "Springfield" in snippet(text, "Acme Springfield")
    assert len(snippet(text, "Acme")) <= 300


# --- run_sql -----------------------------------------------------------------------------------

def test_run_sql_uses_the_sql_match_executor_and_observation(world: World,
                                                             executor: SqlExecutor) -> None:
    tools = toolset(world, executor)
    db = world.db_root / "shop" / "shop_template.sqlite"
    sql = "SELECT name, price FROM products WHERE price > 50 ORDER BY id"
    result = call(tools, "run_sql", {"sql": sql, "description": "premium"})
    assert result.text == run_sql(executor, db, sql, "premium")
    assert result.text.startswith("premium\n\nRows: 3\n\nname       | price\n")
    error = call(tools, "run_sql", json.dumps({"sql": "SELECT nope FROM products"}))
    assert error.error and error.kind == "sql_error" and error.text.startswith("SQL error:")
    rejected = call(tools, "run_sql", {"sql": "DELETE FROM products"})
    assert rejected.kind == "rejected" and rejected.text.startswith("Rejected:")
    assert call(tools, "run_sql", {"sql": " "}).text == "Error: empty sql query."
    literal = call(tools, "run_sql", {"sql": "SELECT 'Walter White' AS who, last_update "
                                              "FROM products LIMIT 1"})
    assert not literal.error


def test_arguments_and_unknown_tools(world: World, executor: SqlExecutor) -> None:
    tools = toolset(world, executor)
    cases: list[tuple[str, Any, str]] = [
        ("run_sql", "{not json", "Error: the tool arguments are not valid JSON"),
        ("run_sql", "[1, 2]", "Error: the tool arguments must be a JSON object."),
        ("run_sql", "{}", "Error: missing required argument 'sql'."),
        ("run_sql", {"sql": ["SELECT 1"]}, "Error: argument 'sql' must be a string."),
        ("drop_database", "{}", "Error: unknown tool 'drop_database'"),
        ("", "{}", "Error: unknown tool ''"),
        ("final_answer", '{"answer": "x"}', "Error: unknown tool 'final_answer'"),
        ("get_knowledge_definition", "{}", KEY_REQUIRED),
    ]
    for name, arguments, start in cases:
        result = call(tools, name, arguments)
        assert result.error and result.text.startswith(start), (name, result.text)
    assert call(tools, "get_knowledge_definition", {"knowledge_name": 0}).text.startswith("{")


def test_observation_cap(world: World, executor: SqlExecutor) -> None:
    tools = toolset(world, executor, max_observation_chars=1000)
    sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) "
           "SELECT x, printf('%.300c', 'a') AS pad FROM c")
    result = call(tools, "run_sql", {"sql": sql})
    assert result.truncated and result.chars > 100_000
    assert len(result.text) < 1100 and result.text.endswith(f"of {result.chars} characters]")
    assert "Rows: 500 (truncated to first 500; more rows existed)" in result.text


def test_final_answer_text() -> None:
    assert final_answer_text('{"answer": "Springfield"}') == "Springfield"
    assert final_answer_text({"answer": 42}) == "42"
    for bad in ('{"answer": "  "}', "{}", "nope", '{"answer": null}'):
        with pytest.raises(ArgumentError):
            final_answer_text(bad)


def test_schemas_are_the_reference_interface() -> None:
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in openai_tools(
        tuple(SCHEMAS))}
    assert tools["web_search"]["required"] == ["query"]
    assert set(tools["web_search"]["properties"]) == {"query", "count"}
    assert set(tools["run_sql"]["properties"]) == {"sql", "description"}
    assert tools["run_sql"]["required"] == ["sql"]
    assert tools["web_fetch"]["required"] == ["url"]
    assert tools["get_knowledge_definition"]["required"] == ["knowledge_name"]
    assert tools["get_all_external_knowledge_names"]["properties"] == {}
    assert tools["get_all_knowledge_definitions"]["properties"] == {}
    assert tools["final_answer"]["required"] == ["answer"]
