"""``hopscore judge`` end to end: a subprocess against a scripted server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import kill_cli_when, run_cli
from tests.openai_server import FakeOpenAI, Reply, judge_reply

TAG = re.compile(r"Q\d{3}")


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def make_rows(n: int) -> list[dict[str, Any]]:
    return [
        {"instance_id": f"t{i}", "question": f"Q{i:03d}: which city?", "response": f"City {i}",
         "correct_answer": f"City {i if i % 2 == 0 else -i}"}
        for i in range(n)
    ]


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tag(prompt: str) -> str:
    found = TAG.search(prompt)
    assert found, prompt
    return found.group(0)


def honest(prompt: str, attempt: int) -> Reply:
    """Answers yes exactly when the graded answer equals the reference (even rows)."""
    number = int(tag(prompt)[1:])
    return judge_reply(number % 2 == 0, answer=f"City {number}")


def judge_args(server: FakeOpenAI, inp: Path, out: Path, *extra: str) -> list[str]:
    return ["judge", "-i", str(inp), "-o", str(out), "--model", "judge-m", "--base-url",
            server.base_url, "--no-progress", "--backoff", "0.01", *extra]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "JUDGE_API_KEY": "sk-test"}


FAULTS: dict[str, list[Reply]] = {
    "Q001": [Reply(status=429, headers={"Retry-After": "0.2"})],
    "Q002": [Reply(status=500), Reply(status=503)],
    "Q003": [Reply(stall=True)],
    "Q004": [Reply(body=b'{"choices": [{"mess')],
    "Q005": [Reply(json_body={"choices": []})],
    "Q006": [Reply(content=None)],
}


def faulty(prompt: str, attempt: int) -> Reply:
    key = tag(prompt)
    if key == "Q007":
        return Reply(status=500)
    if key == "Q008":
        return Reply("I am not sure what to say here.")
    if key == "Q009":
        return Reply(status=400)
    if key == "Q012":
        return Reply("reasoning: fine\nincorrect: no\n**correct:** `yes`\nconfidence: 70%")
    script = FAULTS.get(key, [])
    return script[attempt] if attempt < len(script) else honest(prompt, attempt)


def test_faults_every_row_judged_or_errored_then_rerun_retries_only_errors(
    tmp_path: Path, env: dict[str, str]
) -> None:
    rows = make_rows(30)
    rows[10]["response"] = "   "  # empty answer: incorrect without a call
    rows[11]["correct_answer"] = ""  # no gold: an input problem, no call
    inp = write_rows(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(faulty) as server:
        args = judge_args(server, inp, out, "--concurrency", "4", "--timeout", "0.5",
                          "--max-retries", "2")
        first = run_cli(*args, env=env)
        assert first.returncode == 1, first.stderr
        result = read_rows(out)
        assert [r["instance_id"] for r in result] == [f"t{i}" for i in range(30)]
        status = {r["instance_id"]: r["judge"]["status"] for r in result}
        assert Counter(status.values()) == {"judged": 26, "error": 2, "empty_response": 1,
                                            "invalid_input": 1}
        for r in result:
            assert {k: r[k] for k in rows[0]} == rows[int(r["instance_id"][1:])]  # input unchanged
            if r["judge"]["status"] == "error":
                assert r["correct"] is None and r["error"] and r["raw_judge_output"] is None
            elif r["judge"]["status"] == "invalid_input":
                assert r["correct"] is None and "correct_answer" in r["error"]
            else:
                assert isinstance(r["correct"], bool) and r["error"] is None
        by_id = {r["instance_id"]: r for r in result}
        assert by_id["t7"]["judge"]["error"]["kind"] == "server_error"
        assert by_id["t9"]["judge"]["error"]["kind"] == "client_error"
        assert by_id["t8"]["parse_ok"] is False and by_id["t8"]["correct"] is False
        assert by_id["t12"]["correct"] is True and by_id["t12"]["judge"]["differs_from_reference"]
        assert by_id["t10"]["correct"] is False and by_id["t10"]["parse_ok"] is True
        # every retried request records why, attempt by attempt
        t1, t2 = by_id["t1"]["judge"]["attempts"], by_id["t2"]["judge"]["attempts"]
        assert [a["status"] for a in t1] == [429, 200]
        assert [a["status"] for a in t2] == [500, 503, 200]
        assert t1[0]["error"].startswith("rate_limit:") and t1[1]["error"] is None
        assert all(set(a) == {"status", "error", "elapsed_s"} and a["elapsed_s"] >= 0 for a in t2)
        assert by_id["t3"]["judge"]["attempts"][0]["error"].startswith("timeout:")
        expected = [i % 2 == 0 for i in range(30)]
        for i in (7, 8, 9, 10, 11, 12):
            expected[i] = by_id[f"t{i}"]["correct"]
        assert [r["correct"] for r in result] == expected
        counts = Counter(tag(p) for p in server.prompts())
        assert counts["Q007"] == 3 and counts["Q009"] == 1 and counts["Q002"] == 3
        assert "Q010" not in counts and "Q011" not in counts
        assert all(counts[f"Q{i:03d}"] == 1 for i in range(13, 30))
        assert "parse failures" in first.stdout and "server_error 1" in first.stdout
        # each failure class with its advice: the 500s are retried by a re-run, the 400 not
        assert "1 row failed with server_error" in first.stderr
        assert "a re-run of the same command retries only these" in first.stderr
        assert "1 row failed with client_error" in first.stderr
        assert "a re-run fails the same way" in first.stderr
        assert server.log[0].headers["authorization"] == "Bearer sk-test"
        assert server.log[0].body["temperature"] == 0.0
        assert server.log[0].body["max_tokens"] == 2048

        # The endpoint recovers: a re-run requests exactly the two failed rows.
        server.responder = honest
        sent = len(server.log)
        second = run_cli(*args, env=env)
        assert second.returncode == 0, second.stderr
        assert sorted(tag(p) for p in server.prompts()[sent:]) == ["Q007", "Q009"]
        final = read_rows(out)
        assert len(final) == 30 and all(r["judge"]["status"] != "error" for r in final)
        assert [r["instance_id"] for r in final] == [f"t{i}" for i in range(30)]

        # A fresh output with the same settings is answered from the cache: no request.
        sent = len(server.log)
        third = run_cli(*judge_args(server, inp, tmp_path / "again.jsonl"), env=env)
        assert third.returncode == 0, third.stderr
        assert len(server.log) == sent
        again = read_rows(tmp_path / "again.jsonl")
        assert [r["correct"] for r in again] == [r["correct"] for r in final]
        assert all(r["judge"].get("cached", True) for r in again)


def test_kill_mid_run_then_rerun_requests_only_missing_rows(
    tmp_path: Path, env: dict[str, str]
) -> None:
    n = 40
    inp = write_rows(tmp_path / "in.jsonl", make_rows(n))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest, latency=0.15) as server:
        args = judge_args(server, inp, out, "--concurrency", "4", "--no-cache")
        assert kill_cli_when(*args, watched=out, lines=12, env=env) == -signal.SIGKILL
        time.sleep(0.3)  # let requests already on the wire reach the log
        first_run = len(server.log)
        survived = {r["instance_id"] for r in read_rows(out)}
        assert 12 <= len(survived) < n
        with out.open("ab") as handle:  # and pretend the kill tore a line in half
            handle.write(b'{"instance_id": "t39", "question": "Q0')

        second = run_cli(*args, env=env)
        assert second.returncode == 0, second.stderr
        assert "torn last line" in second.stderr
        requested = [tag(p) for p in server.prompts()[first_run:]]
        missing = {f"Q{i:03d}" for i in range(n) if f"t{i}" not in survived}
        assert sorted(requested) == sorted(missing)  # each missing row once, no finished row
        final = read_rows(out)
        assert [r["instance_id"] for r in final] == [f"t{i}" for i in range(n)]
        assert [r["correct"] for r in final] == [i % 2 == 0 for i in range(n)]


def test_fatal_error_stops_the_run_and_keeps_finished_rows(
    tmp_path: Path, env: dict[str, str]
) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(20))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(lambda p, a: Reply(status=401)) as server:
        result = run_cli(*judge_args(server, inp, out, "--concurrency", "2"), env=env)
        assert result.returncode == 2
        assert "stopped early: " in result.stderr and "fatal (HTTP 401)" in result.stderr
        assert f"{server.base_url} refused judge-m" in result.stderr  # where, and which model
        assert len(server.log) <= 3  # no request after the first fatal reply except in-flight ones
        assert all(r["correct"] is None for r in read_rows(out))


def test_prompt_file_is_used_and_recorded_and_changing_it_rejudges(
    tmp_path: Path, env: dict[str, str]
) -> None:
    template = tmp_path / "answer_judge.txt"
    template.write_text("Q: {question}\nR: {answer}\nGold: {expected_answer}\n{{literal}}\n",
                        encoding="utf-8")
    inp = write_rows(tmp_path / "in.jsonl", make_rows(3))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest) as server:
        result = run_cli(*judge_args(server, inp, out, "--prompt-file", str(template)), env=env)
        assert result.returncode == 0, result.stderr
        assert server.log[0].prompt.startswith("Q: Q00")
        assert server.log[0].prompt.endswith("\n{literal}\n")
        rows = read_rows(out)
        assert rows[0]["judge"]["prompt_source"] == str(template)
        assert len({r["judge"]["prompt_sha256"] for r in rows}) == 1
        before = out.read_bytes()
        builtin = run_cli(*judge_args(server, inp, out), env=env)
        assert builtin.returncode == 2  # a changed prompt never replaces paid-for rows silently
        assert "holds 3 judge rows made with other settings: prompt_sha256:" in builtin.stderr
        assert "--restart" in builtin.stderr and "--resume-any" in builtin.stderr
        assert len(server.log) == 3 and out.read_bytes() == before
        builtin = run_cli(*judge_args(server, inp, out, "--restart"), env=env)
        assert builtin.returncode == 0, builtin.stderr
        assert "--restart: discarded 3 rows" in builtin.stderr
        assert len(server.log) == 6
        assert len(read_rows(out)) == 3


def test_input_keys_that_collide_are_renamed_not_overwritten(
    tmp_path: Path, env: dict[str, str]
) -> None:
    row = {"question": "Q000?", "response": "City 0", "correct_answer": "City 0",
           "correct": "theirs", "judge": {"who": "human"}, "input_correct": 1}
    inp = write_rows(tmp_path / "in.jsonl", [row, row])  # a duplicate row gets its own output
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest) as server:
        assert run_cli(*judge_args(server, inp, out), env=env).returncode == 0
    rows = read_rows(out)
    assert len(rows) == 2 and rows[0]["judge"]["key"] != rows[1]["judge"]["key"]
    first = rows[0]
    assert first["input_input_correct"] == "theirs" and first["input_correct"] == 1
    assert first["input_judge"] == {"who": "human"}
    assert first["correct"] is True
    assert first["judge"]["renamed_input_keys"] == ["correct->input_input_correct",
                                                    "judge->input_judge"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"question": "q", "response": "r"}\n', r"in\.jsonl:1: field 'correct_answer': missing"),
        ('{"question": "q", "response": ["r"], "correct_answer": "g"}\n',
         r"in\.jsonl:1: field 'response': expected a string, got list"),
        ('{"question": "q", "response": "r", "correct_answer": "g"}\n[1]\n',
         r"in\.jsonl:2: expected a JSON object"),
        ('{"question": "q", "response": "r", "correct_answer": "g"}\n{bad\n',
         r"in\.jsonl:2: invalid JSON"),
        ("\n\n", r"no rows to judge"),
    ],
)
def test_bad_input_is_a_located_error(
    tmp_path: Path, env: dict[str, str], lines: str, message: str
) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(lines, encoding="utf-8")
    result = run_cli("judge", "-i", inp, "-o", tmp_path / "o.jsonl", "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1", env=env)
    assert result.returncode == 2
    assert re.search(message, result.stderr), result.stderr
    assert "Traceback" not in result.stderr


def test_missing_model_and_foreign_output_file(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(1))
    no_model = run_cli("judge", "-i", inp, "-o", tmp_path / "o.jsonl",
                       env={**env, "JUDGE_MODEL": ""})
    assert no_model.returncode == 2 and "set JUDGE_MODEL or pass --model" in no_model.stderr
    foreign = write_rows(tmp_path / "foreign.jsonl", [{"id": 1}])
    result = run_cli("judge", "-i", inp, "-o", foreign, "--model", "m", env=env)
    assert result.returncode == 2 and "foreign.jsonl:1" in result.stderr
    same = run_cli("judge", "-i", inp, "-o", inp, "--model", "m", env=env)
    assert same.returncode == 2 and "is the input --input" in same.stderr
    assert read_rows(inp) == make_rows(1)


def test_environment_defaults(tmp_path: Path, env: dict[str, str]) -> None:
    inp = write_rows(tmp_path / "in.jsonl", make_rows(2))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(honest) as server:
        result = run_cli("judge", "-i", inp, "-o", out, "--no-progress",
                         env={**env, "JUDGE_MODEL": "env-model", "JUDGE_BASE_URL": server.base_url,
                              "JUDGE_API_KEY": "sk-env"})
        assert result.returncode == 0, result.stderr
        assert server.log[0].body["model"] == "env-model"
        assert server.log[0].headers["authorization"] == "Bearer sk-env"
    assert read_rows(out)[0]["judge"]["model"] == "env-model"


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield


def test_the_python_api_returns_when_the_judge_finishes_with_errors(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hopscore judge`` exits 1 when rows stay in error ("finished, result incomplete");
    ``hopscore.judge_file`` then returns the output, the errors in it, as documented, and it
    needs no ``click`` of its own (typer 0.28 carries its own, and click is no dependency)."""
    import sys

    import hopscore

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(sys.modules, "click", None)  # importing click fails, as without it
    inp = write_rows(tmp_path / "in.jsonl", make_rows(10))
    out = tmp_path / "out.jsonl"
    with FakeOpenAI(faulty) as server:  # some rows fail after their retries
        returned = hopscore.judge_file(inp, out, model="judge-m", base_url=server.base_url,
                                       progress=False, backoff=0.01, max_retries=1,
                                       timeout=0.5, concurrency=4)
    assert returned == out
    status = Counter(row["judge"]["status"] for row in read_rows(out))
    assert status == {"judged": 7, "error": 3}  # Q002 (two 5xx), Q007 (5xx), Q009 (400)
