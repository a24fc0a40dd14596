"""Measurement: the search agent's retrieval recall on real dev records, through the real CLI.

For each dataset of the shared data folder (HotpotQA dev-distractor, first 53 records; MuSiQue-Ans,
128 dev records), a corpus is made from the records' own paragraphs
(``python -m hopscore.run.gold_corpus``: every distinct paragraph, gold and distractors), and
``hopscore agent NAME --agent search`` runs against a scripted stand-in model
(``tests/openai_server.py``) with one of two query policies:

* ``question``: one search, the question itself, then an answer;
* ``decomposition`` (MuSiQue only): one search per gold sub-question of
  ``question_decomposition``, with ``#k`` replaced by the gold answer of hop k (an oracle
  decomposer: what a perfect planner would ask), then an answer.

So the numbers are those of the retrieval (BM25, ``--top-k``) behind the agent, not of a model:
the recall of the gold paragraphs (by title) in ``metrics.json``'s ``search`` block. ::

    HOPSCORE_SHARED_DATA=/path/to/shared/data python bench/search_agent_recall.py --top-k 3

Prints a table and writes bench/results/search_agent_recall.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HOPSCORE_SHARED_DATA", REPO.parent / "shared" / "data"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.openai_server import FakeOpenAI, Reply  # noqa: E402

DATASETS = {
    "hotpotqa": "hotpotqa/hotpot_dev_distractor_v1.first53.json",
    "musique": "musique/migres/musique.json",
}


def _filled(question: str, answers: list[str]) -> str:
    """``#k`` replaced by the answer of hop k (left as it is when hop k is not answered)."""
    def answer(match: re.Match[str]) -> str:
        k = int(match.group(1))
        return answers[k - 1] if k <= len(answers) else match.group(0)

    return re.sub(r"#(\d+)", answer, question)


def musique_hops(path: Path) -> dict[str, list[str]]:
    """question -> its sub-questions with ``#k`` filled in by the gold answers."""
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        answers: list[str] = []
        queries = []
        for hop in record["question_decomposition"]:
            queries.append(_filled(hop["question"], answers))
            answers.append(hop["answer"])
        out[record["question"].strip()] = queries
    return out


def responder(plans: dict[str, list[str]] | None) -> Any:
    def reply(body: dict[str, Any], attempt: int) -> Reply:
        messages = body["messages"]
        question = messages[1]["content"].removeprefix("Question: ").strip()
        queries = plans[question] if plans is not None else [question]
        done = sum(m["role"] == "assistant" for m in messages)
        if done >= len(queries):
            return Reply("<answer>unknown</answer>")
        return Reply(f"<search>{queries[done]}</search>")

    return reply


def run(name: str, gold: Path, policy: str, top_k: int, work: Path) -> dict[str, Any]:
    corpus = work / f"{name}-corpus.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-m", "hopscore.run.gold_corpus", name, str(gold),
                    str(corpus)], check=True, env=env, capture_output=True)
    plans = musique_hops(gold) if policy == "decomposition" else None
    out = work / f"{name}-{policy}"
    with FakeOpenAI(body_responder=responder(plans)) as server:
        done = subprocess.run(
            [sys.executable, "-m", "hopscore", "agent", name, "--agent", "search", "--gold",
             str(gold), "--corpus", str(corpus), "--model", "openai/scripted", "--base-url",
             server.base_url, "-o", str(out), "--top-k", str(top_k), "--max-turns", "6",
             "--no-progress", "--resamples", "0", "--cache-dir", str(work / "cache")],
            env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    search = json.loads((out / "metrics.json").read_text())["search"]
    documents = sum(1 for _ in corpus.open(encoding="utf-8"))
    return {"dataset": name, "policy": policy, "top_k": top_k, "questions": search["questions"],
            "corpus_documents": documents,
            "search_calls_per_question": search["search_calls_per_question"],
            "retrieval_recall": search["retrieval_recall"],
            "all_gold_retrieved": search["all_gold_retrieved"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top-k", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, relative in DATASETS.items():
            gold = SHARED / relative
            if not gold.is_file():
                print(f"skipped {name}: {gold} not found", file=sys.stderr)
                continue
            policies = ["question"] + (["decomposition"] if name == "musique" else [])
            rows += [run(name, gold, policy, args.top_k, Path(tmp)) for policy in policies]
    print(f"{'dataset':<9} {'policy':<13} {'n':>4} {'docs':>5} {'searches':>8} "
          f"{'recall':>7} {'all gold':>8}")
    for r in rows:
        print(f"{r['dataset']:<9} {r['policy']:<13} {r['questions']:>4} "
              f"{r['corpus_documents']:>5} {r['search_calls_per_question']:>8.2f} "
              f"{r['retrieval_recall']:>7.3f} {r['all_gold_retrieved']:>8.3f}")
    results = REPO / "bench" / "results" / "search_agent_recall.json"
    results.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
