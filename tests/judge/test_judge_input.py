"""Bad judge input lines are named (file:line), never an internal error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

GOOD = {"question": "q?", "response": "a", "correct_answer": "a"}


def test_every_bad_line_is_named_and_nothing_is_sent(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    lines = [
        json.dumps(GOOD).encode(),
        b'{"question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"question": "q", "response": ' + b"9" * 5000 + b', "correct_answer": "a"}',
        b'{"question": "q\x00", "response": "a", "correct_answer": "a"}',
        b'{"question": "\xff"}',
        json.dumps(GOOD).encode(),
    ]
    source.write_bytes(b"\n".join(lines) + b"\n")
    # No server listens on this port: a request would fail, but none is sent.
    result = run_cli("judge", "-i", source, "-o", tmp_path / "out.jsonl", "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", "--no-progress", "--no-cache")
    assert result.returncode == 2, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "4 invalid input rows" in result.stderr
    for line, words in ((2, "nested too deeply"), (3, "more than 4,300 digits"),
                        (4, "invalid JSON"), (5, "not valid UTF-8")):
        assert f"{source}:{line}: " in result.stderr and words in result.stderr, line
    assert not (tmp_path / "out.jsonl").exists()


def test_a_lone_surrogate_is_named_not_an_internal_error(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(GOOD) + "\n"
                      '{"question": "q \\ud800?", "response": "a", "correct_answer": "a"}\n',
                      encoding="utf-8")
    result = run_cli("judge", "-i", source, "-o", tmp_path / "out.jsonl", "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", "--no-progress", "--no-cache")
    assert result.returncode == 2, result.stderr
    assert f"{source}:2: field 'question': contains a lone surrogate at character 3" \
        in result.stderr


def test_a_lone_surrogate_in_another_field_is_judged_and_kept(tmp_path: Path) -> None:
    from tests.openai_server import FakeOpenAI, judge_reply

    source = tmp_path / "in.jsonl"
    source.write_text('{"instance_id": "x\\ud800", "question": "q", "response": "a", '
                      '"correct_answer": "a"}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(lambda prompt, attempt: judge_reply(True, answer="a")) as server:
        result = run_cli("judge", "-i", source, "-o", out, "--model", "m", "--base-url",
                         server.base_url, "--no-progress", "--no-cache",
                         env={"JUDGE_API_KEY": "sk-test"})
    assert result.returncode == 0, result.stderr
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["instance_id"] == "x\ud800" and row["correct"] is True


def test_a_huge_judge_reply_is_capped_in_the_row(tmp_path: Path) -> None:
    from tests.openai_server import FakeOpenAI, Reply

    huge = "reasoning: " + "blah " * 1_000_000 + "\ncorrect: yes\nconfidence: 90%"
    source = tmp_path / "in.jsonl"
    rows = [{**GOOD, "instance_id": "big", "response": "r" * 300_000}, GOOD]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(lambda prompt, attempt: Reply(huge)) as server:
        args = ["judge", "-i", source, "-o", out, "--model", "m", "--base-url", server.base_url,
                "--no-progress", "--no-cache", "--max-tokens", "0"]
        result = run_cli(*args, env={"JUDGE_API_KEY": "sk-test"})
        assert result.returncode == 0, result.stderr
        lines = out.read_bytes().splitlines()
        assert max(map(len, lines)) <= 1_000_000
        first = json.loads(lines[0])
        assert first["correct"] is True and first["parse_ok"] is True  # judged on the full reply
        assert first["judge"]["row_truncated"] is True
        assert first["judge"]["truncated"] is False  # the reply was not cut at max_tokens
        assert {"raw_judge_output", "reasoning", "response"} <= \
            set(first["judge"]["truncated_fields"])
        assert first["raw_judge_output"].endswith(f" … [{len(huge):,} chars]")
        assert len(first["raw_judge_output"]) < 20_100
        # Rerunning resumes both rows: the cut values are not needed for that.
        sent = len(server.log)
        again = run_cli(*args, env={"JUDGE_API_KEY": "sk-test"})
        assert again.returncode == 0 and len(server.log) == sent
        # a capped row is no reply cut at max_tokens: --on-truncation error keeps it too
        strict = run_cli(*args, "--on-truncation", "error", env={"JUDGE_API_KEY": "sk-test"})
        assert strict.returncode == 0, strict.stderr
        assert len(server.log) == sent
