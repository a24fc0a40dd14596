"""Judge presets (docs/judge.md): a benchmark declares named prompts and verdict readers; the
judge machinery picks one by name, pins it by name and sha256 in every row and summary, and
lets a user's prompt file override the template.

A toy benchmark package written to a temporary folder declares two presets: ``plain`` (the
four-field reader) and ``verdict`` (its own ``VERDICT: RIGHT|WRONG`` reader); it is added to
the registry for the test only."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from hopscore import benchmarks
from hopscore.api_grading import judge_rows
from hopscore.engine.types import sha256_text
from hopscore.errors import HopscoreError, InputError
from hopscore.judge.presets import judge_prompt, known_presets
from hopscore.judge.prompt import DEFAULT_TEMPLATE, JudgePrompt
from tests.openai_server import FakeOpenAI, Reply, judge_reply

PLAIN = "Q: {question}\nA: {answer}\nGold: {expected_answer}\nfour fields please\n"
VERDICT = "Question {question}\nCandidate {answer}\nTruth {expected_answer}\nSay VERDICT.\n"

PACKAGE = {
    "__init__.py": '''
        from typing import ClassVar
        from hopscore.benchmarks.base import Benchmark, Example, Prediction
        from hopscore.benchmarks.judge_presets import JudgePresetSpec

        class ToyJudged(Benchmark[Example, Prediction]):
            name = "toyjudged"
            title = "Toy judged"
            metrics: ClassVar[tuple[str, ...]] = ("em",)
            judge_presets = {
                "plain": JudgePresetSpec("judge_plain.txt", about="four fields"),
                "verdict": JudgePresetSpec("judge_verdict.txt", "toyjudged_pkg.reader"),
                "broken": JudgePresetSpec("judge_plain.txt", "toyjudged_pkg.missing"),
            }
            judge_preset = "verdict"

            def load_gold(self, path, *, aliases=None):
                return []

            def load_predictions(self, path):
                raise NotImplementedError

            def score(self, example, prediction):
                return {"em": 0.0}
    ''',
    "reader.py": '''
        import re
        from hopscore.benchmarks.judge_presets import JudgeVerdict

        def read_verdict(reply):
            found = re.findall(r"^VERDICT:\\s*(RIGHT|WRONG)\\s*$", reply, re.M)
            return JudgeVerdict(correct=bool(found) and found[-1] == "RIGHT",
                                parse_ok=bool(found), extracted_final_answer=None,
                                reasoning=None, confidence=None, verdict_lines=len(found),
                                conflicting_verdicts=len(set(found)) > 1)
    ''',
    "judge_plain.txt": PLAIN,
    "judge_verdict.txt": VERDICT,
}


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[benchmarks.Benchmark]:
    package = tmp_path / "toyjudged_pkg"
    package.mkdir()
    for name, text in PACKAGE.items():
        body = textwrap.dedent(text).lstrip() if name.endswith(".py") else text
        (package / name).write_text(body, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(benchmarks.REGISTRY, "toyjudged", "toyjudged_pkg:ToyJudged")
    yield benchmarks.get("toyjudged")
    for module in [m for m in sys.modules if m.startswith("toyjudged_pkg")]:
        del sys.modules[module]


def test_the_benchmark_default_preset_is_chosen_when_none_is_named(toy) -> None:
    prompt = judge_prompt(None, None, toy)
    assert prompt.preset == "toyjudged/verdict"
    assert prompt.template == VERDICT
    assert prompt.sha256 == sha256_text(VERDICT)
    assert prompt.reader == "toyjudged_pkg.reader"


def test_a_named_preset_and_builtin(toy) -> None:
    plain = judge_prompt("plain", None, toy)
    assert (plain.preset, plain.reader, plain.template) == ("toyjudged/plain", None, PLAIN)
    assert judge_prompt("builtin", None, toy) == JudgePrompt.builtin()
    # hopscore judge has no benchmark: qualified names, or a benchmark for its default
    assert judge_prompt("toyjudged/plain").template == PLAIN
    assert judge_prompt("toyjudged").preset == "toyjudged/verdict"
    assert judge_prompt(None).template == DEFAULT_TEMPLATE


def test_an_unknown_preset_lists_the_known_ones(toy) -> None:
    with pytest.raises(HopscoreError) as raised:
        judge_prompt("nope", None, toy)
    message = str(raised.value)
    assert "unknown judge preset 'nope'" in message
    for known in ("builtin", "plain", "verdict", "toyjudged/plain"):
        assert known in message
    with pytest.raises(HopscoreError, match="toyjudged/verdict"):
        judge_prompt("toyjudged/absent")
    assert "toyjudged/verdict" in known_presets()


def test_a_preset_whose_reader_is_missing_is_refused_before_any_request(toy) -> None:
    with pytest.raises(HopscoreError, match=r"toyjudged_pkg\.missing"):
        judge_prompt("broken", None, toy)


def test_a_prompt_file_overrides_the_template_but_keeps_the_named_readers(toy, tmp_path) -> None:
    user = tmp_path / "mine.txt"
    user.write_text("mine {question} {answer} {expected_answer}\n", encoding="utf-8")
    alone = judge_prompt(None, user, toy)
    assert (alone.preset, alone.reader, alone.source) == (None, None, str(user))
    with_preset = judge_prompt("verdict", user, toy)
    assert with_preset.template.startswith("mine")
    assert with_preset.sha256 == sha256_text(user.read_text(encoding="utf-8"))
    assert (with_preset.preset, with_preset.reader) == ("toyjudged/verdict",
                                                        "toyjudged_pkg.reader")
    user.write_text("no placeholders\n", encoding="utf-8")
    with pytest.raises(InputError, match="lacks"):
        judge_prompt("verdict", user, toy)


ROWS = [{"question": "Q1 capital of France?", "response": "Paris", "correct_answer": "Paris"},
        {"question": "Q2 two plus two?", "response": "5", "correct_answer": "4"}]


def verdict_server(prompt: str, attempt: int) -> Reply:
    if prompt.startswith("Question"):  # the verdict preset's template
        return Reply("thinking aloud\nVERDICT: " + ("RIGHT" if "Q1" in prompt else "WRONG"))
    return judge_reply("Q1" in prompt)


def test_judged_rows_record_the_preset_and_its_sha(toy, tmp_path: Path) -> None:
    with FakeOpenAI(verdict_server) as server:
        rows = judge_rows(ROWS, model="judge", base_url=server.base_url, cache=False,
                          preset="toyjudged/verdict", output=tmp_path / "j.jsonl")
        assert all(p.startswith("Question") for p in server.prompts())
    assert [r["correct"] for r in rows] == [True, False]
    assert all(r["parse_ok"] for r in rows)
    for row in rows:
        assert row["judge"]["preset"] == "toyjudged/verdict"
        assert row["judge"]["prompt_sha256"] == sha256_text(VERDICT)
        # the four-field reference reading does not apply to a preset's own reader
        assert "differs_from_reference" not in row["judge"]


def test_builtin_rows_say_so_and_a_changed_preset_is_not_resumed(toy, tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    with FakeOpenAI(verdict_server) as server:
        rows = judge_rows(ROWS, model="judge", base_url=server.base_url, cache=False,
                          output=out)
        assert [r["judge"]["preset"] for r in rows] == ["builtin", "builtin"]
        assert [r["correct"] for r in rows] == [True, False]
        with pytest.raises(HopscoreError, match="preset: builtin -> toyjudged/verdict"):
            judge_rows(ROWS, model="judge", base_url=server.base_url, cache=False,
                       preset="toyjudged/verdict", output=out)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["judge"]["preset"] \
        == "builtin"
