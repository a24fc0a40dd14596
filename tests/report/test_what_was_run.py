"""The report shows what was run (issue 12 item 5): each run's model, endpoint and settings with
the differing ones highlighted, the judge's raw replies, and every turn of an agent's
conversation, including an attempt that never called a tool. Real runs on the loopback server,
checked in the HTML data and in headless chromium."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hopscore.report.runs import flatten, settings_view
from tests.conftest import run_cli
from tests.hdr.test_agent_run import run_agent
from tests.hdr.world import BLIND, SCRIPTS, TASKS, build_world, scripted
from tests.openai_server import FakeOpenAI, Reply, ServerBehaviour
from tests.report.test_browser import chromium, expect_count, open_report  # noqa: F401
from tests.report.test_report import embedded_data
from tests.run.helpers import gold_replies, run_args

UNPARSED = "I think it is probably fine, but I cannot say for certain."


@dataclass
class Case:
    qa: Path
    judge: Path
    hdr: Path
    blind: Path


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Case]:
    tmp = tmp_path_factory.mktemp("what-was-run")
    replies = gold_replies("hotpotqa")
    with FakeOpenAI(lambda prompt, attempt: Reply(
            f"Answer: {next(v for k, v in replies.items() if k in prompt)}")) as server:
        for name, tokens in (("short", "64"), ("long", "512")):
            result = run_cli(*run_args("hotpotqa", server.base_url, tmp / name, tmp / "cache",
                                       "--max-tokens", tokens))
            assert result.returncode == 0, result.stderr
    rows = tmp / "judge-in.jsonl"
    rows.write_text("".join(json.dumps({"id": f"j{i}", "question": f"Q{i}?", "response": "A",
                                        "correct_answer": "A"}) + "\n" for i in range(4)))
    judged = tmp / "judged.jsonl"

    def judge(prompt: str, attempt: int) -> Reply:
        if "Q1?" in prompt:
            return Reply(UNPARSED)
        return Reply("extracted_final_answer: A\nreasoning: same.\ncorrect: yes\nconfidence: 90")

    with FakeOpenAI(judge) as server:
        result = run_cli("judge", "--input", rows, "--output", judged, "--model", "j",
                         "--base-url", server.base_url, "--no-progress", "--cache-dir",
                         tmp / "cache")
        assert result.returncode in (0, 1), result.stderr
    world = build_world(tmp / "world")
    with FakeOpenAI(body_responder=scripted(SCRIPTS)) as server:
        assert run_agent(world, server, tmp / "hdr").returncode == 0
    blind_world = build_world(tmp / "blind", TASKS[:1])
    with FakeOpenAI(body_responder=scripted(SCRIPTS),
                    behaviour=ServerBehaviour(ignore_tools=True)) as server:
        assert run_agent(blind_world, server, tmp / "blind-run", "--tool-protocol", "native",
                         "--max-text-turns", "3").returncode == 0
    yield Case(tmp / "short", judged, tmp / "hdr", tmp / "blind-run")


def report(tmp: Path, *inputs: Path) -> tuple[Path, str]:
    html = tmp / "report.html"
    result = run_cli("report", *inputs, "-o", html, "--resamples", "50")
    assert result.returncode == 0, result.stderr
    return html, html.read_text(encoding="utf-8")


def settings_rows(html: str) -> dict[str, tuple[bool, list[str]]]:
    table = html[html.index('id="all-settings"'):]
    rows = {}
    for match in re.finditer(r'<tr class="([^"]*)" data-key="([^"]+)"><th>[^<]*</th>(.*?)</tr>',
                             table):
        values = re.findall(r"<td>(.*?)</td>", match.group(3))
        rows[match.group(2)] = ("differs" in match.group(1).split(), values)
    return rows


def test_runs_table_shows_models_and_marks_differences(case: Case, tmp_path: Path) -> None:
    _, html = report(tmp_path, case.qa, case.qa.parent / "long")
    rows = settings_rows(html)
    assert rows["model.spec"] == (False, ["openai/test-model"] * 2)
    endpoint = rows["model.endpoint"][1][0]
    assert endpoint.startswith("http://127.0.0.1:") and not rows["model.endpoint"][0]
    assert rows["request.max_tokens"] == (True, ["64", "512"])
    assert rows["settings.max_tokens"][0] is True
    assert rows["settings.output_dir"][0] is False  # where a run lives is not a setting
    assert "2 settings differ between the runs" in html
    top = html[html.index('id="run-settings"'):html.index('id="all-settings"')]
    assert 'data-key="request.max_tokens"' in top and 'data-key="model.spec"' in top
    assert 'data-key="request.temperature"' not in top  # the same in both: only in "all"


def test_a_score_directory_beside_a_run_marks_no_setting(case: Case, tmp_path: Path) -> None:
    """Scored predictions record no settings: what they lack is not a difference (every
    setting of the run was marked, screens of them before the comparison)."""
    from tests.run.helpers import GOLDS

    scored = tmp_path / "scored"
    result = run_cli("score", "hotpotqa", "-g", GOLDS["hotpotqa"][0], "-p",
                     case.qa / "predictions.json", "-o", scored)
    assert result.returncode == 0, result.stderr
    _, html = report(tmp_path, scored, case.qa)
    rows = settings_rows(html)
    assert len(rows) > 20 and not [key for key, (differs, _) in rows.items() if differs]
    assert rows["request.max_tokens"][1] == ["(not set)", "64"]
    assert "scored: scored predictions, no settings recorded (not compared)" in html
    assert "settings differ" not in html and 'id="settings-note"' not in html
    top = html[html.index('id="run-settings"'):html.index('id="all-settings"')]
    assert re.findall(r'data-key="([^"]+)"', top) == ["model.spec", "model.endpoint"]


def test_the_comparison_table_fits_1280_pixels(case: Case, chromium: Any,  # noqa: F811
                                               tmp_path: Path) -> None:
    """Every column of the comparison, the last (flips) included, is inside a 1,280 px window
    (it was 12 columns of unbreakable text, the last one cut off)."""
    from tests.run.helpers import GOLDS

    scored = tmp_path / "scored-predictions-of-the-baseline-system"
    result = run_cli("score", "hotpotqa", "-g", GOLDS["hotpotqa"][0], "-p",
                     case.qa / "predictions.json", "-o", scored)
    assert result.returncode == 0, result.stderr
    html, _ = report(tmp_path, scored, case.qa)
    page, errors, _ = open_report(chromium, html)
    page.set_viewport_size({"width": 1280, "height": 900})
    table = page.locator("table.compare-table").first
    widths = table.evaluate("t => [t.scrollWidth, t.parentElement.clientWidth]")
    assert widths[0] <= widths[1], widths
    last = table.locator("thead th").last
    assert "flips" in last.inner_text()
    assert last.evaluate("th => th.getBoundingClientRect().right") <= 1280
    page.close()
    assert errors == []


def test_runs_table_in_the_browser(case: Case, chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    html, _ = report(tmp_path, case.qa, case.qa.parent / "long")
    page, errors, _ = open_report(chromium, html)
    row = page.locator("#run-settings tr[data-key='request.max_tokens']")
    assert row.is_visible()
    assert row.locator("td").all_inner_texts() == ["64", "512"]
    color = row.locator("td").first.evaluate("td => getComputedStyle(td).backgroundColor")
    plain = page.locator("#run-settings tr[data-key='model.spec'] td").first.evaluate(
        "td => getComputedStyle(td).backgroundColor")
    assert color != plain
    assert page.locator("#all-settings tr[data-key='settings.temperature']").count() == 1
    page.close()
    assert errors == []


def test_judge_raw_replies(case: Case, chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    html, text = report(tmp_path, case.judge)
    data = embedded_data(text)
    by_id = {s["id"]: s["r"][0] for s in data["samples"]}
    assert by_id["j1"]["judge"] == UNPARSED
    assert by_id["j0"]["judge"].startswith("extracted_final_answer: A")
    rows = settings_rows(text)
    assert rows["model.spec"][1] == ["j"] and rows["judge.prompt_source"][1] == ["builtin"]
    page, errors, _ = open_report(chromium, html)
    page.fill("#filter-search", "j1")
    expect_count(page, 1)
    page.click("#sample-rows tr")
    reply = page.locator("#detail details", has_text="judge reply (raw)")
    assert UNPARSED in reply.inner_text()
    page.close()
    assert errors == []


def test_agent_turns_in_full(case: Case, chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    html, text = report(tmp_path, case.hdr)
    data = embedded_data(text)
    entry = next(s for s in data["samples"] if s["id"] == "sql2s_001")["r"][0]
    roles = [t["role"] for t in entry["turns"]]
    assert roles[:2] == ["system", "user"] and roles.count("tool") == 4
    calls = [c["name"] for t in entry["turns"] for c in t.get("calls", [])]
    assert calls == ["run_sql", "get_knowledge_definition", "web_search", "final_answer"]
    tool = next(t for t in entry["turns"] if t["role"] == "tool")
    assert tool["id"] == "c00010000" and "Acme Corp" in tool["text"]
    # the judge's raw reply of an HDR run comes from its judge.jsonl
    assert entry["judge"].startswith("extracted_final_answer: Springfield")
    page, errors, _ = open_report(chromium, html)
    page.fill("#filter-search", "sql2s_001")
    expect_count(page, 1)
    page.click("#sample-rows tr")
    conversation = page.locator("#detail details.conversation")
    assert conversation.is_visible()
    assert "10 messages, 4 tool calls" in conversation.locator("summary").first.inner_text()
    assert "→ web_search" in conversation.inner_text()
    page.close()
    assert errors == []


def test_attempt_without_tool_calls_shows_what_the_model_wrote(
        case: Case, chromium: Any, tmp_path: Path) -> None:  # noqa: F811
    html, text = report(tmp_path, case.blind)
    entry = embedded_data(text)["samples"][0]["r"][0]
    assistant = [t["text"] for t in entry["turns"] if t["role"] == "assistant"]
    assert assistant == [BLIND] * 3
    page, errors, _ = open_report(chromium, html)
    page.click("#sample-rows tr")
    shown = page.locator("#detail details.conversation").inner_text()
    assert shown.count(BLIND) == 3 and "0 tool calls" in shown
    page.close()
    assert errors == []


def test_settings_view_units() -> None:
    assert flatten({"a": {"b": 1, "c": [1, 2]}, "summary": {"x": 1}, "s": "t"}) == {
        "a.b": "1", "a.c": "[1, 2]", "s": "t"}
    long = flatten({"k": "x" * 1000})["k"]
    assert len(long) < 400 and "more characters" in long

    class Set:
        def __init__(self, label: str, config: dict[str, Any] | None) -> None:
            self.label, self.config, self.kind, self.rows = label, config, "scores", None
            self.source = Path(label)

    view = settings_view([Set("a", {"model": {"spec": "m"}, "x": 1}),  # type: ignore[list-item]
                          Set("b", {"model": {"spec": "m"}}), Set("c", None)])
    rows = {r["key"]: r for r in view["rows"]}
    assert rows["x"]["cells"] == ["1", "(not set)", "(not set)"] and rows["x"]["differs"]
    assert rows["config"]["cells"][2].startswith("no config.json")
    assert view["models"] == ["m", "m", ""]
