"""hopscore's inspect_ai tasks, and ``hopscore score --from inspect`` on the logs they write.

``inspect eval hopscore/<benchmark> --model mockllm/model`` runs offline (mockllm's tiktoken
download is stubbed: offline_tiktoken/sitecustomize.py); a scripted mockllm (custom_outputs)
gives answers worth scoring. The log's own metrics, ``hopscore score --from inspect`` on the
log, and ``hopscore score`` on the official gold with the same answers as universal JSON Lines
must all agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli, shared_file
from tests.parity.common import SAMPLES

pytest.importorskip("inspect_ai")
INSPECT = shutil.which("inspect", path=str(Path(sys.executable).parent))
STUB = Path(__file__).with_name("offline_tiktoken")


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOPSCORE_CACHE_DIR": str(tmp_path / "cache"),
            "INSPECT_LOG_DIR": str(tmp_path / "logs")}


def _metrics(out: Path) -> dict[str, Any]:
    metrics = json.loads((out / "metrics.json").read_text())
    metrics.pop("warnings")
    return metrics


def _log_metrics(log: Path) -> dict[str, float]:
    from inspect_ai.log import read_eval_log

    result = read_eval_log(str(log))
    assert result.status == "success", result.error
    assert result.results is not None
    (scores,) = result.results.scores
    return {name: metric.value for name, metric in scores.metrics.items()}


def _universal(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _inspect_eval(tmp_path: Path, *args: str) -> Path:
    env = {**os.environ, **_env(tmp_path), "PYTHONPATH": str(STUB)}
    logs = tmp_path / "cli-logs"
    proc = subprocess.run([str(INSPECT), "eval", *args, "--model", "mockllm/model", "--log-dir",
                           str(logs), "--display", "plain"], capture_output=True, text=True,
                          env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (log,) = sorted(logs.iterdir())
    return log


@pytest.mark.skipif(INSPECT is None, reason="the inspect command is not installed")
def test_inspect_eval_runs_hopscore_tasks_and_its_log_rescores_identically(tmp_path: Path) -> None:
    gold = FIXTURES / "hotpotqa" / "dev_small.json"
    log = _inspect_eval(tmp_path, "hopscore/hotpotqa", "-T", f"gold={gold}")
    result = run_cli("score", "hotpotqa", "--gold", gold, "-p", log, "--from", "inspect",
                     "-o", tmp_path / "from", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    records = json.loads(gold.read_text())
    assert f"joined {len(records)} of {len(records)} records" in result.stderr
    default = "Default output from mockllm/model"
    plain = run_cli("score", "hotpotqa", "--gold", gold, "-p", _universal(
        tmp_path / "u.jsonl", [{"id": r["_id"], "answer": default, "sp": []} for r in records]),
        "-o", tmp_path / "plain", env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    metrics = _metrics(tmp_path / "from")
    assert metrics == _metrics(tmp_path / "plain")
    logged = _log_metrics(log)
    for name, value in metrics["metrics"].items():
        assert logged[name] == pytest.approx(value, abs=1e-12), name
    for group, summary in metrics["groups"].items():
        for name, value in summary["metrics"].items():
            assert logged[f"{group}_{name}"] == pytest.approx(value, abs=1e-12), (group, name)


@pytest.mark.skipif(INSPECT is None, reason="the inspect command is not installed")
def test_inspect_eval_runs_a_task_on_the_bundled_sample(tmp_path: Path) -> None:
    log = _inspect_eval(tmp_path, "hopscore/strategyqa")
    assert _log_metrics(log)["accuracy"] == 0.0  # "Default output ..." is neither yes nor no


def _scripted_eval(tmp_path: Path, benchmark: str, gold: Path, replies: dict[str, str],
                   log_format: str = "eval") -> Path:
    """Run a hopscore task in-process with a mockllm whose reply depends on the question."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from hopscore.integrations.inspect import build_task

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        prompt = " ".join(messages[-1].text.split())
        matches = [q for q in replies if " ".join(q.split()) in prompt]
        text = replies[max(matches, key=len)] if matches else "no idea"
        output = ModelOutput.from_content(model="mockllm", content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    model = get_model("mockllm/model", custom_outputs=reply)
    logs = tmp_path / f"logs-{log_format}"
    (result,) = inspect_eval(build_task(benchmark, gold=str(gold)), model=model,
                             log_dir=str(logs), log_format=log_format, display="none")
    assert result.status == "success", result.error
    (log,) = sorted(logs.iterdir())
    return log


def test_scripted_hotpotqa_log_scores_as_the_official_file(tmp_path: Path) -> None:
    gold = shared_file("hotpotqa/hotpot_dev_distractor_v1.first53.json")
    records = json.loads(gold.read_text())
    replies, universal = {}, []
    for index, record in enumerate(records):
        answer = record["answer"] if index % 3 else records[index - 1]["answer"]
        facts = [list(f) for f in record["supporting_facts"][: index % 3]]
        cited = ", ".join(f"[{t}, {s}]" for t, s in facts)
        replies[record["question"]] = (f"Reasoning over the paragraphs.\nAnswer: {answer}"
                                       + (f"\nSupporting facts: {cited}" if facts else ""))
        universal.append({"id": record["_id"], "answer": answer, "sp": facts})
    plain = run_cli("score", "hotpotqa", "--gold", gold, "-p",
                    _universal(tmp_path / "u.jsonl", universal), "-o", tmp_path / "plain",
                    env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    want = _metrics(tmp_path / "plain")
    assert 0 < want["metrics"]["em"] < 1 and 0 < want["metrics"]["sp_f1"] < 1
    for log_format in ("eval", "json"):
        log = _scripted_eval(tmp_path, "hotpotqa", gold, replies, log_format)
        out = tmp_path / f"from-{log_format}"
        result = run_cli("score", "hotpotqa", "--gold", gold, "-p", log, "--from", "inspect",
                         "-o", out, env=_env(tmp_path))
        assert result.returncode == 0, result.stderr
        assert _metrics(out) == want, log_format
        logged = _log_metrics(log)
        for name, value in want["metrics"].items():
            assert logged[name] == pytest.approx(value, abs=1e-12), name

        from hopscore.harness.inspect_log import read_log

        assert read_log(log).records == read_log(log, use_inspect=False).records


def _kept(answer: str) -> str:
    """A gold answer that reply extraction keeps as it is (it drops a trailing parenthesis,
    "; ...", " - ..." and a final period, as explanations), else another answer."""
    plain = not re.search(r"[(;\"'*_`]|\s[-\u2013\u2014]\s|because|due to|\.$", answer)
    return answer if plain and answer == answer.strip() else "Paris"


@pytest.mark.parametrize(
    ("name", "gold", "answer_of"),
    [
        ("strategyqa", "shared:strategyqa/eladsegal/dev.json",
         lambda i, r: ("yes" if r["answer"] else "no") if i % 4 else "maybe"),
        ("bamboogle", "shared:bamboogle/bamboogle_test_questions_and_answers.json",
         lambda i, r: r["answer"] if i % 2 else "Paris"),
        ("feverous", "sample:feverous/gold.jsonl",
         lambda i, r: r["label"] if i % 2 else "REFUTES"),
        ("quartz", "sample:quartz/dev.jsonl", lambda i, r: r["answerKey"] if i % 2 else "B"),
        ("frames", "shared:frames/simpledeepsearcher/frames.first200.json",
         lambda i, r: _kept(r["Answer"]) if i % 3 else "Paris"),
        ("openqa", "shared:flashrag/quick_start/nq/test.jsonl",
         lambda i, r: r["golden_answers"][0] if i % 3 else f"It is {r['golden_answers'][0]}."),
    ],
)
def test_scripted_logs_of_other_benchmarks(name: str, gold: str, answer_of: Any,
                                           tmp_path: Path) -> None:
    kind, _, rel = gold.partition(":")
    path = shared_file(rel) if kind == "shared" else SAMPLES / rel
    text = path.read_text(encoding="utf-8")
    records = (json.loads(text) if path.suffix == ".json"
               else [json.loads(line) for line in text.splitlines() if line.strip()])
    records = [r for r in records if r.get("id", "x") != ""]  # FEVEROUS's blank header
    from hopscore import benchmarks

    examples = benchmarks.get(name).load_gold(path)
    replies, universal = {}, []
    for index, (record, example) in enumerate(zip(records, examples, strict=True)):
        replies[example.question] = f"Step by step.\nAnswer: {answer_of(index, record)}"
        universal.append({"id": example.id, "answer": answer_of(index, record)})
    plain = run_cli("score", name, "--gold", path, "-p",
                    _universal(tmp_path / "u.jsonl", universal), "-o", tmp_path / "plain",
                    env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    log = _scripted_eval(tmp_path, name, path, replies)
    out = tmp_path / "from"
    result = run_cli("score", name, "--gold", path, "-p", log, "--from", "inspect",
                     "-o", out, env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    logged = _log_metrics(log)
    metrics = _metrics(out)
    for metric, value in metrics["metrics"].items():
        assert logged[metric] == pytest.approx(value, abs=1e-12), metric
    assert max(metrics["metrics"].values()) > 0
    assert metrics == _metrics(tmp_path / "plain")


def test_browsecomp_plus_log_rescores_as_its_own_metrics(tmp_path: Path) -> None:
    """The BrowseComp-Plus task's log (a reply in its Explanation / Exact Answer / Confidence
    form) rescored with --from inspect gives the log's metrics: every query completed, no
    search calls or retrieved documents (a plain task searches nothing)."""
    gold = (Path(__file__).resolve().parents[2] / "src/hopscore/benchmarks/browsecomp_plus"
            / "samples" / "gold")
    from hopscore import benchmarks

    examples = benchmarks.get("browsecomp-plus").load_gold(gold)
    replies = {e.question: f"Explanation: read.\nExact Answer: {e.answer}\nConfidence: 90%"
               for e in examples}
    log = _scripted_eval(tmp_path, "browsecomp-plus", gold, replies)
    out = tmp_path / "from"
    result = run_cli("score", "browsecomp-plus", "--gold", gold, "-p", log, "--from", "inspect",
                     "-o", out, env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"joined {len(examples)} of {len(examples)} records" in " ".join(result.stderr.split())
    metrics = _metrics(out)["metrics"]
    logged = _log_metrics(log)
    assert metrics["completed"] == 1.0 and metrics["search_calls"] == 0.0
    for name, value in metrics.items():
        assert logged[name] == pytest.approx(value, abs=1e-12), name
