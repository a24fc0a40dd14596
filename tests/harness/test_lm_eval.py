"""``hopscore score --from lm-eval`` on samples files written by lm-evaluation-harness itself.

lm-eval runs offline here on a local YAML task over a JSON Lines file of the gold (its
``json`` dataset builder, no Hub access): once through the ``lm_eval`` command with its
``dummy`` model, and once in-process with a scripted model (lm_eval_oracle.py) whose samples
file lm-eval's own EvaluationTracker writes. The scores through ``--from lm-eval`` must equal
``hopscore score`` on the official gold with the same answers written as universal JSON Lines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli, shared_file

pytest.importorskip("lm_eval")
LM_EVAL = shutil.which("lm_eval", path=str(Path(sys.executable).parent))
ORACLE = Path(__file__).with_name("lm_eval_oracle.py")

TASK = """\
task: {name}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {docs}
test_split: test
output_type: generate_until
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n\\n"]
  max_gen_toks: 64
{filters}metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""
TWO_FILTERS = """\
filter_list:
  - name: raw
    filter:
      - function: take_first
  - name: answer-line
    filter:
      - function: regex
        regex_pattern: "Answer: (.*)"
      - function: take_first
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1",
            "HOPSCORE_CACHE_DIR": str(tmp_path / "cache"), "TOKENIZERS_PARALLELISM": "false"}


def _task(folder: Path, name: str, docs: list[dict[str, Any]], filters: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / f"{name}.yaml").write_text(TASK.format(name=name, docs=path, filters=filters))
    return folder


def _samples(folder: Path, name: str) -> Path:
    found = sorted(folder.rglob(f"samples_{name}_*.jsonl"))
    assert len(found) == 1, found
    return found[0]


def _metrics(out: Path) -> dict[str, Any]:
    metrics = json.loads((out / "metrics.json").read_text())
    metrics.pop("warnings")
    return metrics


def _universal(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.skipif(LM_EVAL is None, reason="the lm_eval command is not installed")
def test_lm_eval_cli_dummy_model_samples_score_by_id(tmp_path: Path) -> None:
    gold_path = FIXTURES / "hotpotqa" / "dev_small.json"
    gold = json.loads(gold_path.read_text())
    docs = [{"id": r["_id"], "question": r["question"], "answer": r["answer"]} for r in gold]
    tasks = _task(tmp_path / "tasks", "hopscore_test_dummy", docs)
    env = {**os.environ, **_env(tmp_path)}
    proc = subprocess.run(
        [str(LM_EVAL), "--model", "dummy", "--tasks", "hopscore_test_dummy", "--include_path",
         str(tasks), "--log_samples", "--output_path", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    samples = _samples(tmp_path / "out", "hopscore_test_dummy")
    result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from", "lm-eval",
                     "-o", tmp_path / "from", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"joined {len(gold)} of {len(gold)} records" in result.stderr
    assert f"{len(gold)} by id" in result.stderr
    universal = _universal(tmp_path / "u.jsonl", [{"id": r["_id"], "answer": "lol", "sp": []}
                                                   for r in gold])
    plain = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", universal,
                    "-o", tmp_path / "plain", env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert _metrics(tmp_path / "from") == _metrics(tmp_path / "plain")


def _oracle(tmp_path: Path, tasks: Path, name: str, replies: dict[str, str]) -> Path:
    replies_path = tmp_path / f"{name}.replies.json"
    replies_path.write_text(json.dumps(replies))
    env = {**os.environ, **_env(tmp_path)}
    proc = subprocess.run([sys.executable, str(ORACLE), str(tasks), name, str(tmp_path / name),
                           str(replies_path)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _samples(tmp_path / name, name)


def _hotpot_reply(index: int, record: dict[str, Any], wrong: str) -> tuple[str, str, list[Any]]:
    """(reply, the answer in it, the facts it cites)."""
    facts = [list(f) for f in record["supporting_facts"][: index % 3]]
    answer = record["answer"] if index % 2 == 0 else wrong
    cited = ", ".join(f"[{t}, {s}]" for t, s in facts)
    reply = f"Let me work through the paragraphs.\nAnswer: {answer}"
    if facts:
        reply += f"\nSupporting facts: {cited}"
    return reply, answer, facts


def test_lm_eval_samples_score_as_the_official_file_by_id_question_and_filter(
    tmp_path: Path,
) -> None:
    gold_path = shared_file("hotpotqa/hotpot_dev_distractor_v1.first53.json")
    gold = json.loads(gold_path.read_text())
    replies, universal = {}, []
    for index, record in enumerate(gold):
        reply, answer, facts = _hotpot_reply(index, record, gold[(index + 1) % len(gold)]["answer"])
        replies[record["question"]] = reply
        universal.append({"id": record["_id"], "answer": answer, "sp": facts})
    plain = run_cli("score", "hotpotqa", "--gold", gold_path, "-p",
                    _universal(tmp_path / "u.jsonl", universal), "-o", tmp_path / "plain",
                    env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    want = _metrics(tmp_path / "plain")
    assert 0 < want["metrics"]["em"] < 1 and 0 < want["metrics"]["sp_f1"] < 1

    # documents as the Hub copy has them (id, question, answer): joined by id; two filters
    with_ids = [{"id": r["_id"], "question": r["question"], "answer": r["answer"]} for r in gold]
    tasks = _task(tmp_path / "tasks", "hopscore_test_ids", with_ids, TWO_FILTERS)
    samples = _oracle(tmp_path, tasks, "hopscore_test_ids", replies)
    unchosen = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples,
                       "--from", "lm-eval", env=_env(tmp_path))
    assert unchosen.returncode == 2
    assert "raw" in unchosen.stderr and "answer-line" in unchosen.stderr
    assert "--filter" in unchosen.stderr
    for name in ("raw", "answer-line"):
        out = tmp_path / f"from-{name}"
        result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from",
                         "lm-eval", "--filter", name, "-o", out, env=_env(tmp_path))
        assert result.returncode == 0, result.stderr
        assert f"{len(gold)} by id" in result.stderr
        assert _metrics(out) == want, name
    wrong = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from",
                    "lm-eval", "--filter", "nope", env=_env(tmp_path))
    assert wrong.returncode == 2 and "no filter 'nope'" in wrong.stderr

    # documents without ids (answer-only dumps): joined by question text
    no_ids = [{"question": r["question"], "answer": r["answer"]} for r in gold]
    tasks = _task(tmp_path / "tasks2", "hopscore_test_questions", no_ids)
    samples = _oracle(tmp_path, tasks, "hopscore_test_questions", replies)
    out = tmp_path / "from-questions"
    result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from", "lm-eval",
                     "-o", out, env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"0 by id, {len(gold)} by question text" in result.stderr
    assert _metrics(out) == want


def test_lm_eval_strategyqa_yes_no_replies(tmp_path: Path) -> None:
    gold_path = shared_file("strategyqa/eladsegal/dev.json")
    gold = json.loads(gold_path.read_text())
    replies, universal = {}, []
    for index, record in enumerate(gold):
        answer = record["answer"] if index % 3 else not record["answer"]
        replies[record["question"]] = f"Thinking it over.\nAnswer: {'Yes' if answer else 'no'}"
        universal.append({"id": record["qid"], "answer": answer})
    docs = [{"qid": r["qid"], "question": r["question"], "answer": r["answer"]} for r in gold]
    tasks = _task(tmp_path / "tasks", "hopscore_test_sqa", docs)
    samples = _oracle(tmp_path, tasks, "hopscore_test_sqa", replies)
    out = tmp_path / "from"
    result = run_cli("score", "strategyqa", "--gold", gold_path, "-p", samples,
                     "--from", "lm-eval", "-o", out, env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    plain = run_cli("score", "strategyqa", "--gold", gold_path, "-p",
                    _universal(tmp_path / "u.jsonl", universal), "-o", tmp_path / "plain",
                    env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert _metrics(out) == _metrics(tmp_path / "plain")


def test_unjoined_and_bad_lines_are_reported(tmp_path: Path) -> None:
    gold_path = FIXTURES / "hotpotqa" / "dev_small.json"
    gold = json.loads(gold_path.read_text())
    rows = [{"doc_id": i, "doc": {"id": r["_id"], "question": r["question"]}, "target": "x",
             "resps": [["Answer: " + r["answer"]]], "filtered_resps": ["Answer: " + r["answer"]],
             "filter": "none"} for i, r in enumerate(gold[:-1])]
    rows.append({"doc_id": 99, "doc": {"question": "Not a gold question?"}, "target": "",
                 "resps": [["x"]], "filtered_resps": ["x"], "filter": "none"})
    samples = _universal(tmp_path / "samples_t_x.jsonl", rows)
    result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from", "lm-eval",
                     "--strict", env=_env(tmp_path))
    assert result.returncode == 1, result.stderr
    assert f"joined {len(gold) - 1} of {len(gold)} records" in result.stderr
    assert "1 matched no gold example" in result.stderr and "samples_t_x.jsonl:" in result.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"doc": {}, "resps": []}) + "\n")
    result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", bad, "--from", "lm-eval",
                     env=_env(tmp_path))
    assert result.returncode == 2 and "bad.jsonl:1" in result.stderr
    assert "Traceback" not in result.stderr


def test_replies_without_supporting_facts_warn_as_a_file_without_sp(tmp_path: Path) -> None:
    """Replies that cite no supporting facts score sp and joint 0 on every example: said as
    for a prediction file without "sp" (it was silent)."""
    gold_path = FIXTURES / "hotpotqa" / "dev_small.json"
    gold = json.loads(gold_path.read_text())
    replies = {r["question"]: f"Reasoning.\nAnswer: {r['answer']}" for r in gold}
    docs = [{"id": r["_id"], "question": r["question"], "answer": r["answer"]} for r in gold]
    tasks = _task(tmp_path / "tasks", "hopscore_test_nosp", docs)
    samples = _oracle(tmp_path, tasks, "hopscore_test_nosp", replies)
    result = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", samples, "--from", "lm-eval",
                     "-o", tmp_path / "from", env=_env(tmp_path))
    assert result.returncode == 0, result.stderr
    warnings = json.loads((tmp_path / "from" / "metrics.json").read_text())["warnings"]
    assert any('no prediction has "sp"; supporting-fact and joint metrics score 0 for every '
               'example' in w and "Supporting facts:" in w for w in warnings), warnings
    plain = run_cli("score", "hotpotqa", "--gold", gold_path, "-p", _universal(
        tmp_path / "u.jsonl", [{"id": r["_id"], "answer": r["answer"]} for r in gold]),
        "-o", tmp_path / "plain", env=_env(tmp_path))
    assert plain.returncode == 0, plain.stderr
    assert _metrics(tmp_path / "from") == _metrics(tmp_path / "plain")
    assert _metrics(tmp_path / "from")["metrics"]["em"] == 1.0
