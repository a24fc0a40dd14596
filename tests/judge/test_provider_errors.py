"""A judge reply (status 200) that is a provider's error notice, not a verdict, is a failed
request: retried like a transient error, then an error row with its text; never judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hopscore.engine import error_reply
from hopscore.judge.parse import parse_judge_output, provider_error
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply

OVERLOADED = "Error: The upstream model is overloaded. Please retry."
#: a notice the engine's check leaves alone; only a judge reply without a verdict is read so
SORRY = "Sorry, our servers are overloaded right now. Please try again in a minute."


def _input(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": f"Q{i:03d}?",
                                        "response": "x", "correct_answer": "x"}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def _judge(server: FakeOpenAI, tmp_path: Path, *extra: str) -> tuple[int, list[dict]]:
    out = tmp_path / "out.jsonl"
    result = run_cli("judge", "-i", _input(tmp_path / "in.jsonl", 2), "-o", out, "--model", "m",
                     "--base-url", server.base_url, "--backoff", "0", "--no-progress", *extra,
                     env={"HOPSCORE_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, [json.loads(line) for line in out.read_text().splitlines()]


def test_an_overloaded_notice_is_retried_like_a_transient_error(tmp_path: Path) -> None:
    def reply(prompt: str, attempt: int) -> Reply:
        if "Q000" in prompt and attempt == 0:
            return Reply(OVERLOADED)
        return judge_reply(True)

    with FakeOpenAI(reply) as server:
        code, rows = _judge(server, tmp_path, "--max-retries", "2")
        assert server.count("Q000") == 2
    assert code == 0
    assert rows[0]["judge"]["status"] == "judged" and rows[0]["correct"] is True
    first = rows[0]["judge"]["attempts"][0]
    assert first["status"] == 200 and first["error"].startswith("api_error:")
    assert OVERLOADED in first["error"]


@pytest.mark.parametrize("notice", [OVERLOADED, SORRY])
def test_a_notice_that_persists_is_an_error_row_with_its_text_asked_again(
        tmp_path: Path, notice: str) -> None:
    broken = {"on": True}

    def reply(prompt: str, attempt: int) -> Reply:
        if broken["on"] and "Q000" in prompt:
            return Reply(notice)
        return judge_reply(False)

    with FakeOpenAI(reply) as server:
        code, rows = _judge(server, tmp_path, "--max-retries", "1")
        assert code == 1
        row = rows[0]
        assert row["judge"]["status"] == "error"
        assert row["correct"] is None  # never a verdict, never in the accuracy
        assert row["judge"]["error"]["kind"] == "api_error"
        assert notice in row["error"]
        assert rows[1]["judge"]["status"] == "judged" and rows[1]["correct"] is False
        broken["on"] = False
        before = server.count("Q000")
        code, rows = _judge(server, tmp_path, "--max-retries", "1")
        assert server.count("Q000") == before + 1  # asked again, not answered from the cache
    assert code == 0
    assert rows[0]["judge"]["status"] == "judged" and rows[0]["correct"] is False


def test_the_engine_takes_the_overloaded_notice_for_an_error() -> None:
    assert error_reply(OVERLOADED) is not None
    assert error_reply("The upstream model is overloaded. Please retry.") is not None
    assert error_reply("API error: rate limited, try again in 20s") is not None
    for answer in ("Answer: the service is unavailable on Sundays",
                   "The museum is temporarily unavailable", "Answer: retry the loop"):
        assert error_reply(answer) is None


@pytest.mark.parametrize("reply", [
    "I cannot tell whether the response matches the answer.",
    "extracted_final_answer: overloaded\nreasoning: the server was overloaded\ncorrect: yes",
    "reasoning: please retry the calculation\nconfidence: 40%",
    "The response says the server is overloaded, which is the correct answer. " * 12,
])
def test_replies_that_only_mention_errors_are_not_provider_errors(reply: str) -> None:
    assert provider_error(reply) is None


def test_a_notice_gives_no_verdict_and_is_a_provider_error() -> None:
    assert not parse_judge_output(SORRY).parse_ok
    assert provider_error(SORRY) == SORRY
    assert provider_error(f"<think>hm</think>\n{OVERLOADED}") == OVERLOADED
