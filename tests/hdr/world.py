"""A small HDR world the tests build: SQLite databases, a knowledge base, a corpus, tasks, and
a scripted tool-calling model (plus a scripted judge) on the loopback OpenAI server."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.openai_server import Reply

GOLD_S2SQL = "SELECT name FROM products WHERE maker = 'Globex' ORDER BY name"


@dataclass
class World:
    root: Path
    db_root: Path
    corpus: Path
    tasks: Path

    def db_files(self) -> list[Path]:
        return sorted(p for p in self.db_root.rglob("*") if p.is_file())

    def fingerprint(self) -> dict[str, str]:
        """sha256 of every file under the database root (a write would change one)."""
        return {str(p.relative_to(self.db_root)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in self.db_files()}


def build_shop(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, maker TEXT, price REAL,
                               last_update TEXT);
        CREATE TABLE sales (product_id INTEGER, year INTEGER, units INTEGER);
        INSERT INTO products VALUES
            (1, 'Widget', 'Acme Corp', 19.5, '2021-01-01'),
            (2, 'Widget Pro', 'Acme Corp', 79.0, '2021-02-01'),
            (3, 'Gizmo', 'Globex', 35.25, '2021-03-01'),
            (4, 'Gizmo Max', 'Globex', 120.0, '2021-04-01'),
            (5, 'Doohickey', 'Initech', 55.0, '2021-05-01');
        INSERT INTO sales VALUES (1, 2020, 500), (2, 2020, 900), (3, 2020, 300),
                                 (4, 2020, 100), (5, 2020, 50), (2, 2021, 10);
    """)
    con.commit()
    con.close()


KB_ENTRIES = [
    {"id": 0, "knowledge": "Best Seller", "description": "The product with most units in a year.",
     "definition": "argmax units over sales of one year", "type": "calculation_knowledge",
     "children_knowledge": -1},
    {"id": 1, "knowledge": "Premium Product", "description": "A product priced above 50.",
     "definition": "price > 50", "type": "domain_knowledge", "children_knowledge": [0]},
]

CORPUS = [
    {"url": "https://example.org/acme", "title": "Acme Corp",
     "text": "Acme Corp is a manufacturer of widgets. Acme Corp is headquartered in "
             "Springfield. It was founded in 1950."},
    {"url": "https://example.org/globex", "title": "Globex Corporation",
     "text": "Globex Corporation makes gizmos. Globex was founded in 1999 in Cypress Creek."},
    {"url": "https://example.org/initech", "title": "Initech",
     "text": "Initech is a software company founded in 1987."},
    {"url": "https://example.org/awards", "title": "Design awards 2021",
     "text": "The award-winning Widget Pro took the gold medal. Other entries included the "
             "Gizmo and the Doohickey."},
]

TASKS = [
    {"id": "s2sql_001", "final_question": "A maker of gizmos was founded in 1999. Write the SQL "
     "query that lists the names of its products in alphabetical order.", "hint": "",
     "db": "shop", "final_answer": "Gizmo, Gizmo Max", "sql": GOLD_S2SQL},
    {"id": "s2sql_002", "final_question": "Same maker as the 1999 founding (bare answer). Write "
     "the SQL query that lists its product names alphabetically.", "hint": "Use the web first.",
     "db": "shop", "final_answer": "Gizmo, Gizmo Max", "sql": GOLD_S2SQL},
    {"id": "sql2s_001", "final_question": "Which product sold the most units in 2020? In which "
     "city is its maker headquartered?", "hint": "", "db": "shop",
     "final_answer": "Springfield", "sql": "SELECT 1"},
    {"id": "parallel_001", "final_question": "Which premium product (price above 50) is called "
     "award-winning on the web?", "hint": "", "db": "shop", "final_answer": "Widget Pro",
     "sql": "SELECT name FROM products WHERE price > 50"},
]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def build_world(root: Path, tasks: list[dict[str, Any]] | None = None) -> World:
    db_root = root / "dbs"
    build_shop(db_root / "shop" / "shop_template.sqlite")
    write_jsonl(db_root / "shop" / "shop_kb.jsonl", KB_ENTRIES)
    corpus = write_jsonl(root / "corpus.jsonl", CORPUS)
    task_file = write_jsonl(root / "tasks.jsonl", tasks if tasks is not None else TASKS)
    return World(root, db_root, corpus, task_file)


# --- the scripted model ---------------------------------------------------------------------

Call = tuple[str, Any]  # (tool name, arguments: a dict, or a raw string sent as is)
Turn = list[Call] | str | Reply  # tool calls, a text reply, or a raw Reply (faults)

SCRIPTS: dict[str, list[Turn]] = {
    "s2sql_001": [
        [("web_search", {"query": "gizmo maker founded 1999", "count": 3})],
        [("get_all_external_knowledge_names", {})],
        [("run_sql", {"sql": "SELECT DISTINCT maker FROM products", "description": "makers"})],
        [("final_answer", {"answer": f"```sql\n{GOLD_S2SQL}\n```"})],
    ],
    "s2sql_002": [
        [("web_fetch", {"url": "https://example.org/globex"})],
        [("run_sql", {"sql": GOLD_S2SQL})],
        [("run_sql", {"sql": "SELECT nme FROM products"})],  # an error: not the fallback
        [("final_answer", {"answer": "The query is the last one that worked."})],
    ],
    "sql2s_001": [
        [("run_sql", {"sql": "SELECT p.name, p.maker, SUM(s.units) AS u FROM sales s JOIN "
                             "products p ON p.id = s.product_id WHERE s.year = 2020 GROUP BY "
                             "p.id ORDER BY u DESC LIMIT 1"})],
        [("get_knowledge_definition", {"knowledge_name": "best seller"})],
        [("web_search", {"query": "Acme Corp headquarters"})],
        [("final_answer", {"answer": "Springfield"})],
    ],
    "parallel_001": [
        [("run_sql", {"sql": "SELECT name FROM products WHERE price > 50"}),
         ("web_search", {"query": "award-winning product", "count": 2})],
        [("final_answer", {"answer": "Gizmo Max"})],  # wrong on purpose: graded incorrect
    ],
}


def task_of(body: dict[str, Any]) -> str | None:
    """The task id whose question is in the request's user message."""
    for message in body.get("messages", []):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            for task in ALL_TASKS:
                if task["final_question"] in message["content"]:
                    return str(task["id"])
    return None


ALL_TASKS: list[dict[str, Any]] = list(TASKS)


def tool_calls(calls: list[Call], turn: int) -> list[dict[str, Any]]:
    out = []
    for index, (name, args) in enumerate(calls):
        arguments = args if isinstance(args, str) else json.dumps(args)
        out.append({"id": f"call_{turn}_{index}", "type": "function",
                    "function": {"name": name, "arguments": arguments}})
    return out


_JUDGE = re.compile(r"Answer to grade:\n(.*?)\n\nReference answer:\n(.*?)\n\nRules:", re.DOTALL)


def judge_reply(body: dict[str, Any]) -> Reply:
    prompt = body["messages"][-1]["content"]
    match = _JUDGE.search(prompt)
    assert match, "not a judge prompt"
    answer, gold = match.group(1).strip(), match.group(2).strip()
    verdict = "yes" if answer.lower() == gold.lower() else "no"
    return Reply(f"extracted_final_answer: {answer}\nreasoning: scripted comparison.\n"
                 f"correct: {verdict}\nconfidence: 100")


def is_agent_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return str(messages[0].get("content") or "").startswith("You are a research agent")


def sees_text_tools(body: dict[str, Any]) -> bool:
    """The request describes the tools in its system message (the text protocol)."""
    return "<tool_call>" in str((body.get("messages") or [{}])[0].get("content") or "")


def text_calls(calls: list[Call]) -> str:
    """Tool calls written in the text protocol, as a model following it would."""
    blocks = []
    for name, args in calls:
        arguments = args if isinstance(args, str) else json.dumps(args)
        blocks.append(f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>')
    return "\n".join(blocks)


#: what the scripted model says when it cannot see any tools (a template that drops them)
BLIND = "I would look this up in the database, but I have no way to run a query."


def scripted(
    scripts: dict[str, list[Turn]], default: Callable[[int], Turn] | None = None
) -> Callable[[dict[str, Any], int], Reply]:
    """A body responder: judge prompts get the scripted judge; agent requests get the next turn
    of their task's script (the turn index is the number of assistant messages so far). Tool
    calls come back natively when the request has tools, written as text when the tools are in
    the system message (text protocol), and as a plain sentence when the model sees no tools."""

    def respond(body: dict[str, Any], attempt: int) -> Reply:
        if not is_agent_request(body):
            return judge_reply(body)
        task = task_of(body)
        # replies written without seeing any tools do not advance the script
        turn = sum(1 for m in body["messages"]
                   if m.get("role") == "assistant" and m.get("content") != BLIND)
        script = scripts.get(task or "", [])
        if turn < len(script):
            step = script[turn]
        elif default is not None:
            step = default(turn)
        else:
            step = "I have nothing more to do."
        if isinstance(step, Reply):
            return step
        if isinstance(step, str):
            return Reply(step)
        if "tools" in body:
            return Reply(None, tool_calls=tool_calls(step, turn))
        if sees_text_tools(body):
            return Reply(text_calls(step))
        return Reply(BLIND)

    return respond
