"""MuSiQue through the generic machinery: ``hopscore run`` against the stand-in server (cot,
self-ask, open book, shards), the run's predictions rescored, ``merge``, ``report``,
``export``, ``analyze``, and the inspect task with its log rescored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.helpers import write_jsonl
from tests.conftest import run_cli
from tests.openai_server import FakeOpenAI, Reply
from tests.parity import adversarial_musique as adversarial

SAMPLE = Path(__file__).resolve().parents[2] / "src/hopscore/benchmarks/musique/samples"
GOLD = SAMPLE / "gold.jsonl"
RECORDS = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]


# --- hopscore score and hopscore run on the sample ---------------------------------------------

ANSWERS = {r["question"]: (r["answer"] if i != 2 else "Kell",
                           [p["idx"] for p in r["paragraphs"] if p["is_supporting"]][:2])
           for i, r in enumerate(RECORDS)}


def _reply(prompt: str, attempt: int) -> Reply:
    question = [line for line in prompt.splitlines() if line.startswith("Question: ")][-1]
    answer, support = ANSWERS[question[len("Question: "):]]
    cited = ", ".join(map(str, support))
    return Reply(f"First [Paragraph {support[0]}].\nSupporting paragraphs: {cited}\n"
                 f"Answer: {answer}")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("musique-run")
    with FakeOpenAI(_reply) as server:
        done = run_cli("run", "musique", "--gold", GOLD, "--model", "openai/test-model",
                       "--base-url", server.base_url, "-o", root / "run", "--no-cache",
                       "--no-progress", "--resamples", "0", timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        full = write_jsonl(root / "full.jsonl", adversarial.full_gold(RECORDS, 0))
        refused = run_cli("run", "musique", "--gold", full, "--model", "openai/test-model",
                          "--base-url", server.base_url, "-o", root / "full-run",
                          "--no-cache", "--no-progress", timeout=120)
        (root / "refused.txt").write_text(f"{refused.returncode}\n{refused.stderr}")
    yield root


def test_run_writes_official_predictions_in_gold_order(ran: Path) -> None:
    lines = [json.loads(x) for x in (ran / "run" / "predictions.jsonl").read_text().splitlines()]
    assert [x["id"] for x in lines] == [r["id"] for r in RECORDS]
    assert lines[0] == {"id": RECORDS[0]["id"], "predicted_answer": "Dunmere",
                        "predicted_support_idxs": [1, 2], "predicted_answerable": True}
    metrics = json.loads((ran / "run" / "metrics.json").read_text())["metrics"]
    assert metrics["answer_em"] == 0.75
    assert metrics["support_recall"] == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)


def test_run_predictions_rescore_to_the_run_scores(ran: Path) -> None:
    done = run_cli("score", "musique", "-g", GOLD, "-p", ran / "run" / "predictions.jsonl",
                   "-o", ran / "scored", "--resamples", "0")
    assert done.returncode == 0, done.stderr
    def rows(path: Path) -> list[Any]:
        return [{k: v for k, v in json.loads(x).items() if k in ("id", "metrics")}
                for x in path.read_text().splitlines()]
    assert rows(ran / "scored" / "scores.jsonl") == rows(ran / "run" / "scores.jsonl")


def test_run_on_full_is_refused_before_any_request(ran: Path) -> None:
    status, _, err = (ran / "refused.txt").read_text().partition("\n")
    assert status == "2" and "MuSiQue-Full question is two" in err
    assert "Traceback" not in err


# --- the inspect task -------------------------------------------------------------------------


def test_inspect_task_scores_answers_and_cited_support(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from hopscore.integrations.inspect import build_task

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        output = ModelOutput.from_content(model="mockllm",
                                          content=_reply(messages[-1].text, 0).content or "")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    (result,) = inspect_eval(build_task("musique"),
                             model=get_model("mockllm/model", custom_outputs=reply),
                             log_dir=str(tmp_path / "logs"), display="none")
    assert result.status == "success", result.error
    assert result.results is not None
    values = {name: m.value for s in result.results.scores for name, m in s.metrics.items()}
    assert values["answer_em"] == 0.75
    (log,) = sorted((tmp_path / "logs").iterdir())
    done = run_cli("score", "musique", "-g", GOLD, "-p", log, "--from", "inspect", "--json",
                   "--resamples", "0")
    assert done.returncode == 0, done.stderr
    metrics = json.loads(done.stdout)["metrics"]
    assert metrics["answer_em"] == 0.75
    assert metrics["support_recall"] == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)


# --- a chain strategy: contexts from the example's own paragraphs become the support ----------

PLANS = {r["question"]: ([(f"What is said of {r['paragraphs'][s]['title']}?", "noted")
                          for s in [p["idx"] for p in r["paragraphs"] if p["is_supporting"]][:1]],
                         r["answer"]) for r in RECORDS}


def _chain(body: dict[str, Any], attempt: int) -> Reply:
    from tests.run.chain_script import chain_reply, parse_call

    call = parse_call(body)
    return Reply(chain_reply(PLANS[call.question], call.follow_ups))


def test_self_ask_support_comes_from_the_paragraphs_it_read(tmp_path: Path) -> None:
    with FakeOpenAI(body_responder=_chain) as server:
        done = run_cli("run", "musique", "--gold", GOLD, "--model", "openai/test-model",
                       "--base-url", server.base_url, "-o", tmp_path / "sa", "--no-cache",
                       "--no-progress", "--resamples", "0", "--strategy", "self-ask",
                       timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(x) for x in (tmp_path / "sa" / "predictions.jsonl").read_text()
             .splitlines()]
    assert [x["predicted_answer"] for x in lines] == [r["answer"] for r in RECORDS]
    first_support = [next(p["idx"] for p in r["paragraphs"] if p["is_supporting"])
                     for r in RECORDS]
    assert all(s in x["predicted_support_idxs"] for s, x in zip(first_support, lines,
                                                                strict=True))


def test_shards_merge_and_report_export_analyze_read_the_run(ran: Path) -> None:
    with FakeOpenAI(_reply) as server:
        for shard in (0, 1):
            done = run_cli("run", "musique", "--gold", GOLD, "--model", "openai/test-model",
                           "--base-url", server.base_url, "-o", ran / f"shard{shard}",
                           "--no-cache", "--no-progress", "--resamples", "0",
                           "--shard", f"{shard}/2", timeout=120)
            assert done.returncode == 0, done.stderr[-3000:]
    steps = [("merge", ran / "shard0", ran / "shard1", "-o", ran / "merged"),
             ("report", ran / "run", "--gold", GOLD, "-o", ran / "report.html"),
             ("export", ran / "run", "-o", ran / "run.jsonl"),
             ("analyze", ran / "run", "--gold", GOLD, "-o", ran / "analysis.json")]
    for step in steps:
        done = run_cli(*step)
        assert done.returncode == 0, (step[0], done.stderr[-2000:])

    def metrics(path: Path) -> dict[str, float]:
        return json.loads((path / "metrics.json").read_text())["metrics"]

    assert metrics(ran / "merged") == metrics(ran / "run")
    assert "musique support" in (ran / "analysis.json").read_text()
    assert (ran / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_open_book_prompt_shows_retrieved_documents_not_paragraphs(tmp_path: Path) -> None:
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [
        {"id": "d1", "title": "Mira Castell", "text": "Mira Castell was born in Dunmere."},
        {"id": "d2", "title": "Brannock Bridge", "text": "Designed by Iver Stane."}])
    with FakeOpenAI(_reply) as server:
        done = run_cli("run", "musique", "--gold", GOLD, "--model", "openai/test-model",
                       "--base-url", server.base_url, "-o", tmp_path / "open", "--no-cache",
                       "--no-progress", "--resamples", "0", "--corpus", corpus, "--limit", "1",
                       timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    (sample,) = [json.loads(x) for x in (tmp_path / "open" / "samples.jsonl").read_text()
                 .splitlines()]
    prompt = "\n".join(m["content"] for m in sample["prompt"])
    assert "Mira Castell was born in Dunmere." in prompt
    assert "Paragraph 1:" not in prompt and "Supporting paragraphs:" not in prompt

