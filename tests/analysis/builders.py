"""Small, realistic inputs for the analysis tests: HotpotQA gold with context, score and run
directories made by the real scorer, judge and sql-match output rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hopscore import benchmarks
from hopscore.scores.scoring import score_files

PARAGRAPHS = {
    "Ed Wood": ["Edward Davis Wood Jr. was an American filmmaker.", "He was born in Poughkeepsie."],
    "Scott Derrickson": ["Scott Derrickson is an American director.", "He lives in Los Angeles."],
    "Doctor Strange": ["Doctor Strange is a 2016 film.", "It was directed by Scott Derrickson."],
    "Kiss and Tell": ["Kiss and Tell is a 1945 comedy.", "Shirley Temple starred in it."],
    "Shirley Temple": ["Shirley Temple was an actress.", "She served as Chief of Protocol."],
    "Paris": ["Paris is the capital of France.", "It hosts the Louvre."],
}


def hotpot_record(i: int) -> dict[str, Any]:
    titles = list(PARAGRAPHS)
    gold_titles = [titles[i % 6], titles[(i + 1) % 6]]
    return {
        "_id": f"q{i:03d}",
        "question": f"Question number {i} about {gold_titles[0]}?",
        "answer": ["yes", "Chief of Protocol", "Los Angeles", "Poughkeepsie"][i % 4],
        "supporting_facts": [[gold_titles[0], 0], [gold_titles[1], 1]],
        "context": [[t, PARAGRAPHS[t]] for t in [*gold_titles, titles[(i + 3) % 6]]],
        "type": "comparison" if i % 3 == 0 else "bridge",
        "level": ["easy", "medium", "hard"][i % 3],
    }


def write_hotpot_gold(path: Path, n: int = 24) -> list[dict[str, Any]]:
    records = [hotpot_record(i) for i in range(n)]
    path.write_text(json.dumps(records), encoding="utf-8")
    return records


def write_hotpot_predictions(path: Path, records: list[dict[str, Any]], wrong: set[int],
                             wrong_sp: set[int] = frozenset(), skip: set[int] = frozenset(),
                             wrong_answer: str = "Paris") -> None:
    answers = {}
    sps = {}
    for i, record in enumerate(records):
        if i in skip:
            continue
        answers[record["_id"]] = wrong_answer if i in wrong else record["answer"]
        sps[record["_id"]] = record["supporting_facts"][:1] if i in wrong_sp else record[
            "supporting_facts"]
    path.write_text(json.dumps({"answer": answers, "sp": sps}), encoding="utf-8")


def scored_dir(tmp: Path, name: str, gold: Path, records: list[dict[str, Any]], **kwargs: Any
               ) -> Path:
    predictions = tmp / f"{name}.pred.json"
    write_hotpot_predictions(predictions, records, **kwargs)
    out = tmp / name
    score_files(benchmarks.get("hotpotqa"), gold, predictions, out, resamples=300)
    return out


def add_run_files(directory: Path, records: list[dict[str, Any]], **overrides: Any) -> None:
    """Turn a score directory into a run directory: config.json and samples.jsonl."""
    (directory / "config.json").write_text(json.dumps({"model": "test/model"}), encoding="utf-8")
    scores = [json.loads(line) for line in (directory / "scores.jsonl").read_text().splitlines()]
    with (directory / "samples.jsonl").open("w", encoding="utf-8") as handle:
        for score, record in zip(scores, records, strict=True):
            row = {
                "id": score["id"],
                "prompt": [{"role": "user", "content": f"Context...\n{record['question']}"}],
                "raw_output": f"Reasoning.\nSo the answer is: {score['prediction']}",
                "extracted": {"strict": score["prediction"], "flexible": score["prediction"]},
                "latency": 0.1, "attempts": 1, "error": None,
            }
            row.update(overrides.get(score["id"], {}))
            handle.write(json.dumps(row) + "\n")


def judge_rows(ids: list[str], correct: list[bool | None], **extra: Any) -> list[dict[str, Any]]:
    rows = []
    for example_id, verdict in zip(ids, correct, strict=True):
        rows.append({
            "instance_id": example_id, "question": f"q {example_id}", "response": f"r {example_id}",
            "correct_answer": f"gold {example_id}", "correct": verdict,
            "parse_ok": verdict is not None, "extracted_final_answer": f"r {example_id}",
            "reasoning": "compared", "confidence": 90, "raw_judge_output": "correct: yes",
            "error": None if verdict is not None else "HTTP 500 after 5 attempts",
            "hybrid_type": "s2s" if example_id.endswith(("0", "2", "4")) else "parallel",
            **extra,
        })  # fmt: skip
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def sql_row(instance_id: str, match: bool, reason: str, **fields: Any) -> dict[str, Any]:
    row = {
        "instance_id": instance_id, "judge_kind": "s2sql_exec", "match": match,
        "score": float(match), "reason": reason, "agent_sql": "SELECT 1",
        "agent_sql_source": "final_answer_sql_block", "column_precision": 1.0,
        "column_recall": 1.0, "order_sensitive": False, "agent_exec_error": None,
        "gold_exec_error": None, "agent_table": None, "gold_table": None, "db": "shop",
    }  # fmt: skip
    row.update(fields)
    return row
