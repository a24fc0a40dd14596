"""Generated BrowseComp-Plus run directories for the parity tests (deterministic).

The official ``evaluate_run.py`` was run outside this repository on the same directories, with
its Qwen3-32B judge replaced by a stand-in that answers each prompt from the verdicts written
here (``verdicts.jsonl``), in the four-field layout its parser reads; the numbers it printed are
in ``expected/browsecomp_plus.json``. Each scenario draws from ``random.Random(seed)``, so the
same directories come out on every machine.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

#: the marker the stand-in judge finds a query's verdict by (inside the response)
MARKER = "@@QID={}@@"


@dataclass(frozen=True)
class Scenario:
    name: str
    seed: int
    #: share of the queries with a run file
    present: float
    #: share of the run files whose status is not "completed"
    incomplete: float
    #: share whose last result item is not output_text (empty response)
    no_output: float
    #: share of judged ones whose verdict the judge does not give (parse error)
    no_verdict: float
    #: share of judged ones without a confidence
    no_confidence: float
    #: confidences drawn from whole numbers 0..100 (ties) with correctness a function of them
    tied: bool = False
    #: keep only the first N present queries (None: all)
    limit: int | None = None


SCENARIOS = (
    Scenario("full", 1, 1.0, 0.0, 0.0, 0.0, 0.0),
    Scenario("gaps", 2, 0.8, 0.06, 0.04, 0.03, 0.03),
    Scenario("sparse", 3, 0.35, 0.1, 0.05, 0.05, 0.05),
    Scenario("ties", 4, 0.9, 0.02, 0.02, 0.0, 0.0, tied=True),
    Scenario("small", 5, 1.0, 0.05, 0.0, 0.0, 0.0, limit=150),
    Scenario("tiny", 6, 1.0, 0.0, 0.0, 0.0, 0.0, limit=60),
)


def read_qrels(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            qid, _, docid, _ = line.split()
            found.setdefault(qid, []).append(docid)
    return found


def write_gold(evidence: dict[str, list[str]], path: Path) -> None:
    """A stand-in decrypted dataset: the real query ids, invented text."""
    with path.open("w", encoding="utf-8") as handle:
        for qid in evidence:
            handle.write(json.dumps({"query_id": qid, "query": f"question {qid}",
                                     "answer": f"answer {qid}"}) + "\n")


def write_run(scenario: Scenario, evidence: dict[str, list[str]],
              golds: dict[str, list[str]], folder: Path) -> None:
    """One scenario's run directory: ``<qid>.json`` files and ``verdicts.jsonl``."""
    rng = random.Random(scenario.seed)
    folder.mkdir(parents=True, exist_ok=True)
    qids = [q for q in evidence if rng.random() < scenario.present]
    if scenario.limit is not None:
        qids = qids[:scenario.limit]
    verdicts = []
    for qid in qids:
        pool = evidence[qid] + golds.get(qid, [])
        retrieved = sorted({d for d in pool if rng.random() < 0.5}
                           | {str(rng.randrange(1, 100_000)) for _ in range(rng.randrange(30))})
        status = "incomplete" if rng.random() < scenario.incomplete else "completed"
        counts = {"search": rng.randrange(0, 40)}
        if rng.random() < 0.5:
            counts["get_document"] = rng.randrange(0, 6)
        response = (f"Explanation: see [{retrieved[0] if retrieved else '1'}]\n"
                    f"Exact Answer: guess {qid} {MARKER.format(qid)}\nConfidence: 50%")
        result: list[dict[str, object]] = [
            {"type": "tool_call", "tool_name": "search", "output": "[]"}]
        if rng.random() >= scenario.no_output:
            result.append({"type": "output_text", "output": response})
        if scenario.tied:
            confidence: float | None = float(rng.randrange(0, 101))
            correct: bool | None = confidence >= 60
        else:
            confidence = round(rng.uniform(0, 100), 3)
            correct = rng.random() < confidence / 100 * 0.8
        if rng.random() < scenario.no_verdict:
            correct = None
        if rng.random() < scenario.no_confidence:
            confidence = None
        record = {"query_id": qid, "tool_call_counts": counts, "status": status,
                  "retrieved_docids": retrieved, "result": result,
                  "metadata": {"model": "generated"}}
        (folder / f"{qid}.json").write_text(json.dumps(record), encoding="utf-8")
        verdicts.append({"query_id": qid, "correct": correct, "confidence": confidence})
    with (folder / "verdicts.jsonl").open("w", encoding="utf-8") as handle:
        for row in verdicts:
            handle.write(json.dumps(row) + "\n")


def judge_reply(verdict: dict[str, object]) -> str:
    """What the stand-in judge answers for one verdict (the official parser's layout)."""
    lines = ["extracted_final_answer: guess", "reasoning: generated verdict"]
    if verdict["correct"] is not None:
        lines.append(f"correct: {'yes' if verdict['correct'] else 'no'}")
    if verdict["confidence"] is not None:
        lines.append(f"confidence: {verdict['confidence']}")
    return "\n".join(lines)


#: TREC run scenarios: (name, seed, share of queries with lines, lines per query at most,
#: scores rounded to this many decimals: few decimals make ties, which trec_eval breaks by docid)
TREC_SCENARIOS = (("trec-ranked", 11, 1.0, 1200, 6), ("trec-ties", 12, 0.85, 300, 0))


def write_trec(name: str, seed: int, present: float, most: int, decimals: int,
               evidence: dict[str, list[str]], golds: dict[str, list[str]], path: Path) -> None:
    """A TREC run: evidence and gold documents at random depths among random docids."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for qid in evidence:
            if rng.random() >= present:
                continue
            docs = {str(rng.randrange(1, 100_000)) for _ in range(rng.randrange(1, most))}
            docs |= {d for d in evidence[qid] + golds.get(qid, []) if rng.random() < 0.6}
            order = sorted(docs)
            rng.shuffle(order)
            for rank, docid in enumerate(order, 1):
                score = round(rng.uniform(0, 30) if decimals else rng.randrange(0, 8), decimals)
                handle.write(f"{qid} Q0 {docid} {rank} {score} {name}\n")
